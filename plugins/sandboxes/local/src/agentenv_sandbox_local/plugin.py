"""Entry module of `agentenv-sandbox-local`: registers the local sandbox providers."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[Any]:
    """`inline`: a private work folder on this host; `process`: the spec's command as a subprocess there."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("inline", "agentenv_sandbox_local.inline:InlineProvider"),
        ClassRef("process", "agentenv_sandbox_local.process:ProcessProvider"),
    ]
