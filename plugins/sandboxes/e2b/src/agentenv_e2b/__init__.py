"""agentenv-e2b: the `e2b` sandbox provider. Light on purpose: the `e2b` SDK is imported only where it is used."""

__version__ = "0.1.0"
