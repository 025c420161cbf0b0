"""Entry point of the `slack` plugin: registers `SlackEnv`."""

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[type]:
    from agentenv_slack.env import SlackEnv

    return [SlackEnv]
