"""agentenv: build simulated worlds for AI agents once, then host many tasks and any agent in them.

This module stays import-free on purpose: `agentenv --help` and `--version` must start fast.
"""

__version__ = "0.1.0"
