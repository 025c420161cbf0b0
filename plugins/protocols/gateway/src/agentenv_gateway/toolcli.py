"""Command-line options generated from a tool's JSON Schema (for `agentenv tools URL TOOL --arg value`).

Each property becomes `--name` (underscores may be written as dashes). Values are coerced from the schema:
integer, number, boolean (`--flag`, `--flag false`, `--no-flag`), array (repeat the option, or one JSON
array), object (JSON). Nullable types (`anyOf [T, null]`) take T; `$ref`s resolve in the schema's `$defs`.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off"}


class ArgError(ValueError):
    """A command-line value that does not fit the tool's schema; the message names the option."""


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return dict(root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {}))
    return schema


def effective_type(schema: dict[str, Any], root: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the JSON type a value is parsed as, the sub-schema that type came from)."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        options = [_resolve(s, root) for s in schema.get(key, [])]
        concrete = [s for s in options if s.get("type") != "null"]
        if concrete:
            return effective_type(concrete[0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind is None:
        kind = "object" if "properties" in schema else ("string" if "enum" in schema else "json")
    return str(kind), schema


def _coerce(option: str, kind: str, schema: dict[str, Any], raw: str, root: dict[str, Any]) -> Any:
    try:
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            if raw.lower() in TRUE:
                return True
            if raw.lower() in FALSE:
                return False
            raise ValueError(f"expected true or false, got {raw!r}")
        if kind in ("object", "json"):
            return json.loads(raw)
        if kind == "array":
            item_kind, item_schema = effective_type(schema.get("items", {}), root)
            return _coerce(option, item_kind, item_schema, raw, root)
        return raw
    except json.JSONDecodeError as exc:
        raise ArgError(f"--{option}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:
        raise ArgError(f"--{option}: expected {kind}, got {raw!r} ({exc})") from None


def parse_tool_args(schema: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    """`["--ticket-id", "T-1", "--public"]` → {"ticket_id": "T-1", "public": True}, typed by `schema`."""
    properties: dict[str, Any] = schema.get("properties", {})
    by_option = {name.replace("_", "-"): name for name in properties} | {name: name for name in properties}
    arguments: dict[str, Any] = {}
    index = 0
    while index < len(argv):
        token = argv[index]
        index += 1
        if not token.startswith("--"):
            raise ArgError(f"unexpected value {token!r}; give every argument as --name value")
        option, has_inline, inline = token[2:].partition("=")
        negated = option.startswith("no-") and option not in by_option and option[3:] in by_option
        name = by_option.get(option[3:] if negated else option)
        if name is None:
            known = ", ".join(f"--{n.replace('_', '-')}" for n in properties) or "none"
            raise ArgError(f"unknown option --{option} (options: {known})")
        kind, sub = effective_type(properties[name], schema)
        if kind == "boolean":
            if negated:
                arguments[name] = False
            elif has_inline:
                arguments[name] = _coerce(name, kind, sub, inline, schema)
            elif index < len(argv) and argv[index].lower() in TRUE | FALSE:
                arguments[name] = _coerce(name, kind, sub, argv[index], schema)
                index += 1
            else:
                arguments[name] = True
            continue
        if negated:
            raise ArgError(f"--no-{option[3:]} only works for true/false options")
        if has_inline:
            raw = inline
        elif index < len(argv):
            raw = argv[index]
            index += 1
        else:
            raise ArgError(f"--{option} needs a value")
        if kind == "array":
            if raw.lstrip().startswith("["):
                try:
                    value = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise ArgError(f"--{option}: not a valid JSON array ({exc.msg})") from None
                if not isinstance(value, list):
                    raise ArgError(f"--{option}: expected a JSON array")
                arguments.setdefault(name, []).extend(value)
            else:
                arguments.setdefault(name, []).append(_coerce(name, kind, sub, raw, schema))
        else:
            arguments[name] = _coerce(name, kind, sub, raw, schema)
    missing = [n for n in schema.get("required", []) if n not in arguments]
    if missing:
        raise ArgError("missing required " + ", ".join(f"--{n.replace('_', '-')}" for n in missing))
    return arguments


def tool_help(tool: dict[str, Any], base: str) -> str:
    """The generated `--help` of one tool: usage, description, one line (or more) per option."""
    schema = tool.get("inputSchema", {})
    required = set(schema.get("required", []))
    lines = [f"Usage: agentenv tools --url {base} {tool['name']} [OPTIONS]", ""]
    if tool.get("description"):
        lines += [textwrap.fill(tool["description"], 100, initial_indent="  ", subsequent_indent="  "), ""]
    lines.append("Options:")
    for name, prop in schema.get("properties", {}).items():
        kind, sub = effective_type(prop, schema)
        label = {"array": "VALUE ... (repeat, or a JSON array)", "object": "JSON", "json": "JSON"}.get(
            kind, kind.upper()
        )
        if kind == "boolean":
            label = f"/ --no-{name.replace('_', '-')}"
        notes = []
        if name in required:
            notes.append("required")
        enum = sub.get("enum") or prop.get("enum")
        if enum:
            notes.append("one of: " + ", ".join(map(str, enum)))
        if "default" in prop and prop["default"] is not None:
            notes.append(f"default: {json.dumps(prop['default'])}")
        text = prop.get("description") or sub.get("description") or ""
        if notes:
            text = f"{text} [{'; '.join(notes)}]".strip()
        lines.append(f"  --{name.replace('_', '-')} {label}")
        if text:
            lines.append(textwrap.fill(text, 100, initial_indent="      ", subsequent_indent="      "))
    if not schema.get("properties"):
        lines.append("  (this tool takes no arguments)")
    return "\n".join(lines)
