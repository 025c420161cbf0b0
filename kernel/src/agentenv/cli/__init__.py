"""The `agentenv` command line."""
