"""agentenv-slack: a simulated Slack workspace (users, channels, threads, reactions, DMs, search).

Kept light on purpose: the env class is imported by the plugin hook only when envs are registered.
"""

__version__ = "0.1.0"
