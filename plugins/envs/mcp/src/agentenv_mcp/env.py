"""An MCP server as an env whose lifecycle follows the world's.

Each env instance owns a server: a command or image server is started when the env is made (the world's deploy),
stopped by `close()` (its teardown), and started again on `reset()` so an episode begins on the server's initial
state, unless the spec names a `reset_tool`, which `reset()` calls instead. `fork()` gives a fresh server, which
is the forked world's start state only when the parent had not changed the server's state since its start: the
server's state cannot be copied, so say so to task authors.

The tools are whatever the server lists; the gateway's upstream env (`agentenv_gateway.api.UpstreamEnv`) checks
arguments against the server's own JSON Schemas before the call and maps results and errors, so RBAC, triggers,
the trajectory and the card treat them like our own envs' tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Self

from agentenv_gateway.api import UpstreamConnection, UpstreamEnv, UpstreamError, upstream_env_class
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from pydantic import BaseModel

from agentenv_mcp.spec import McpServerSpec
from agentenv_mcp.stderr import StderrTail


class McpServerError(RuntimeError):
    """An MCP server that cannot serve as an env (did not start, hung, listed unusable tools); names the env."""


class McpServerEnv(UpstreamEnv):
    """Base of the per-server env classes made by `start_env`."""

    spec: ClassVar[McpServerSpec]
    _spare: ClassVar[tuple[UpstreamConnection, StderrTail | None] | None] = None
    """The connection that listed the tools when the class was made, handed to the first instance."""

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        cls = type(self)
        spare, cls._spare = cls._spare, None
        self.connection, self._stderr = spare if spare is not None else connect(cls.spec)

    def close(self) -> None:
        """Stop the server (a stdio process is ended) and release its stderr pipe."""
        self.connection.close()
        if self._stderr is not None:
            self._stderr.close()

    def restart(self) -> None:
        """A fresh server: its initial state, for a reset of a server that has no reset tool."""
        self.close()
        self.connection, self._stderr = connect(self.spec)

    def reset(self) -> None:
        reset_tool = self.spec.reset_tool
        if reset_tool is not None:
            try:
                result = self.connection.call(reset_tool, {})
            except Exception as exc:
                raise McpServerError(f"env {self.name}: reset tool {reset_tool!r} failed: {exc}") from exc
            if result.is_error:
                raise McpServerError(f"env {self.name}: reset tool {reset_tool!r} answered with an error")
        elif self.spec.started:
            self.restart()
        super().reset()

    def fork(self) -> Self:
        return type(self)(self.settings)

    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr is not None else ""


def connect(spec: McpServerSpec) -> tuple[UpstreamConnection, StderrTail | None]:
    """Start (or reach) the server and list its tools; a McpServerError names the env and what the server said."""
    tail = StderrTail(spec.name) if spec.started else None
    connection = UpstreamConnection(
        spec.name, spec.target(), errlog=tail.sink if tail else None, env=dict(spec.env) or None
    )
    try:
        connection.start(timeout=spec.start_timeout)
    except UpstreamError as exc:
        if tail is not None:
            tail.close()
        said = tail.text() if tail is not None else ""
        why = str(exc).removeprefix(f"upstream {spec.name}: ")
        raise McpServerError(
            f"env {spec.name}: the MCP server ({spec.describe()}) did not start: {why}"
            + (f"\nits last stderr lines:\n{said}" if said else "")
        ) from None
    try:
        check_tools(spec, connection.tools)
    except McpServerError:
        connection.close()
        if tail is not None:
            tail.close()
        raise
    return connection, tail


def check_tools(spec: McpServerSpec, tools: Iterable[Any]) -> None:
    """Refuse a server whose tools cannot be offered safely: no name, duplicate names, or an input schema that is
    not a valid JSON Schema of an object (arguments could not be checked before the call)."""
    seen: set[str] = set()
    for tool in tools:
        where = f"env {spec.name}: tool {tool.name!r}"
        if tool.name in seen:
            raise McpServerError(f"{where} is listed twice; the server must give each tool one name")
        seen.add(tool.name)
        schema = tool.input_schema
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise McpServerError(f"{where}: inputSchema must be a JSON Schema with type 'object', got {schema!r}")
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            path = "/".join(map(str, exc.absolute_path)) or "(root)"
            raise McpServerError(f"{where}: inputSchema is not a valid JSON Schema at {path}: {exc.message}") from None
    if spec.reset_tool is not None and spec.reset_tool not in seen:
        raise McpServerError(
            f"env {spec.name}: reset_tool {spec.reset_tool!r} is not one of its tools ({', '.join(sorted(seen))})"
        )


def start_env(spec: McpServerSpec, taken: Iterable[str] = ()) -> McpServerEnv:
    """Start the server and make its env; tool names already `taken` in the world get the `NAME_` prefix."""
    connection, tail = connect(spec)
    try:
        base = upstream_env_class(connection, set(taken))
        cls: type[McpServerEnv] = type(
            f"McpServer_{spec.name}",
            (McpServerEnv, base),
            {
                "__module__": __name__,
                "spec": spec,
                "description": f"MCP server {spec.name} ({spec.describe()})",
            },
        )
        cls._tool_specs = base._tool_specs  # __init_subclass__ resets it
        cls._spare = (connection, tail)
        return cls()
    except BaseException:
        connection.close()
        if tail is not None:
            tail.close()
        raise
