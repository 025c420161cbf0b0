"""The name verifiers' `vf-eval` loads: `vf-eval agentenv-vf --env.taskset.bundle support-refund`.

verifiers imports a taskset id as a top-level module and takes the one Taskset subclass in its `__all__`; the
integration itself is `agentenv_rl.api.AgentEnvTaskset`."""

from agentenv_rl.api import AgentEnvTaskset

__all__ = ["AgentEnvTaskset"]
