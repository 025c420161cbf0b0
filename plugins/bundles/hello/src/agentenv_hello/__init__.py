"""agentenv-hello: the first bundle to run (`agentenv run hello`); it declares every plugin it needs."""

__version__ = "0.1.0"
