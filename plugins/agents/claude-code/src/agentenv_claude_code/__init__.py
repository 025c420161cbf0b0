"""The `claude-code` agent kind: the real Claude Code CLI acting in a world through its MCP tools.

Kept free of imports so loading the plugin costs nothing; the kind is `agentenv_claude_code.agent.ClaudeCodeAgent`.
"""

__version__ = "0.1.0"
