"""Checks on tool listings: complete, valid parameter schemas (30) and a match with a declared interface (31)."""

from __future__ import annotations

from typing import Any

from agentenv_validators.results import Row, row

WORLD_TOOLS = frozenset({"get_time"})
"""Tools the world itself adds (the clock's), not declared by any env."""


def _typed(schema: Any) -> bool:
    """The schema says what a value is: a type, a reference, an enum/const, or alternatives that all do."""
    if not isinstance(schema, dict):
        return False
    if any(key in schema for key in ("type", "$ref", "enum", "const")):
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = schema[key]
            return isinstance(options, list) and bool(options) and all(_typed(option) for option in options)
    return False


def meta_problems(schema: dict[str, Any]) -> list[str]:
    """Problems found by validating `schema` against the JSON Schema 2020-12 meta-schema (if jsonschema is here)."""
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError
    except ImportError:  # structural checks only
        return []
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        return [f"not a valid JSON Schema 2020-12 at {where}: {exc.message}"]
    return []


def tool_problems(tool: dict[str, Any]) -> list[str]:
    """What is missing or wrong in one listed tool's description and input schema."""
    problems = []
    description = tool.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("no description")
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return [*problems, "inputSchema is not a JSON object"]
    if schema.get("type") != "object":
        problems.append(f'inputSchema.type is {schema.get("type")!r}, not "object"')
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        problems.append("inputSchema.properties is not an object")
        properties = {}
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            problems.append(f"parameter {name!r}: its schema is not an object")
            continue
        if not _typed(prop):
            problems.append(f"parameter {name!r} has no type")
        if not isinstance(prop.get("description"), str) or not prop["description"].strip():
            problems.append(f"parameter {name!r} has no description")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        problems.append("inputSchema.required is not a list of parameter names")
    else:
        unknown = [r for r in required if r not in properties]
        if unknown:
            problems.append(f"required names parameters that are not in properties: {', '.join(unknown)}")
    problems += meta_problems(schema)
    return problems


def schema_rows(tools: list[dict[str, Any]]) -> list[Row]:
    """One row per tool: passed when its description and parameter schema are complete and valid."""
    rows = []
    names = [str(t.get("name")) for t in tools]
    for tool in tools:
        problems = tool_problems(tool)
        name = str(tool.get("name") or "(unnamed)")
        if names.count(name) > 1:
            problems.append("listed more than once")
        detail = "; ".join(problems) if problems else "description and typed, described parameters"
        rows.append(row(f"tool {name}", not problems, detail))
    return rows


# ---- declared interface ---------------------------------------------------------------------------
def _shape(schema: Any) -> str:
    """A comparable summary of a parameter's type: JSON types, enum values, references."""
    if not isinstance(schema, dict):
        return "?"
    parts: list[str] = []
    kind = schema.get("type")
    if isinstance(kind, list):
        parts += sorted(str(k) for k in kind)
    elif kind is not None:
        parts.append(str(kind))
    if "$ref" in schema:
        parts.append("ref:" + str(schema["$ref"]).rsplit("/", 1)[-1])
    if "enum" in schema:
        parts.append("enum:" + ",".join(sorted(map(repr, schema["enum"]))))
    if "const" in schema:
        parts.append(f"const:{schema['const']!r}")
    if kind == "array" and "items" in schema:
        parts.append(f"items:{_shape(schema['items'])}")
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list):
            parts.append(key + "(" + "|".join(sorted(_shape(s) for s in schema[key])) + ")")
    return " ".join(parts) or "any"


def param_differences(declared: dict[str, Any], served: dict[str, Any]) -> list[str]:
    """How the served tool's parameters differ from the declared ones."""
    want = (declared.get("inputSchema") or {}).get("properties") or {}
    got = (served.get("inputSchema") or {}).get("properties") or {}
    problems = []
    missing = [p for p in want if p not in got]
    extra = [p for p in got if p not in want]
    if missing:
        problems.append(f"missing parameter(s) {', '.join(missing)}")
    if extra:
        problems.append(f"undeclared parameter(s) {', '.join(extra)}")
    for name in want:
        if name in got and _shape(want[name]) != _shape(got[name]):
            problems.append(f"parameter {name!r} is {_shape(got[name])}, declared {_shape(want[name])}")
    want_required = set((declared.get("inputSchema") or {}).get("required") or [])
    got_required = set((served.get("inputSchema") or {}).get("required") or [])
    if want_required != got_required:
        only_declared = sorted(want_required - got_required)
        only_served = sorted(got_required - want_required)
        text = []
        if only_declared:
            text.append(f"declared required but optional when served: {', '.join(only_declared)}")
        if only_served:
            text.append(f"required when served but declared optional: {', '.join(only_served)}")
        problems.append("; ".join(text))
    return problems


def conformance_rows(served: list[dict[str, Any]], declared: list[dict[str, Any]]) -> list[Row]:
    """One row per declared tool (served and matching), one per undeclared served tool."""
    by_name = {str(t.get("name")): t for t in served}
    rows = []
    for tool in declared:
        name = str(tool.get("name"))
        if name not in by_name:
            rows.append(row(f"tool {name}", False, "declared but not served"))
            continue
        problems = param_differences(tool, by_name[name])
        rows.append(row(f"tool {name}", not problems, "; ".join(problems) or "served as declared"))
    declared_names = {str(t.get("name")) for t in declared}
    for name in by_name:
        if name not in declared_names and name not in WORLD_TOOLS:
            rows.append(row(f"tool {name}", False, "served but not declared by any env"))
    return rows


def declared_tools(classes: list[tuple[type, Any]]) -> list[dict[str, Any]]:
    """The tool listing a world of these env classes declares (the kernel's naming of shared tool names)."""
    from agentenv_runtime import World

    world = World([cls(settings) for cls, settings in classes])
    return [t for t in world.list_tools() if t["name"] not in WORLD_TOOLS]


def tools_from_document(document: Any, source: str) -> list[dict[str, Any]]:
    """Tools from a spec file: a list of tools, `{"tools": [...]}`, or an Environment Card."""
    if isinstance(document, dict) and isinstance(document.get("capabilities"), dict):
        document = document["capabilities"].get("tools")
    elif isinstance(document, dict) and "tools" in document:
        document = document["tools"]
    if not isinstance(document, list) or not all(isinstance(t, dict) and t.get("name") for t in document):
        raise ValueError(
            f"{source}: expected a list of tools ({{name, description, inputSchema}}), an object with `tools`, "
            "or an Environment Card"
        )
    return document
