"""Entry module of agentenv-browser: registers the `browser` env (playwright loads only when a tool runs)."""

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_envs() -> list[Any]:
    from agentenv.contracts import ClassRef

    return [ClassRef("browser", "agentenv_browser.env:BrowserEnv")]
