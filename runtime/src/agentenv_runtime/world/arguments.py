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
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode text); send well-formed UTF-8"
    return None


def argument_problem(arguments: Any, limits: ArgumentLimits = DEFAULT_LIMITS) -> dict[str, Any] | None:
    """The first problem in `arguments` as an `invalid_arguments` error naming the field, or None."""
    stack: list[tuple[Any, str, int]] = [(arguments, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            problem = _string_problem(value, limits)
            if problem:
                return _error(path or "arguments", problem)
        elif isinstance(value, dict | list):
            if depth > limits.max_depth:
                return _error(path or "arguments", f"nested deeper than {limits.max_depth} levels")
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str) and (problem := _string_problem(key, limits)):
                    return _error(f"{path}.<key>" if path else "<key>", f"a key {problem}")
                stack.append((item, f"{path}.{safe_text(str(key))}" if path else safe_text(str(key)), depth + 1))
    return None


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
