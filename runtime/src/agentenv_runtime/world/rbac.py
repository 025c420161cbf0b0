"""Role-based tool access. A tool outside a role is never listed for it and is refused when called."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SYSTEM_ROLE = "system"
"""The role world rules act as; it may call every tool."""
DEFAULT_ROLE = "default"


class UnknownRole(LookupError):
    """A role the world does not define; the message names it and the roles that are defined."""


@dataclass
class RoleAccess:
    allow_all: bool = True
    allow: set[str] = field(default_factory=set)
    deny: set[str] = field(default_factory=set)

    def permits(self, tool: str) -> bool:
        return tool not in self.deny and (self.allow_all or tool in self.allow)


class Rbac:
    """Roles given as `{role: {"tools": ["*"] | [names], "deny": [names]}}`; `default` sees everything."""

    def __init__(self, roles: dict[str, Any] | None = None) -> None:
        self.roles: dict[str, RoleAccess] = {DEFAULT_ROLE: RoleAccess()}
        for role, spec in (roles or {}).items():
            self.define(role, spec.get("tools", ["*"]), spec.get("deny", []))

    def define(self, role: str, tools: Iterable[str], deny: Iterable[str] = ()) -> None:
        names = set(tools)
        self.roles[role] = RoleAccess("*" in names, names - {"*"}, set(deny))

    def permits(self, role: str, tool: str) -> bool:
        if role == SYSTEM_ROLE:
            return True
        access = self.roles.get(role)
        return access is not None and access.permits(tool)

    def unknown(self, role: str) -> str | None:
        """Why `role` cannot be used here (it is not defined, with the roles that are), or None when it can."""
        if role in self.roles or role == SYSTEM_ROLE:
            return None
        return f"no role {role!r} in this world (roles: {', '.join(sorted(self.roles))}); name one of them"

    def change(self, role: str, *, enable: Iterable[str] = (), disable: Iterable[str] = ()) -> None:
        """Mid-run access change of a defined role. An unknown role is refused (`UnknownRole`), as a request
        naming one is: creating it with no tools would serve a typo 0 tools without a word, and the reference
        would serve it every tool; roles are made with `define` (the world's `roles`)."""
        if (problem := self.unknown(role)) is not None:
            raise UnknownRole(problem)
        access = self.roles.setdefault(role, RoleAccess(allow_all=False))
        for tool in enable:
            access.deny.discard(tool)
            access.allow.add(tool)
        for tool in disable:
            access.allow.discard(tool)
            access.deny.add(tool)

    def state(self) -> dict[str, Any]:
        return {
            role: {"tools": sorted(a.allow | ({"*"} if a.allow_all else set())), "deny": sorted(a.deny)}
            for role, a in self.roles.items()
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.roles = {}
        for role, spec in state.items():
            self.define(role, spec["tools"], spec["deny"])
