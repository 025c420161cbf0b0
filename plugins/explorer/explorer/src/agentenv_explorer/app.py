"""The explorer's HTTP application: one route table drives both the Starlette routes and the OpenAPI document.

Store reads are blocking (SQLite, files), so handlers run them in Starlette's thread pool; the live stream and
starting or cancelling a run are async. Every failure is JSON `{"error": message, "status": code}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentenv_explorer import __version__
from agentenv_explorer.access import AccessMiddleware
from agentenv_explorer.catalog import Catalog
from agentenv_explorer.compare import compare
from agentenv_explorer.errors import ApiError, bad_request, not_found
from agentenv_explorer.launcher import Launcher, start_arguments
from agentenv_explorer.live_logs import LiveLogs
from agentenv_explorer.panels import Panel, collect, panel_manager
from agentenv_explorer.params import check_names
from agentenv_explorer.runs import RUN_FILTERS, RunsView
from agentenv_explorer.worlds import world_page

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

STATIC = files("agentenv_explorer") / "static"
SSE_KEEPALIVE_S = 15.0
STATUS_POLL_S = 0.5


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    summary: str
    handler: str
    """Name of the `Explorer` method that answers."""
    query: tuple[str, ...] = ()
    body: bool = False
    kind: str = "json"
    """json, sse (text/event-stream) or bytes."""


PAGE = ("offset", "limit")
ROUTES = (
    Route(
        "GET", "/api/runs", "Stored runs, newest first; filters and paging.", "list_runs", (*sorted(RUN_FILTERS), *PAGE)
    ),
    Route("POST", "/api/runs", "Start a run of a bundle (task, agent, seed, sandbox, model).", "start_run", body=True),
    Route("GET", "/api/runs/{run_id}", "One run's record (a unique id prefix is enough).", "get_run"),
    Route("GET", "/api/runs/{run_id}/steps", "The task's steps with state, times and the DAG's edges.", "steps"),
    Route(
        "GET",
        "/api/runs/{run_id}/trajectory",
        "A page of the run's trajectory; kind, role, tool and q filter it on the server.",
        "trajectory",
        ("world", "kind", "role", "tool", "q", *PAGE),
    ),
    Route("GET", "/api/runs/{run_id}/artifacts", "Objects stored under the run and its artifact pins.", "artifacts"),
    Route("GET", "/api/runs/{run_id}/artifacts/{key:path}", "One stored object's bytes.", "artifact", kind="bytes"),
    Route("GET", "/api/runs/{run_id}/verifier", "The score and each verifier's criteria.", "verifier"),
    Route("GET", "/api/runs/{run_id}/world", "The world's card, tools per role, final tables.", "world", ("world",)),
    Route("POST", "/api/runs/{run_id}/cancel", "Cancel a run this explorer started.", "cancel"),
    Route("GET", "/api/runs/{run_id}/events", "Live events of a run (server-sent events).", "events", kind="sse"),
    Route("GET", "/api/compare", "Where two runs' trajectories part; their final differences.", "compare", ("a", "b")),
    Route("GET", "/api/bundles", "Installed bundles, their tasks and agents.", "bundles"),
    Route("GET", "/api/bundles/{bundle}/tasks/{task}", "One task: steps, DAG, pins.", "task"),
    Route("GET", "/api/tasks/schema", "The JSON Schema of task files with every step type's fields.", "task_schema"),
    Route("GET", "/api/envs", "Installed envs with their tools and artifacts.", "envs"),
    Route("GET", "/api/envs/{names}/card", "The Environment Card of envs (comma-joined) as a role.", "card", ("role",)),
    Route("GET", "/api/plugins", "Installed plugins and what `agentenv plugin check` reports.", "plugins"),
    Route("GET", "/api/registry", "Entries pushed to the configured registry.", "registry"),
    Route("GET", "/api/panels", "Pages and panels that plugins add.", "list_panels"),
    Route("GET", "/api/panels/{name}/script", "A panel's ES module.", "panel_script", kind="bytes"),
    Route("GET", "/api/panels/{name}/data/{run_id}", "A panel's data for one run.", "panel_data"),
    Route("GET", "/api/openapi.json", "This document.", "openapi"),
)


@dataclass
class Explorer:
    """The answers behind the routes, over one host, config and set of stores."""

    host: Any
    config: Any
    records: Any
    launcher: Launcher
    panels: dict[str, Panel] = field(default_factory=dict)
    live: LiveLogs | None = None
    """The project's live folder: events of running runs this explorer did not start (None: status only)."""

    def __post_init__(self) -> None:
        self.runs = RunsView(self.records, guarded)
        self.catalog = Catalog(self.host)

    # runs
    def list_runs(self, request: Request) -> Any:
        return self.runs.list(request.query_params)

    async def start_run(self, request: Request) -> Any:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise bad_request('the body is not JSON; send {"bundle": "NAME", …}') from None
        arguments = start_arguments(body)
        try:
            if "task" in arguments:
                self.catalog.task(arguments["bundle"], arguments["task"])
            else:
                self.catalog.bundle(arguments["bundle"])
        except ApiError as exc:
            raise bad_request(exc.message) from None
        return await self.launcher.start(arguments)

    def get_run(self, request: Request) -> Any:
        return self.runs.record(request.path_params["run_id"])

    def steps(self, request: Request) -> Any:
        return self.runs.steps(request.path_params["run_id"])

    def trajectory(self, request: Request) -> Any:
        return self.runs.trajectory(request.path_params["run_id"], request.query_params)

    def artifacts(self, request: Request) -> Any:
        return self.runs.artifacts(request.path_params["run_id"])

    def artifact(self, request: Request) -> bytes:
        return self.runs.artifact(request.path_params["run_id"], request.path_params["key"])

    def verifier(self, request: Request) -> Any:
        return self.runs.verifier(request.path_params["run_id"])

    def world(self, request: Request) -> Any:
        return world_page(self.runs, request.path_params["run_id"], request.query_params.get("world") or None)

    async def cancel(self, request: Request) -> Any:
        record = await _thread(self.runs.get, request.path_params["run_id"])
        return await self.launcher.cancel(record["id"], record)

    async def events(self, request: Request) -> Any:
        """Launched here: every event of its event log. Running elsewhere in the project: its events from the live
        folder. Otherwise (stored, or its process logs nowhere this explorer can see): the status until it ends."""
        record = await _thread(self.runs.get, request.path_params["run_id"])
        if record["id"] in self.launcher.launches:
            return self.launcher.follow(record["id"])
        if record.get("status") == "running" and self.live is not None:
            log = await _thread(self.live.find, record["id"])
            if log is not None:
                return self.live.follow(log, record["id"])
        return self._status_changes(record)

    async def _status_changes(self, record: dict[str, Any]) -> Any:
        status = record.get("status")
        yield {"event": "status", "status": status}
        while status == "running":
            await asyncio.sleep(STATUS_POLL_S)
            record = await _thread(self.runs.get, record["id"])
            if record.get("status") != status:
                status = record.get("status")
                yield {"event": "status", "status": status}
        yield {"event": "run_finished", "run": record}

    def compare(self, request: Request) -> Any:
        check_names(request.query_params, {"a", "b"})
        a, b = request.query_params.get("a"), request.query_params.get("b")
        if not a or not b:
            raise bad_request("give two runs to compare: /api/compare?a=RUN_ID&b=RUN_ID")
        return compare(self.runs, a, b)

    # what is installed
    def bundles(self, request: Request) -> Any:
        return {"bundles": self.catalog.bundles()}

    def task(self, request: Request) -> Any:
        return self.catalog.task(request.path_params["bundle"], request.path_params["task"])

    def task_schema(self, request: Request) -> Any:
        return self.catalog.task_schema()

    def envs(self, request: Request) -> Any:
        return {"envs": self.catalog.envs()}

    def card(self, request: Request) -> Any:
        check_names(request.query_params, {"role"})
        return self.catalog.env_card(request.path_params["names"], request.query_params.get("role") or "default")

    def plugins(self, request: Request) -> Any:
        return self.catalog.plugins()

    def registry(self, request: Request) -> Any:
        return {"entries": self.catalog.registry(self.config, guarded)}

    # plugin panels
    def list_panels(self, request: Request) -> Any:
        return {
            "panels": [
                {"name": p.name, "title": p.title, "place": p.place, "script": f"/api/panels/{p.name}/script"}
                for p in self.panels.values()
            ]
        }

    def _panel(self, name: str) -> Panel:
        if name not in self.panels:
            raise not_found(f"no explorer panel {name!r}", "list them at GET /api/panels")
        return self.panels[name]

    def panel_script(self, request: Request) -> bytes:
        return Path(self._panel(request.path_params["name"]).script).read_bytes()

    def panel_data(self, request: Request) -> Any:
        panel = self._panel(request.path_params["name"])
        return panel.data(self.runs.get(request.path_params["run_id"]), self.records)

    def openapi(self, request: Request) -> Any:
        return openapi_document()


