"""agentenv-rl: tasks as training environments (reset/step/fork episodes), trainer adapters and export.

The public surface is `agentenv_rl.api`; other plugins (the OpenEnv server, the Ray runner) import only that.
"""

__version__ = "0.1.0"
