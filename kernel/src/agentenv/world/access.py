"""How an in-process agent reaches a world: the role's tool list and calls through every world rule."""

from __future__ import annotations

from typing import Any

from agentenv.world.world import World


class WorldToolAccess:
    """`agentenv.contracts.ToolAccess` over an in-process world, as one role."""

    def __init__(self, world: World, role: str = "default") -> None:
        self.world = world
        self.role = role

    def list_tools(self) -> list[dict[str, Any]]:
        return self.world.list_tools(self.role)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`{"ok": true, "result": …}` or `{"ok": false, "error": {"code", "message", …}}`."""
        return self.world.call(name, arguments, role=self.role).to_dict()