def guarded(func: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """A store call; a failing store is a 503 carrying the store's one-line message."""
    from agentenv_runtime import StoreError

    try:
        return func(*args, **kwargs)
    except StoreError as exc:
        raise ApiError(503, str(exc)) from None


async def _thread(func: Callable[..., Any], /, *args: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(func, *args)


def error_response(status: int, message: str) -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message, "status": status}, status_code=status)


def _endpoint(explorer: Explorer, route: Route) -> Callable[[Request], Awaitable[Response]]:
    from starlette.responses import JSONResponse, Response, StreamingResponse

    method = getattr(explorer, route.handler)

    async def endpoint(request: Request) -> Response:
        try:
            if asyncio.iscoroutinefunction(method):
                result = await method(request)
            else:
                result = await _thread(method, request)
        except ApiError as exc:
            return error_response(exc.status, exc.message)
        if route.kind == "sse":
            return StreamingResponse(
                _sse(result), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
            )
        if route.kind == "bytes":
            media = "text/javascript" if route.handler == "panel_script" else "application/octet-stream"
            return Response(result, media_type=media)
        return JSONResponse(result)

    return endpoint


async def _sse(events: Any) -> Any:
    """`event: KIND` / `data: JSON` frames, with a comment line as keep-alive while nothing happens."""
    iterator = events.__aiter__()
    pending: asyncio.Task[Any] | None = None
    try:
        while True:
            pending = pending or asyncio.ensure_future(iterator.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=SSE_KEEPALIVE_S)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                yield "event: end\ndata: {}\n\n"
                return
            pending = None
            yield f"event: {event.get('event', 'message')}\ndata: {json.dumps(event, default=str)}\n\n"
    finally:
        if pending is not None and not pending.done():
            pending.cancel()


