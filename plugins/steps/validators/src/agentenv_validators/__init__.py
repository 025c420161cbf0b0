"""agentenv-validators: steps that check an env is well built, and the `agentenv env validate` command."""

__version__ = "0.1.0"
