"""Fronting third-party MCP servers: an upstream server becomes one more env of the world.

`UpstreamEnv` is a kernel `Env` whose tools are not `@tool` methods but whatever the upstream server
lists when the gateway connects. Because the env sits in the world, its tools share the world's RBAC,
triggers, clock and trajectory like any simulated app. Its state lives in the upstream server, so
snapshot/restore/reset cover only the (empty) local database; say so to task authors.

The client session runs on its own event loop in a background thread and stays open for the life of
the gateway; `World.call` is synchronous, so a call hands the coroutine to that loop and waits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import shlex
import threading
from contextlib import AsyncExitStack
from typing import Any, ClassVar, TextIO

from agentenv_runtime import Env, ToolSpec
from pydantic import BaseModel, ConfigDict, create_model

CONNECT_TIMEOUT = 30.0
CALL_TIMEOUT = 120.0


class UpstreamError(RuntimeError):
    """An upstream MCP server that cannot be reached or listed; the message names it."""


class _AnyArgs(BaseModel):
    """Placeholder argument model: upstream arguments are checked against the upstream's own JSON Schema."""

    model_config = ConfigDict(extra="allow")


class UpstreamToolSpec(ToolSpec):
    """An upstream server's tool: its JSON Schema is the upstream's own; `remote` is its name there (the
    public name may carry a `NAME_` prefix)."""

    def __init__(self, *, schema: dict[str, Any], remote: str, **fields: Any) -> None:
        super().__init__(**fields)
        self.schema, self.remote = schema, remote

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.schema


def parse_upstream(spec: str) -> tuple[str, str]:
    """`NAME=COMMAND ARGS…` or `NAME=http(s)://…` → (name, target)."""
    name, sep, target = spec.partition("=")
    name, target = name.strip(), target.strip()
    if not sep or not name or not target:
        raise UpstreamError(f"--upstream {spec!r}: expected NAME=COMMAND… or NAME=http://host/mcp")
    if not name.isidentifier():
        raise UpstreamError(f"--upstream {spec!r}: NAME must be a plain identifier (letters, digits, _)")
    return name, target


class UpstreamConnection:
    """One live MCP client session (stdio or streamable HTTP) on a private event loop thread."""

    def __init__(
        self,
        name: str,
        target: str,
        *,
        headers: dict[str, str] | None = None,
        errlog: TextIO | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.target = target
        self.headers = headers or {}
        self.errlog = errlog
        """Where a stdio server's stderr goes (default: ours); a server that floods it needs a bounded sink."""
        self.env = env
        """Extra environment variables of a stdio server (the MCP SDK merges them over its safe default set)."""
        self.session: Any = None
        self.tools: list[Any] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"agentenv-upstream-{name}", daemon=True)
        self._ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None
        self._main: concurrent.futures.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._ended = threading.Event()
        """Set once the session (and the server process with it) has been torn down."""

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    def start(self, timeout: float = CONNECT_TIMEOUT) -> list[Any]:
        """Connect, initialize and list the tools; raises UpstreamError if any of it fails."""
        self._thread.start()
        self._main = asyncio.run_coroutine_threadsafe(self._run(), self._loop)
        try:
            self.tools = self._ready.result(timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            raise UpstreamError(f"upstream {self.name}: {self.target} did not answer within {timeout:.0f}s") from None
        except BaseException as exc:
            self.close()
            raise UpstreamError(f"upstream {self.name}: cannot connect to {self.target}: {_root(exc)}") from None
        return self.tools

    async def _run(self) -> None:
        from mcp.client.session import ClientSession

        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        try:
            async with AsyncExitStack() as stack:
                streams = await stack.enter_async_context(self._transport(stack))
                session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await session.initialize()
                tools = await self._list(session)
                self.session = session
                self._ready.set_result(tools)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            else:
                raise
        finally:
            self._ended.set()

    def _transport(self, stack: AsyncExitStack) -> Any:
        if self.is_http:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(headers=self.headers, timeout=CALL_TIMEOUT)
            stack.push_async_callback(client.aclose)
            return streamable_http_client(self.target, http_client=client)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = shlex.split(self.target)
        parameters = StdioServerParameters(command=argv[0], args=argv[1:], env=self.env)  # merged over the SDK's
        return stdio_client(parameters) if self.errlog is None else stdio_client(parameters, errlog=self.errlog)

    @staticmethod
    async def _list(session: Any) -> list[Any]:
        import mcp_types as types

        tools: list[Any] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    def list_tools(self, timeout: float = CALL_TIMEOUT) -> list[Any]:
        """List the tools again (they may change mid-session: a world's tool access can)."""
        if self.session is None:
            raise UpstreamError(f"upstream {self.name} is not connected")
        self.tools = asyncio.run_coroutine_threadsafe(self._list(self.session), self._loop).result(timeout)
        return self.tools

    def call(self, tool: str, arguments: dict[str, Any], timeout: float = CALL_TIMEOUT) -> Any:
        """Call an upstream tool and wait for its `CallToolResult` (from any thread but the loop's own)."""
        if self.session is None:
            raise UpstreamError(f"upstream {self.name} is not connected")
        future = asyncio.run_coroutine_threadsafe(self.session.call_tool(tool, arguments), self._loop)
        return future.result(timeout)

    def close(self) -> None:
        """End the session (a stdio server process is terminated) and stop the loop thread."""
        if self._stop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stop.set)
        task = self._task
        if task is not None and not self._ready.done() and self._loop.is_running():
            # Still connecting (a server that hangs before it answers): cancelling unwinds the transport, which
            # ends the server process (the SDK shields that cleanup), instead of leaving it behind a stopped loop.
            self._loop.call_soon_threadsafe(task.cancel)
            self._ended.wait(10)
        if self._main is not None:
            # Closing anyway: a failing shutdown must not mask the caller's own error.
            with contextlib.suppress(BaseException):
                self._main.result(10)
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread.is_alive():
            self._thread.join(10)
        self.session = None


