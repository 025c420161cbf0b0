"""agentenv-openenv: an agentenv task served on the OpenEnv wire format (`agentenv openenv serve`)."""

__version__ = "0.1.0"
