"""The kernel's own contributions, registered through the same hooks as any plugin's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentenv.hookspecs import hookimpl

if TYPE_CHECKING:
    from agentenv.contracts import TriggerKind


@hookimpl
def agentenv_register_trigger_kinds() -> list[type[TriggerKind]]:
    from agentenv.world.triggers import BUILTIN_TRIGGER_KINDS

    return list(BUILTIN_TRIGGER_KINDS)
