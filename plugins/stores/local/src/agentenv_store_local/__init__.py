"""Local store backends for agentenv: SQLite documents, filesystem objects, env/file secrets, local images.

Kept light on purpose: the backends are imported by the plugin's registration hook, not here.
"""

__version__ = "0.1.0"
