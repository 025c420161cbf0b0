"""Entry module of `agentenv-e2b`: registers the `e2b` sandbox provider (the SDK is not imported here)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[Any]:
    """`e2b`: E2B microVMs created from templates."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("e2b", "agentenv_e2b.provider:E2BProvider"),
    ]
