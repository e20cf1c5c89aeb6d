from nassau.cli import main

raise SystemExit(main())
