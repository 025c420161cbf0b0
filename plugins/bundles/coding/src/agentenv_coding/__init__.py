"""agentenv-coding: the `coding` bundle, coding tasks on small repositories written for it."""

__version__ = "0.1.0"
