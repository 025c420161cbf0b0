"""Entry-point module: registers the helpdesk env with agentenv."""

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[type]:
    from agentenv_helpdesk.env import HelpdeskEnv

    return [HelpdeskEnv]
