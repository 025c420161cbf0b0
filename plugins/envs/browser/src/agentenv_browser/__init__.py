"""agentenv-browser: a real browser (Debian Chromium via playwright) as an env of a world."""

__version__ = "0.1.0"
