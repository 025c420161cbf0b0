"""Entry-point module of agentenv-email: registers the `email` env with the kernel."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [
        ClassRef("email", "agentenv_email.env:EmailEnv"),
    ]