def _root(exc: BaseException) -> str:
    """The innermost useful message of an exception group."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


class UpstreamEnv(Env):
    """Base of the per-upstream env classes made by `upstream_env_class`."""

    connection: UpstreamConnection
    """Set on the class by `upstream_env_class`; an env that owns its server sets its own per instance."""
    # The state lives upstream. The table exists because SQLite cannot serialize a database with no
    # pages, and the kernel snapshots every env at construction.
    schema: ClassVar[str] = "CREATE TABLE upstream_calls (seq INTEGER PRIMARY KEY, tool TEXT NOT NULL);"

    def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        spec = self.tool_specs().get(tool_name)
        if not isinstance(spec, UpstreamToolSpec):
            return None, {"code": "unknown_tool", "message": f"{self.name} has no tool {tool_name!r}"}
        problems = schema_errors(spec.schema, arguments)
        if problems:
            summary = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
            return None, {"code": "invalid_arguments", "message": f"invalid arguments: {summary}", "errors": problems}
        try:
            result = self.connection.call(spec.remote, arguments)
        except Exception as exc:
            return None, {"code": "upstream_failed", "message": f"upstream {self.name}: {_root(exc)}"}
        value = _result_value(result)
        if result.is_error:
            text = value if isinstance(value, str) else json.dumps(value)
            return None, {"code": "upstream_error", "message": f"{self.name}.{spec.remote}: {text}"}
        return value, None


def _result_value(result: Any) -> Any:
    """Structured content when the upstream sends it, else the text content (parsed when it is JSON)."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
    text = "\n".join(texts)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text


_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def schema_errors(schema: dict[str, Any], instance: Any) -> list[dict[str, str]]:
    """Every way `instance` breaks `schema`, each naming the field."""
    from jsonschema.validators import validator_for

    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _VALIDATORS[id(schema)] = (schema, validator_for(schema)(schema))
    validator = cached[1]
    problems = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        path = [str(part) for part in error.absolute_path]
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = [name for name in error.validator_value if name not in error.instance]
            path += missing[:1]
        problems.append({"field": ".".join(path) or "(arguments)", "message": error.message})
    return problems


def upstream_env_class(connection: UpstreamConnection, taken: set[str]) -> type[UpstreamEnv]:
    """An env class for one connected upstream; tools whose names are `taken` get the `NAME_` prefix."""
    specs: dict[str, ToolSpec] = {}
    for tool in connection.tools:
        public = tool.name if tool.name not in taken else f"{connection.name}_{tool.name}"
        annotations = getattr(tool, "annotations", None)
        specs[public] = UpstreamToolSpec(
            name=public,
            description=tool.description or "",
            method="",
            args_model=create_model(f"{connection.name}_{tool.name}_args", __base__=_AnyArgs),
            read_only=bool(getattr(annotations, "read_only_hint", False)),
            schema=dict(tool.input_schema),
            remote=tool.name,
        )
    cls: type[UpstreamEnv] = type(
        f"Upstream_{connection.name}",
        (UpstreamEnv,),
        {
            "name": connection.name,
            "description": f"Upstream MCP server {connection.name} ({connection.target})",
            "__module__": __name__,
            "connection": connection,
        },
    )
    cls._tool_specs = specs  # set after class creation: __init_subclass__ resets it
    return cls
