"""agentenv-a2a: drive remote A2A agents (`a2a` agent kind) and serve agentenv agents over A2A.

Light on purpose: nothing here imports the a2a SDK. See `agentenv_a2a.agent` and `agentenv_a2a.server`.
"""

__version__ = "0.1.0"
