"""The runtime's commands (`agentenv run`, `runs`, `env`, …), one module each, imported only to run it.

Before any of them defines a pydantic model, pydantic is told it has no plugins when none is installed, which
spares it reading every distribution's entry points (see `agentenv_runtime.pydantic_plugins`).
"""

from agentenv_runtime.pydantic_plugins import skip_empty_plugin_scan

skip_empty_plugin_scan()
