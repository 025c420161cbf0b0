"""Python signatures from a tool's JSON Schema, for frameworks that read tools from Python functions.

TRL (through transformers' `get_json_schema`) and the MCP SDK that verifiers 0.4 serves tools with both derive a
tool's schema from a function's type hints; this is the one translation from our schemas to such hints.
"""

from __future__ import annotations

import inspect
import keyword
import types
from typing import Any, Literal

from agentenv_rl.split import EpisodeError

SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def python_type(schema: dict[str, Any]) -> Any:
    """The Python type hint whose JSON Schema (as transformers derives it) matches `schema`, as near as hints go."""
    if "enum" in schema and all(isinstance(v, str | int | float | bool) for v in schema["enum"]):
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if isinstance(kind, list):
        members = [python_type({**schema, "type": k}) for k in kind]
        union = members[0]
        for member in members[1:]:
            union = union | member
        return union
    if kind == "array":
        items = schema.get("items")
        return types.GenericAlias(list, (python_type(items),)) if isinstance(items, dict) and items else list
    if kind == "object":
        return dict
    if kind in SCALARS:
        return SCALARS[kind]
    for combined in ("anyOf", "oneOf"):
        if isinstance(schema.get(combined), list) and schema[combined]:
            return python_type({"type": [s.get("type", "string") for s in schema[combined]]})
    return str


def keyword_parameters(tool: dict[str, Any], reserved: frozenset[str] = frozenset()) -> list[inspect.Parameter]:
    """The tool's arguments as keyword-only parameters (required ones first, optional ones default to None).

    A tool or argument name that cannot be a Python identifier (or is in `reserved`) raises `EpisodeError`
    naming the fix."""
    name = tool["name"]
    schema = tool["inputSchema"]
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    bad = [p for p in properties if not p.isidentifier() or keyword.iskeyword(p)]
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in reserved or bad:
        raise EpisodeError(
            f"tool {name!r} cannot be a Python function (names must be identifiers, not private or one of "
            f"{sorted(reserved)}; arguments {bad}); trim it with make(…, tools=[…]) or rename it"
        )
    parameters = []
    for prop in sorted(properties, key=lambda p: p not in required):  # required ones first: defaults come last
        hint = python_type(properties[prop])
        if prop in required:
            parameters.append(inspect.Parameter(prop, inspect.Parameter.KEYWORD_ONLY, annotation=hint))
        else:
            parameters.append(
                inspect.Parameter(prop, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint | None)
            )
    return parameters


def docstring(tool: dict[str, Any]) -> str:
    """A Google-style docstring: the tool's description, then one `name: description` line per argument."""
    properties: dict[str, Any] = tool["inputSchema"].get("properties", {})
    lines = [" ".join(str(tool.get("description") or tool["name"]).split()), "", "Args:"]
    for name, prop in properties.items():
        lines.append(f"    {name}: {' '.join(str(prop.get('description') or name).split())}")
    return "\n".join(lines if properties else lines[:1])
