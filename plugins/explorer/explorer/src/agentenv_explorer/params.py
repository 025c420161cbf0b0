"""Query parameters read strictly: an unknown name or a malformed value is a 400 that names it and the fix."""

from __future__ import annotations

from collections.abc import Mapping

from agentenv_explorer.errors import bad_request

MAX_LIMIT = 500


def check_names(query: Mapping[str, str], allowed: set[str]) -> None:
    unknown = sorted(set(query) - allowed)
    if unknown:
        raise bad_request(f"unknown query parameter {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}")


def whole(query: Mapping[str, str], name: str, default: int, *, low: int = 0, high: int | None = None) -> int:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f"{name}={text!r} is not a whole number") from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise bad_request(f"{name}={value} is out of range: give a number {bound}")
    return value


def paging(query: Mapping[str, str], default_limit: int = 50) -> tuple[int, int]:
    """(offset, limit) from `offset` and `limit`."""
    return whole(query, "offset", 0), whole(query, "limit", default_limit, low=1, high=MAX_LIMIT)


def flag(query: Mapping[str, str], name: str) -> bool | None:
    text = query.get(name)
    if text is None or text == "":
        return None
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise bad_request(f"{name}={text!r} is not a boolean: give true or false")
