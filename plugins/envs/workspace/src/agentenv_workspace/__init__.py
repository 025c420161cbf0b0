"""agentenv-workspace: an env whose state is a working directory in a sandbox, with code-test verifiers.

Kept import-free so plugin discovery stays fast; the env lives in `agentenv_workspace.env`.
"""

__version__ = "0.1.0"
