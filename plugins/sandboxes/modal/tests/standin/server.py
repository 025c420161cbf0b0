"""A local stand-in for Modal's control plane and task command router, for testing through the real SDK.

It implements the grpclib service bases the `modal` SDK ships (`modal_proto.api_grpc.ModalClientBase` and
`modal_proto.task_command_router_grpc.TaskCommandRouterBase`), just enough for sandboxes: create, exec, the
filesystem API, tunnels, tags/list, wait/poll and terminate. Every other RPC answers UNIMPLEMENTED and is
recorded in `unimplemented`, so a test (or a new SDK version) that needs more fails with the RPC's name.

A "sandbox" here is a temporary folder standing for the container's root file system; commands run for real
as local subprocesses (own process group each) with the sandbox's working directory mapped into that folder,
so exec output, exit codes, files and ports are real. Ports are reported as tunnels on 127.0.0.1 at the same
port number, because the processes share the host's network. Nothing here isolates anything.

Both services listen on one port; the command router URL handed to the SDK is `http://127.0.0.1:<port>`
(the SDK accepts plain HTTP for the router only when its server URL is on localhost).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from grpclib import GRPCError, Status
from grpclib.server import Server, Stream
from modal_proto import api_grpc, api_pb2
from modal_proto import task_command_router_grpc as router_grpc
from modal_proto import task_command_router_pb2 as sr_pb2

FS_TOOLS_PATH = "/__modal/.bin/modal-sandbox-fs-tools"
"""The in-sandbox binary behind `sandbox.filesystem`; the stand-in runs `fs_tools.py` in its place."""

_FS_TOOLS_SCRIPT = Path(__file__).with_name("fs_tools.py")
_CHUNK = 1 << 20
_Result = api_pb2.GenericResult


def _jwt(claims: dict[str, Any]) -> str:
    """An unsigned JWT (the SDK only reads `exp` from it)."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c3RhbmRpbg"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass
class Exec:
    """One process in a sandbox (an exec, or the sandbox's entrypoint) and its buffered output."""

    proc: asyncio.subprocess.Process
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)
    out_done: bool = False
    err_done: bool = False
    returncode: int | None = None
    stdin_written: int = 0
    stdin_closed: bool = False
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    exited: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class StandinSandbox:
    id: str
    task_id: str
    app_id: str
    root: Path
    definition: api_pb2.Sandbox
    env: dict[str, str]
    tags: dict[str, str]
    created_at: float
    result: api_pb2.GenericResult | None = None
    execs: dict[str, Exec] = field(default_factory=dict)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None

    @property
    def workdir(self) -> str:
        return self.definition.workdir if self.definition.HasField("workdir") else "/"

    def host_path(self, path: str) -> Path:
        return self.root.joinpath(*[p for p in PurePosixPath(path).parts if p != "/"])

    def tunnels(self) -> list[api_pb2.TunnelData]:
        tunnels = []
        for spec in self.definition.open_ports.ports:
            data = api_pb2.TunnelData(host="127.0.0.1", port=spec.port, container_port=spec.port)
            if spec.unencrypted:
                data.unencrypted_host, data.unencrypted_port = "127.0.0.1", spec.port
            tunnels.append(data)
        return tunnels

    def info(self) -> api_pb2.SandboxInfo:
        return api_pb2.SandboxInfo(
            id=self.id,
            created_at=self.created_at,
            app_id=self.app_id,
            tags=[api_pb2.SandboxTag(tag_name=k, tag_value=v) for k, v in self.tags.items()],
            task_info=api_pb2.TaskInfo(id=self.task_id, result=self.result, sandbox_id=self.id),
            metadata=api_pb2.SandboxHandleMetadata(app_id=self.app_id, result=self.result),
            timeout_secs=self.definition.timeout_secs,
        )


