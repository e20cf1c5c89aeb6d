"""The `nassau` command line: `entry.main` (the console script), one module per command group over the API, and
`common` (what every command shares). A command module imports no other command module."""
