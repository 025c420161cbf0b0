"""agentenv-miniwob: MiniWoB++'s task pages (the `miniwob` wheel) in a real browser, graded by the pages' own reward."""

__version__ = "0.1.0"
