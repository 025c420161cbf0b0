"""`{{ dotted.path }}` templates over a context of named values.

Used wherever a file written ahead of time must refer to values only known while it runs: a scripted
policy's tool arguments refer to earlier tool results (`{{ orders.0.order_id }}`), and steps refer to
earlier step outputs the same way.

Rules:
- A string that is exactly one template (`"{{ account }}"`, surrounding spaces allowed) is replaced by the
  value itself, keeping its type (a number stays a number, a dict stays a dict).
- Templates inside longer text are interpolated as text: strings as they are, anything else as JSON
  (`true`, `null`, `89.99`, `{"a": 1}`).
- A path is names separated by dots. The first names a value in the context; each further part is a
  dict key or a list index (`orders.0.order_id`; negative indexes count from the end).
- Dicts and lists are rendered recursively; keys are never templated.

Every problem raises `TemplateError` naming where in the value it is, the template, and what exists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*")
_MAX_LISTED = 20


class TemplateError(ValueError):
    """A template that cannot be parsed or resolved; the message says where, which template and why."""


def template_paths(value: Any, where: str = "") -> list[tuple[str, str]]:
    """Every template path in `value` (recursively) as `(location, path)`, checking the syntax.

    Lets a file be validated before it runs: the caller can check each path's first name against
    the names that will exist by then.
    """
    found: list[tuple[str, str]] = []
    for location, text in _strings(value, where):
        found.extend((location, path) for path in _paths_in(text, location))
    return found


def render(value: Any, context: Mapping[str, Any], where: str = "") -> Any:
    """`value` with every template replaced from `context` (see the module docstring for the rules)."""
    if isinstance(value, str):
        return _render_text(value, context, where)
    if isinstance(value, Mapping):
        return {key: render(item, context, _join(where, str(key))) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [render(item, context, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def resolve(path: str, context: Mapping[str, Any]) -> Any:
    """The value at `path` (`name.key.0.key`) in `context`; `TemplateError` says which part is missing."""
    root, *parts = path.split(".")
    if root not in context:
        raise TemplateError(f"unknown name {root!r} (available: {_listing(context)})")
    value = context[root]
    walked = root
    for part in parts:
        if isinstance(value, Mapping):
            if part not in value:
                raise TemplateError(f"{walked} has no key {part!r} (keys: {_listing(value)})")
            value = value[part]
        elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
            try:
                index = int(part)
            except ValueError:
                raise TemplateError(f"{walked} is a list; index it with a number, not {part!r}") from None
            if not -len(value) <= index < len(value):
                raise TemplateError(f"{walked} has {len(value)} item(s); index {index} is out of range")
            value = value[index]
        else:
            shown = json.dumps(value, default=str)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise TemplateError(f"{walked} is {type(value).__name__} {shown}; it has no part {part!r}")
        walked = f"{walked}.{part}"
    return value


def as_text(value: Any) -> str:
    """How a value reads inside text: strings as they are, everything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _render_text(text: str, context: Mapping[str, Any], where: str) -> Any:
    paths = _paths_in(text, where)
    if not paths:
        return text
    whole = _TEMPLATE.fullmatch(text.strip())
    if whole is not None and len(paths) == 1:
        return _resolve_at(paths[0], context, where)

    def substitute(match: re.Match[str]) -> str:
        return as_text(_resolve_at(match.group(1).strip(), context, where))

    return _TEMPLATE.sub(substitute, text)


def _resolve_at(path: str, context: Mapping[str, Any], where: str) -> Any:
    try:
        return resolve(path, context)
    except TemplateError as exc:
        raise TemplateError(f"{_here(where)}template '{{{{ {path} }}}}': {exc}") from None


def _paths_in(text: str, where: str) -> list[str]:
    paths = []
    for match in _TEMPLATE.finditer(text):
        path = match.group(1).strip()
        if not _PATH.fullmatch(path):
            raise TemplateError(
                f"{_here(where)}template {match.group(0)!r} is not a dotted path "
                "(write names, keys and list indexes separated by dots, e.g. '{{ orders.0.order_id }}')"
            )
        paths.append(path)
    leftover = _TEMPLATE.sub("", text)
    if "{{" in leftover:
        raise TemplateError(f"{_here(where)}'{{{{' without a closing '}}}}' in {text!r}")
    return paths


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, _join(where, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _strings(item, f"{where}[{index}]")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _here(where: str) -> str:
    return f"{where}: " if where else ""


def _listing(names: Mapping[Any, Any]) -> str:
    keys = sorted(str(key) for key in names)
    if not keys:
        return "none"
    more = f", … {len(keys) - _MAX_LISTED} more" if len(keys) > _MAX_LISTED else ""
    return ", ".join(keys[:_MAX_LISTED]) + more
