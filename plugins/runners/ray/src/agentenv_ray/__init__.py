"""agentenv-ray: rollouts and batched episodes on a Ray cluster."""

__version__ = "0.1.0"
