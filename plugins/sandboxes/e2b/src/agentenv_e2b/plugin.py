"""Entry module of `agentenv-e2b`: registers the `e2b` sandbox provider (the SDK is not imported here)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_sandbox_providers() -> list[type[Any]]:
    """`e2b`: E2B microVMs created from templates."""
    from agentenv_e2b.provider import E2BProvider

    return [E2BProvider]
