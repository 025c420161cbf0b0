"""Tool descriptions in a composed world, with the names composition gave.

Two envs that share a tool name both get `<env>_<tool>`; a description written for the env alone ("find the id
with search_messages first") would send an agent to a name that no longer exists. The descriptions an agent
reads (the tool's, and each parameter's) name an env's renamed tools as the world does.
"""

from __future__ import annotations

import re
from typing import Any


def renamer(renames: dict[str, str]) -> re.Pattern[str] | None:
    """A pattern matching each old name as a whole word (not inside `notes_get_item` or `get_item_v2`)."""
    if not renames:
        return None
    names = "|".join(re.escape(name) for name in sorted(renames, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{names})(?!\w)")


def with_names(described: dict[str, Any], renames: dict[str, str], pattern: re.Pattern[str]) -> dict[str, Any]:
    """`described` (an MCP tool description) with every description text naming tools as `renames` says; the
    input is left untouched (schemas are cached and shared)."""

    def text(value: str) -> str:
        return pattern.sub(lambda match: renames[match.group(0)], value)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: text(v) if k == "description" and isinstance(v, str) else walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    renamed: dict[str, Any] = walk(described)
    return renamed
