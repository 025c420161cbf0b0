"""Entry-point module of agentenv-email: registers the `email` env with the kernel."""

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[type]:
    from agentenv_email.env import EmailEnv

    return [EmailEnv]
