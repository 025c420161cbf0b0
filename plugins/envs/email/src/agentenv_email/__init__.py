"""agentenv-email: a simulated email app (mailboxes, threads, labels, search) for agentenv worlds.

Kept light on purpose: the env class is imported by the plugin hook only when the kernel asks for it.
"""

__version__ = "0.1.0"
