"""Entry module of `agentenv-sandbox-local`: registers the local sandbox providers."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[type[Any]]:
    """`inline`: a private work folder on this host; `process`: the spec's command as a subprocess there."""
    from agentenv_sandbox_local.inline import InlineProvider
    from agentenv_sandbox_local.process import ProcessProvider

    return [InlineProvider, ProcessProvider]
