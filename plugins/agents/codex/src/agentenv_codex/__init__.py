"""The `codex` agent kind: the real Codex CLI acting in a world through its MCP tools.

Kept free of imports so loading the plugin costs nothing; the kind is `agentenv_codex.agent.CodexAgent`.
"""

__version__ = "0.1.0"
