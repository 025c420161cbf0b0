"""Entry-point module: registers the helpdesk env with agentenv."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("helpdesk", "agentenv_helpdesk.env:HelpdeskEnv"),
    ]
