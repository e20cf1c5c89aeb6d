from nassau.cli.main import main

raise SystemExit(main())
