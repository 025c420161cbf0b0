"""`python -m agentenv` runs the CLI (used after installs, when the console script may be stale)."""

from agentenv.cli.main import main

raise SystemExit(main())
