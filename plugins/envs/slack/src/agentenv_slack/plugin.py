"""Entry point of the `slack` plugin: registers `SlackEnv`."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("slack", "agentenv_slack.env:SlackEnv"),
    ]
