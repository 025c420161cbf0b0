"""Entry-point module: registers the retail env with agentenv."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("retail", "agentenv_retail.env:RetailEnv")]
