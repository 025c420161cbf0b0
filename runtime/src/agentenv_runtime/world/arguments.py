"""Checks on tool arguments that no schema expresses: text that cannot be stored or sent, and size bounds.

A lone surrogate (`"\\ud800"`) is a valid JSON escape but not text: it cannot be encoded as UTF-8, so one
in a recorded call made the served trajectory unreadable and broke the MCP session that carried it. A NUL
character breaks SQLite full-text queries and C-string APIs downstream. Both are refused before a tool
runs. Deep nesting and huge strings are bounded too, so no caller can make validation or recording cost
more than the limits allow. The walk is iterative: a deeply nested value cannot exhaust the stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArgumentLimits:
    """Bounds on one call's arguments; the gateway sets them from its `[plugins.agentenv-gateway.limits]`."""

    max_depth: int = 64
    """Nesting of objects and lists inside the arguments object."""
    max_string: int = 1_000_000
    """Characters in one string (keys included)."""


DEFAULT_LIMITS = ArgumentLimits()


def text_problem(text: str) -> str | None:
    """Why `text` cannot be an argument (NUL, lone surrogate), or None."""
    if "\x00" in text:
        return "contains a NUL character (U+0000); remove it"
    if text.isascii():  # the usual case: no surrogate can be in it (a constant-time check in CPython)
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode text); send well-formed UTF-8"
    return None


Trail = tuple["Trail", Any] | None
"""Where a value sits: (the parent's trail, its key or index); None for the arguments object itself. Built as
the walk goes (one tuple per value) and spelled out only for an error."""


def argument_problem(arguments: Any, limits: ArgumentLimits = DEFAULT_LIMITS) -> dict[str, Any] | None:
    """The first problem in `arguments` as an `invalid_arguments` error naming the field, or None."""
    stack: list[tuple[Any, Trail, int]] = [(arguments, None, 0)]
    while stack:
        value, trail, depth = stack.pop()
        if isinstance(value, str):
            problem = _string_problem(value, limits)
            if problem:
                return _error(_path(trail) or "arguments", problem)
        elif isinstance(value, dict | list):
            if depth > limits.max_depth:
                return _error(_path(trail) or "arguments", f"nested deeper than {limits.max_depth} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and (problem := _string_problem(key, limits)):
                    path = _path(trail)
                    return _error(f"{path}.<key>" if path else "<key>", f"a key {problem}")
                stack.append((item, (trail, key), depth + 1))
    return None


def _path(trail: Trail) -> str:
    """`a.b.0`: the keys and indexes of a trail, outermost first, as text that may be echoed back."""
    keys = []
    while trail is not None:
        trail, key = trail
        keys.append(safe_text(str(key)))
    return ".".join(reversed(keys))


def _string_problem(text: str, limits: ArgumentLimits) -> str | None:
    if len(text) > limits.max_string:
        return f"longer than {limits.max_string} characters"
    return text_problem(text)


def _error(field: str, message: str) -> dict[str, Any]:
    return {
        "code": "invalid_arguments",
        "message": f"{field}: {message}",
        "field": field,
        "errors": [{"field": field, "message": message}],
    }


def safe_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD: what may be recorded or echoed back."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def safe_value(value: Any, depth: int = 0) -> Any:
    """A JSON value with lone surrogates replaced in every string (recorded in place of refused arguments);
    what is nested deeper than the default limit is recorded as a marker, never walked."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict | list) and depth > DEFAULT_LIMITS.max_depth:
        return "<nested too deep>"
    if isinstance(value, dict):
        return {safe_text(str(k)): safe_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_value(v, depth + 1) for v in value]
    return value
