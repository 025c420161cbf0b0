"""agentenv-web-desk: the `web-desk` bundle, support-desk tasks done through a real browser on the desk's website."""

__version__ = "0.1.0"
