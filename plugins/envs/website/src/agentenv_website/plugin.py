"""Entry module of agentenv-website: registers the `website` env (nothing starts until a world is deployed)."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("website", "agentenv_website.env:WebsiteEnv")]
