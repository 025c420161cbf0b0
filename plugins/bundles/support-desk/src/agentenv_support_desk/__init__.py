"""Bundles for the support-desk world; see `agentenv run` with no argument."""

__version__ = "0.1.0"