def openapi_document() -> dict[str, Any]:
    error = {"$ref": "#/components/schemas/Error"}
    paths: dict[str, Any] = {}
    for route in ROUTES:
        path = route.path.replace(":path}", "}")
        names = [part[1:-1].split(":")[0] for part in route.path.split("/") if part.startswith("{")]
        parameters = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names]
        parameters += [{"name": q, "in": "query", "required": False, "schema": {"type": "string"}} for q in route.query]
        media = {"sse": "text/event-stream", "bytes": "application/octet-stream"}.get(route.kind, "application/json")
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": route.handler,
            "parameters": parameters,
            "responses": {
                "200": {"description": "OK", "content": {media: {"schema": {}}}},
                "400": {"description": "Bad input", "content": {"application/json": {"schema": error}}},
                "404": {"description": "Not found", "content": {"application/json": {"schema": error}}},
            },
        }
        if route.body:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StartRun"}}},
            }
        paths.setdefault(path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "agentenv explorer", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error", "status"],
                    "properties": {"error": {"type": "string"}, "status": {"type": "integer"}},
                },
                "StartRun": {
                    "type": "object",
                    "required": ["bundle"],
                    "additionalProperties": False,
                    "properties": {
                        "bundle": {"type": "string"},
                        "task": {"type": "string"},
                        "agent": {"type": "string"},
                        "seed": {"type": "integer"},
                        "sandbox": {"type": "string"},
                        "model": {"type": "string"},
                    },
                },
            }
        },
    }


def build_app(explorer: Explorer, *, token: str | None = None) -> Starlette:
    """The ASGI app: API routes, the UI's files, the access rules around both."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import Response
    from starlette.routing import Route as StarletteRoute

    ui = ui_files()

    async def index(request: Request) -> Response:
        body, media = ui["index.html"]
        return Response(body, media_type=media, headers={"Cache-Control": "no-store"})

    async def static(request: Request) -> Response:
        found = ui.get(request.path_params["name"])
        if found is None:
            return error_response(404, f"no UI file {request.path_params['name']!r}")
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "no-cache"})

    async def unknown(request: Request) -> Response:
        return error_response(404, f"no API route {request.url.path}; see GET /api/openapi.json")

    routes = [StarletteRoute(r.path, _endpoint(explorer, r), methods=[r.method]) for r in ROUTES]
    routes += [
        StarletteRoute("/api/{rest:path}", unknown, methods=["GET", "POST"]),
        StarletteRoute("/static/{name}", static),
        StarletteRoute("/", index),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(AccessMiddleware, token=token)])
    app.state.explorer = explorer
    return app


def ui_files() -> dict[str, tuple[bytes, str]]:
    """The UI's files by name, read once: served from memory, a page load costs no file reads (the modules are
    many small files, and each read through a worker thread added a hop to the page's waterfall)."""
    media = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
    return {
        item.name: (item.read_bytes(), media.get(Path(item.name).suffix, "application/octet-stream"))
        for item in STATIC.iterdir()
        if item.is_file() and not item.name.startswith(".")
    }


def make_explorer(host: Any = None, config: Any = None, *, load_panels: bool = True) -> Explorer:
    """An Explorer over the configured stores (ConfigError, StoreError, LookupError when they cannot open)."""
    from agentenv import get_host
    from agentenv.config import load_config
    from agentenv_runtime import Records, live_folder

    host = host or get_host()
    config = config or load_config()
    panels = collect(panel_manager(load_panels))
    return Explorer(host, config, Records(config, host), Launcher(), panels, LiveLogs(live_folder()))
