"""`python -m agentenv` runs the CLI (used after installs, when the console script may be stale)."""

from agentenv.cli.main import entry_point

raise SystemExit(entry_point())