class StandinState:
    """Everything the stand-in knows; shared by both services, touched only on the server's event loop."""

    def __init__(self, root: Path, token: tuple[str, str]) -> None:
        self.root = root
        self.token = token
        self.router_url = ""
        self.apps: dict[tuple[str, str], str] = {}
        self.sandboxes: dict[str, StandinSandbox] = {}
        self.by_task: dict[str, StandinSandbox] = {}
        self.images: list[api_pb2.ImageGetOrCreateRequest] = []
        self.creates: list[api_pb2.SandboxCreateV2Request] = []
        self.calls: list[str] = []
        self.unimplemented: list[str] = []
        self._counter = 0
        self._tasks: set[asyncio.Task[None]] = set()

    def background(self, coro: Any) -> None:
        """Run `coro` on the server loop, keeping a reference until it is done."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def next_number(self) -> int:
        self._counter += 1
        return self._counter

    def sandbox(self, sandbox_id: str) -> StandinSandbox:
        found = self.sandboxes.get(sandbox_id)
        if found is None:
            raise GRPCError(Status.NOT_FOUND, f"Sandbox {sandbox_id} not found")
        return found

    def task(self, task_id: str) -> StandinSandbox:
        found = self.by_task.get(task_id)
        if found is None:
            raise GRPCError(Status.NOT_FOUND, f"Task {task_id} not found")
        return found

    # -- processes --------------------------------------------------------------------------------

    async def spawn(self, sandbox: StandinSandbox, args: list[str], env: dict[str, str], workdir: str) -> Exec:
        if sandbox.result is not None:
            raise GRPCError(Status.NOT_FOUND, f"Sandbox {sandbox.id} has finished")
        if args and args[0] == FS_TOOLS_PATH:
            args = [sys.executable, str(_FS_TOOLS_SCRIPT), str(sandbox.root), *args[1:]]
        cwd = sandbox.host_path(workdir)
        cwd.mkdir(parents=True, exist_ok=True)
        environ = {**os.environ, "HOME": str(sandbox.host_path("/root")), **sandbox.env, **env}
        try:
            proc = await asyncio.create_subprocess_exec(
                *args,
                cwd=cwd,
                env=environ,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            # answer like a shell would: 127 for a missing command, 126 for one that cannot run
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            message = f"{args[0]}: {exc.strerror or exc}"
            return await self.spawn(sandbox, ["sh", "-c", f'echo "$0" >&2; exit {code}', message], env, workdir)
        ex = Exec(proc)
        self.background(self._pump(ex))
        return ex

    async def _pump(self, ex: Exec) -> None:
        async def drain(reader: asyncio.StreamReader | None, buf: bytearray, which: str) -> None:
            while reader is not None and (chunk := await reader.read(65536)):
                async with ex.changed:
                    buf.extend(chunk)
                    ex.changed.notify_all()
            async with ex.changed:
                setattr(ex, which, True)
                ex.changed.notify_all()

        drains = asyncio.gather(drain(ex.proc.stdout, ex.out, "out_done"), drain(ex.proc.stderr, ex.err, "err_done"))
        ex.returncode = await ex.proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):  # a background child may keep the pipes open
            await asyncio.wait_for(asyncio.shield(drains), 1.0)
        async with ex.changed:
            ex.out_done = ex.err_done = True
            ex.changed.notify_all()
        ex.exited.set()

    def finish(self, sandbox: StandinSandbox, result: api_pb2.GenericResult) -> None:
        """End a sandbox: kill every process group it started and remove its folder."""
        if sandbox.result is not None:
            return
        sandbox.result = result
        if sandbox.timer is not None:
            sandbox.timer.cancel()
        for ex in sandbox.execs.values():
            _kill_group(ex.proc.pid)
        shutil.rmtree(sandbox.root, ignore_errors=True)
        sandbox.finished.set()


def _with_fallbacks(base: type, name: str, record: Callable[[Any], list[str]]) -> type:
    """Fill every abstract RPC of `base` not defined by the subclass with an UNIMPLEMENTED answer."""

    def fallback(rpc: str) -> Callable[..., Any]:
        async def unimplemented(self: Any, stream: Stream[Any, Any]) -> None:
            record(self).append(rpc)
            raise GRPCError(Status.UNIMPLEMENTED, f"{rpc} is not implemented by the agentenv Modal stand-in")

        return unimplemented

    def decorate(cls: type) -> type:
        missing = {rpc: fallback(rpc) for rpc in base.__abstractmethods__ if rpc not in cls.__dict__}
        return type(name, (cls,), missing)

    return decorate  # type: ignore[return-value]


class _ModalApi(api_grpc.ModalClientBase):
    """The control-plane RPCs the SDK uses for sandboxes."""

    def __init__(self, state: StandinState) -> None:
        self.state = state

    async def _request(self, stream: Stream[Any, Any], rpc: str) -> Any:
        token_id = stream.metadata.get("x-modal-token-id") if stream.metadata else None
        secret = stream.metadata.get("x-modal-token-secret") if stream.metadata else None
        if (token_id, secret) != self.state.token:
            raise GRPCError(Status.UNAUTHENTICATED, "token id/secret do not match the stand-in's")
        self.state.calls.append(rpc)
        return await stream.recv_message()

    async def ClientHello(self, stream: Stream[Any, Any]) -> None:
        await self._request(stream, "ClientHello")
        await stream.send_message(api_pb2.ClientHelloResponse())

    async def AuthTokenGet(self, stream: Stream[Any, Any]) -> None:
        await self._request(stream, "AuthTokenGet")
        token = _jwt({"sub": "standin", "exp": int(time.time()) + 3600})
        await stream.send_message(api_pb2.AuthTokenGetResponse(token=token))

    async def EnvironmentGetOrCreate(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "EnvironmentGetOrCreate")
        settings = api_pb2.EnvironmentSettings(image_builder_version="2025.06", webhook_suffix="standin")
        metadata = api_pb2.EnvironmentMetadata(name=req.deployment_name or "main", settings=settings)
        await stream.send_message(
            api_pb2.EnvironmentGetOrCreateResponse(environment_id="en-standin", metadata=metadata)
        )

    async def AppGetOrCreate(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "AppGetOrCreate")
        key = (req.environment_name, req.app_name)
        if key not in self.state.apps:
            if req.object_creation_type != api_pb2.OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                raise GRPCError(Status.NOT_FOUND, f"App {req.app_name!r} not found")
            self.state.apps[key] = f"ap-standin{self.state.next_number():06d}"
        await stream.send_message(api_pb2.AppGetOrCreateResponse(app_id=self.state.apps[key]))

    async def ImageGetOrCreate(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "ImageGetOrCreate")
        self.state.images.append(req)
        digest = hashlib.sha256(req.image.SerializeToString(deterministic=True)).hexdigest()[:20]
        result = _Result(status=_Result.GENERIC_STATUS_SUCCESS)
        await stream.send_message(api_pb2.ImageGetOrCreateResponse(image_id=f"im-{digest}", result=result))

    async def SandboxCreateV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxCreateV2")
        state = self.state
        state.creates.append(req)
        number = state.next_number()
        env: dict[str, str] = {}
        for source in req.secret_sources:
            if source.HasField("env"):
                env.update(source.env.contents)
        root = Path(tempfile.mkdtemp(prefix=f"sb{number}-", dir=state.root))
        sandbox = StandinSandbox(
            id=f"sb-standin-{number:06d}",
            task_id=f"ta-standin{number:06d}V",
            app_id=req.app_id,
            root=root,
            definition=req.definition,
            env=env,
            tags={t.tag_name: t.tag_value for t in req.tags},
            created_at=time.time(),
        )
        sandbox.host_path(sandbox.workdir).mkdir(parents=True, exist_ok=True)
        state.sandboxes[sandbox.id] = sandbox
        state.by_task[sandbox.task_id] = sandbox
        loop = asyncio.get_running_loop()
        timeout = req.definition.timeout_secs or 300
        sandbox.timer = loop.call_later(
            timeout, state.finish, sandbox, _Result(status=_Result.GENERIC_STATUS_TIMEOUT, exitcode=124)
        )
        if req.definition.entrypoint_args:
            main = await state.spawn(sandbox, list(req.definition.entrypoint_args), {}, sandbox.workdir)
            sandbox.execs["__main__"] = main

            async def on_exit() -> None:
                await main.exited.wait()
                code = main.returncode or 0
                status = _Result.GENERIC_STATUS_SUCCESS if code == 0 else _Result.GENERIC_STATUS_FAILURE
                state.finish(sandbox, _Result(status=status, exitcode=code))

            state.background(on_exit())
        access = api_pb2.CommandRouterAccess(url=state.router_url, jwt=_jwt({"task": sandbox.task_id, "exp": 2e9}))
        await stream.send_message(
            api_pb2.SandboxCreateV2Response(
                sandbox_id=sandbox.id,
                task_id=sandbox.task_id,
                tunnels=sandbox.tunnels(),
                metadata=api_pb2.SandboxHandleMetadata(app_id=sandbox.app_id),
                command_router_access=access,
            )
        )

    async def SandboxGetTaskIdV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxGetTaskIdV2")
        sandbox = self.state.sandbox(req.sandbox_id)
        if sandbox.result is not None:
            await stream.send_message(api_pb2.SandboxGetTaskIdResponse(task_result=sandbox.result))
        else:
            await stream.send_message(api_pb2.SandboxGetTaskIdResponse(task_id=sandbox.task_id))

    async def SandboxGetCommandRouterAccess(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxGetCommandRouterAccess")
        sandbox = self.state.sandbox(req.sandbox_id) if req.sandbox_id else self.state.task(req.task_id)
        if sandbox.result is not None:
            raise GRPCError(Status.FAILED_PRECONDITION, f"Sandbox {sandbox.id} has finished")
        jwt = _jwt({"task": sandbox.task_id, "exp": int(time.time()) + 3600})
        await stream.send_message(api_pb2.SandboxGetCommandRouterAccessResponse(url=self.state.router_url, jwt=jwt))

    async def SandboxWaitV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxWaitV2")
        sandbox = self.state.sandbox(req.sandbox_id)
        if sandbox.result is None and req.timeout > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(sandbox.finished.wait(), req.timeout)
        metadata = api_pb2.SandboxHandleMetadata(app_id=sandbox.app_id, result=sandbox.result)
        await stream.send_message(api_pb2.SandboxWaitResponse(result=sandbox.result, metadata=metadata))

    async def SandboxTerminateV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxTerminateV2")
        sandbox = self.state.sandbox(req.sandbox_id)
        existing = sandbox.result
        self.state.finish(sandbox, _Result(status=_Result.GENERIC_STATUS_TERMINATED, exitcode=137))
        await stream.send_message(api_pb2.SandboxTerminateResponse(existing_result=existing))

    async def SandboxListV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxListV2")
        wanted = {t.tag_name: t.tag_value for t in req.tags}
        found = [
            s
            for s in self.state.sandboxes.values()
            if (not req.app_id or s.app_id == req.app_id)
            and (req.include_finished or s.result is None)
            and all(s.tags.get(k) == v for k, v in wanted.items())
            and (not req.before_timestamp or s.created_at < req.before_timestamp)
        ]
        found.sort(key=lambda s: s.created_at, reverse=True)
        await stream.send_message(api_pb2.SandboxListResponse(sandboxes=[s.info() for s in found[:100]]))

    async def SandboxTagsGetV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxTagsGetV2")
        tags = self.state.sandbox(req.sandbox_id).tags
        protos = [api_pb2.SandboxTag(tag_name=k, tag_value=v) for k, v in tags.items()]
        await stream.send_message(api_pb2.SandboxTagsGetResponse(tags=protos))

    async def SandboxTagsSetV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxTagsSetV2")
        self.state.sandbox(req.sandbox_id).tags = {t.tag_name: t.tag_value for t in req.tags}
        await stream.send_message(api_pb2.SandboxTagsSetResponse())

    async def SandboxGetTunnelsV2(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "SandboxGetTunnelsV2")
        sandbox = self.state.sandbox(req.sandbox_id)
        await stream.send_message(api_pb2.SandboxGetTunnelsResponse(tunnels=sandbox.tunnels(), result=sandbox.result))


class _Router(router_grpc.TaskCommandRouterBase):
    """The worker-side RPCs behind `sandbox.exec` and `sandbox.filesystem`."""

    def __init__(self, state: StandinState) -> None:
        self.state = state

    async def _request(self, stream: Stream[Any, Any], rpc: str) -> Any:
        auth = stream.metadata.get("authorization", "") if stream.metadata else ""
        if not str(auth).startswith("Bearer "):
            raise GRPCError(Status.UNAUTHENTICATED, "missing command router JWT")
        self.state.calls.append(rpc)
        return await stream.recv_message()

    def _exec(self, task_id: str, exec_id: str) -> Exec:
        sandbox = self.state.task(task_id)
        ex = sandbox.execs.get(exec_id)
        if ex is None:
            raise GRPCError(Status.NOT_FOUND, f"exec {exec_id} not found in task {task_id}")
        return ex

    async def TaskExecStart(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecStart")
        sandbox = self.state.task(req.task_id)
        if req.exec_id in sandbox.execs:  # the SDK retries with the same exec id: idempotent
            await stream.send_message(sr_pb2.TaskExecStartResponse())
            return
        env = dict(req.env)
        for source in req.secret_sources:
            if source.HasField("env"):
                env.update(source.env.contents)
        workdir = req.workdir if req.HasField("workdir") else sandbox.workdir
        ex = await self.state.spawn(sandbox, list(req.command_args), env, workdir)
        sandbox.execs[req.exec_id] = ex
        if req.HasField("timeout_secs") and req.timeout_secs:

            async def enforce(ex: Exec = ex, seconds: int = req.timeout_secs) -> None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ex.exited.wait()), seconds)
                if not ex.exited.is_set():
                    _kill_group(ex.proc.pid)

            self.state.background(enforce())
        await stream.send_message(sr_pb2.TaskExecStartResponse())

    async def TaskExecStdioRead(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecStdioRead")
        ex = self._exec(req.task_id, req.exec_id)
        stdout = req.file_descriptor == sr_pb2.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT
        buf, done = (ex.out, "out_done") if stdout else (ex.err, "err_done")
        offset = req.offset
        while True:
            async with ex.changed:
                await ex.changed.wait_for(lambda at=offset: len(buf) > at or getattr(ex, done))
                data, finished = bytes(buf[offset : offset + _CHUNK]), getattr(ex, done)
            if data:
                await stream.send_message(sr_pb2.TaskExecStdioReadResponse(data=data))
                offset += len(data)
            elif finished:
                return

    def _exit_status(self, ex: Exec, response: type) -> Any:
        code = ex.returncode
        if code is None:
            return response()
        return response(signal=-code) if code < 0 else response(code=code)

    async def TaskExecWait(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecWait")
        ex = self._exec(req.task_id, req.exec_id)
        await ex.exited.wait()
        await stream.send_message(self._exit_status(ex, sr_pb2.TaskExecWaitResponse))

    async def TaskExecPoll(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecPoll")
        ex = self._exec(req.task_id, req.exec_id)
        await stream.send_message(self._exit_status(ex, sr_pb2.TaskExecPollResponse))

    async def _write_stdin(self, ex: Exec, offset: int, data: bytes, eof: bool) -> None:
        stdin = ex.proc.stdin
        if offset < ex.stdin_written:  # a resumed write: skip what already arrived
            data = data[ex.stdin_written - offset :]
        if data and stdin is not None and not ex.stdin_closed:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.write(data)
                await stdin.drain()
            ex.stdin_written += len(data)
        if eof and stdin is not None and not ex.stdin_closed:
            ex.stdin_closed = True
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.close()

    async def TaskExecStdinWrite(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecStdinWrite")
        await self._write_stdin(self._exec(req.task_id, req.exec_id), req.offset, req.data, req.eof)
        await stream.send_message(sr_pb2.TaskExecStdinWriteResponse())

    async def TaskExecStdinWriteStream(self, stream: Stream[Any, Any]) -> None:
        first = await self._request(stream, "TaskExecStdinWriteStream")
        if first is None or first.WhichOneof("payload") != "start":
            raise GRPCError(Status.INVALID_ARGUMENT, "the first message must be `start`")
        ex = self._exec(first.start.task_id, first.start.exec_id)
        offset = first.start.offset
        async for message in stream:
            kind = message.WhichOneof("payload")
            if kind == "data":
                await self._write_stdin(ex, offset, message.data, False)
                offset += len(message.data)
            elif kind == "end":
                await self._write_stdin(ex, offset, b"", True)
        await stream.send_message(sr_pb2.TaskExecStdinWriteStreamResponse())

    async def TaskExecStdinStatus(self, stream: Stream[Any, Any]) -> None:
        req = await self._request(stream, "TaskExecStdinStatus")
        ex = self._exec(req.task_id, req.exec_id)
        await stream.send_message(
            sr_pb2.TaskExecStdinStatusResponse(num_bytes_written=ex.stdin_written, closed=ex.stdin_closed)
        )


ModalApi = _with_fallbacks(api_grpc.ModalClientBase, "ModalApi", lambda self: self.state.unimplemented)(_ModalApi)
Router = _with_fallbacks(router_grpc.TaskCommandRouterBase, "Router", lambda self: self.state.unimplemented)(_Router)


class ModalStandin:
    """The stand-in server on 127.0.0.1, run on its own event loop in a background thread.

    with ModalStandin() as standin:
        os.environ.update(standin.environ)   # MODAL_SERVER_URL, MODAL_TOKEN_ID, MODAL_TOKEN_SECRET
    """

    def __init__(self, token: tuple[str, str] = ("ak-standin", "as-standin")) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix="modal-standin-"))
        self.state = StandinState(self._tmp, token)
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="modal-standin", daemon=True)
        self._server: Server | None = None

    @property
    def environ(self) -> dict[str, str]:
        token_id, token_secret = self.state.token
        return {"MODAL_SERVER_URL": self.url, "MODAL_TOKEN_ID": token_id, "MODAL_TOKEN_SECRET": token_secret}

    def run(self, coro: Any) -> Any:
        """Run `coro` on the server's loop (state is only touched there) and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def start(self) -> ModalStandin:
        self._thread.start()

        async def serve() -> int:
            self._server = Server([ModalApi(self.state), Router(self.state)])
            await self._server.start("127.0.0.1", 0)
            sockets = self._server._server.sockets  # type: ignore[union-attr]
            return int(sockets[0].getsockname()[1])

        port = self.run(serve())
        self.url = f"http://127.0.0.1:{port}"
        self.state.router_url = self.url
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            for sandbox in self.state.sandboxes.values():
                self.state.finish(sandbox, _Result(status=_Result.GENERIC_STATUS_TERMINATED))
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()

        with contextlib.suppress(Exception):
            self.run(shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> ModalStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
