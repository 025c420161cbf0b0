"""Local sandbox providers for agentenv (`inline`).

Kept light on purpose: the providers are imported by the plugin's registration hook, not here.
"""

__version__ = "0.1.0"
