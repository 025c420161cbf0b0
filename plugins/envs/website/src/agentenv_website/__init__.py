"""agentenv-website: a web application as an env of a world (in-process app, command, Docker image or URL)."""

__version__ = "0.1.0"
