"""The OpenAPI 3.1 document of the REST surface, generated from the caller's tools.

One path per tool (`POST /rest/tools/{tool}`), its request body the tool's input schema. Tool schemas
may carry `$defs` with local `#/$defs/X` references; those resolve against the document root in an
OpenAPI file, so they move to `components/schemas` under a per-tool prefix and the refs are rewritten.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from agentenv_gateway import __version__

REST_PREFIX = "/rest/tools"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"const": False},
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": "string"},
                "errors": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                    },
                },
            },
            "required": ["code", "message"],
        },
    },
    "required": ["ok", "error"],
}
SUCCESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"const": True}, "result": {}},
    "required": ["ok", "result"],
}
TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "inputSchema": {"type": "object"},
    },
    "required": ["name", "inputSchema"],
}
ERROR_STATUSES = {
    "400": "Invalid arguments or malformed JSON: the body does not fit the input schema (nothing changed).",
    "403": "The caller's role may not call this tool (nothing changed).",
    "404": "No such tool in this world.",
    "413": "Request body larger than 1 MiB.",
    "422": "The app refused the call under its rules (nothing changed); the error says what to fix.",
}


def _component_name(tool: str, name: str) -> str:
    return _UNSAFE.sub("_", f"{tool}.{name}")


def _relocate(schema: dict[str, Any], tool: str, components: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` with its `$defs` moved into `components` and `#/$defs/…` refs rewritten."""
    schema = copy.deepcopy(schema)
    defs = schema.pop("$defs", {})

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                node["$ref"] = f"#/components/schemas/{_component_name(tool, ref.removeprefix('#/$defs/'))}"
            for value in node.values():
                rewrite(value)
        elif isinstance(node, list):
            for item in node:
                rewrite(item)
        return node

    for name, definition in defs.items():
        components[_component_name(tool, name)] = rewrite(definition)
    rewritten: dict[str, Any] = rewrite(schema)
    return rewritten


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def build_openapi(
    tools: list[dict[str, Any]], *, title: str, description: str = "", server_url: str = "", auth: bool = False
) -> dict[str, Any]:
    components: dict[str, Any] = {"schemas": {"ToolError": ERROR_SCHEMA, "ToolResult": SUCCESS_SCHEMA}}
    error_ref = {"$ref": "#/components/schemas/ToolError"}
    common_errors = {"413": _json(error_ref, ERROR_STATUSES["413"])}
    if auth:
        common_errors["401"] = _json(error_ref, "Missing or unknown bearer token.")
    paths: dict[str, Any] = {
        REST_PREFIX: {
            "get": {
                "operationId": "list_tools",
                "summary": "The caller's tools with their input schemas.",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {"tools": {"type": "array", "items": TOOL_SCHEMA}},
                            "required": ["tools"],
                        },
                        "The tools this role may call.",
                    ),
                    **({"401": common_errors["401"]} if auth else {}),
                },
            }
        }
    }
    for tool in tools:
        name = tool["name"]
        body_schema = _relocate(tool.get("inputSchema") or {"type": "object"}, name, components["schemas"])
        responses = {
            "200": _json({"$ref": "#/components/schemas/ToolResult"}, "The tool ran; `result` is its JSON result."),
            **{status: _json(error_ref, text) for status, text in ERROR_STATUSES.items()},
            **common_errors,
        }
        paths[f"{REST_PREFIX}/{name}"] = {
            "post": {
                "operationId": name,
                "summary": tool.get("description") or name,
                # An empty body means no arguments, so it is optional unless some argument is required.
                "requestBody": {
                    "required": bool(body_schema.get("required")),
                    "content": {"application/json": {"schema": body_schema}},
                },
                "responses": responses,
            }
        }
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": title, "version": __version__, "description": description},
        "paths": paths,
        "components": components,
    }
    if server_url:
        document["servers"] = [{"url": server_url}]
    if auth:
        components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document
