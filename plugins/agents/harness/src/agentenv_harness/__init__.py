"""What the coding-agent harness kinds (`claude-code`, `codex`) share.

Kept free of imports; the public names live in `agentenv_harness.api`.
"""

__version__ = "0.1.0"
