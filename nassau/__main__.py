from nassau.cli.entry import main

raise SystemExit(main())
