"""One docker sandbox: a container (and its network) driven through the engine API.

Commands run with `docker exec` in the provider's working folder (`/sandbox` by default); relative file
paths resolve there too, so `put_file("a.txt")` and `exec(["cat", "a.txt"])` see the same file. Files
move as tar archives (`put_archive` / `get_archive`), so any image works, with or without a shell.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import secrets
import tarfile
import threading
from typing import Any, Literal, Protocol

from agentenv.contracts import ExecResult, Sandbox

from agentenv_docker.settings import SANDBOX, DockerSettings


class DockerProvider(Protocol):
    """What a sandbox uses of the provider that made it (the engine client and the settings)."""

    settings: DockerSettings

    @property
    def client(self) -> Any: ...

    def remove_sandbox(self, name: str) -> None: ...


TIMEOUT_EXIT = 124
"""Exit code of a command killed for running past its timeout (the same as coreutils `timeout`)."""


class SandboxGone(RuntimeError):
    """The sandbox's container is missing or stopped, so a command or file operation cannot run."""


class DockerSandbox(Sandbox):
    def __init__(self, provider: DockerProvider, container_id: str, name: str, labels: dict[str, str]) -> None:
        self.provider = provider
        self.container_id = container_id
        self.id = name
        self.labels = dict(labels)

    @classmethod
    def from_container(cls, provider: DockerProvider, container: Any) -> DockerSandbox:
        labels = dict(container.labels or {})
        return cls(provider, container.id, labels.get(SANDBOX, container.name), labels)

    def __repr__(self) -> str:
        return f"DockerSandbox({self.id!r})"

    @property
    def _api(self) -> Any:
        return self.provider.client.api

    def _path(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.provider.settings.workdir, path))

    def _container(self) -> Any:
        from docker.errors import NotFound

        try:
            return self.provider.client.containers.get(self.container_id)
        except NotFound:
            raise SandboxGone(f"sandbox {self.id} is gone (its container was removed)") from None

    # -- commands -----------------------------------------------------------------------------------

    def exec(self, command: list[str], *, timeout: float | None = None) -> ExecResult:
        """Run `command`; past `timeout` seconds it is killed (with its process group) and exits 124.

        A timed command is started through `sh` so that its pid can be recorded and signalled inside the
        container; commands without a timeout need no shell in the image.
        """
        from docker.errors import APIError

        pid_file = f"/tmp/.agentenv-exec-{secrets.token_hex(6)}"
        argv = list(command)
        if timeout is not None:
            argv = ["sh", "-c", f'echo $$ > {pid_file}; exec "$@"', "agentenv-exec", *argv]
        try:
            exec_id = self._api.exec_create(
                self.container_id, argv, stdout=True, stderr=True, workdir=self.provider.settings.workdir
            )["Id"]
        except APIError as exc:
            if exc.status_code in (404, 409):
                raise SandboxGone(f"sandbox {self.id} is not running: {exc.explanation or exc}") from None
            raise
        out: list[bytes] = []
        err: list[bytes] = []

        def pump() -> None:
            for chunk_out, chunk_err in self._api.exec_start(exec_id, stream=True, demux=True):
                if chunk_out:
                    out.append(chunk_out)
                if chunk_err:
                    err.append(chunk_err)

        reader = threading.Thread(target=pump, name=f"exec-{self.id}", daemon=True)
        reader.start()
        reader.join(timeout)
        if reader.is_alive():
            self._kill(pid_file)
            reader.join(5)
            text = b"".join(err).decode("utf-8", "replace")
            return ExecResult(
                exit_code=TIMEOUT_EXIT,
                stdout=b"".join(out).decode("utf-8", "replace"),
                stderr=f"{text}agentenv: command timed out after {timeout}s and was killed\n",
            )
        if timeout is not None:
            self._run_quietly(["rm", "-f", pid_file])
        code = self._api.exec_inspect(exec_id).get("ExitCode")
        return ExecResult(
            exit_code=code if isinstance(code, int) else -1,
            stdout=b"".join(out).decode("utf-8", "replace"),
            stderr=b"".join(err).decode("utf-8", "replace"),
        )

    def _kill(self, pid_file: str) -> None:
        """SIGKILL the process group (or, failing that, the process) whose pid `pid_file` holds."""
        script = (
            f'p=$(cat {pid_file} 2>/dev/null) && {{ kill -KILL -"$p" 2>/dev/null || kill -KILL "$p"; }}; '
            f"rm -f {pid_file}"
        )
        self._run_quietly(["sh", "-c", script])

    def _run_quietly(self, argv: list[str]) -> None:
        with contextlib.suppress(Exception):
            self.provider.client.containers.get(self.container_id).exec_run(argv)

    # -- files --------------------------------------------------------------------------------------

    def put_file(self, path: str, data: bytes) -> None:
        """Write `data` to `path` (relative = under the working folder), creating missing folders."""
        target = self._path(path)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            info = tarfile.TarInfo(target.lstrip("/"))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        if not self._container().put_archive("/", buffer.getvalue()):
            raise OSError(f"sandbox {self.id}: could not write {target}")

    def get_file(self, path: str) -> bytes:
        """The bytes of file `path`; FileNotFoundError when missing, IsADirectoryError for a folder."""
        from docker.errors import NotFound

        target = self._path(path)
        container = self._container()
        try:
            stream, _stat = container.get_archive(target)
        except NotFound:
            raise FileNotFoundError(f"sandbox {self.id}: no file {target}") from None
        raw = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            member = tar.next()
            if member is None:
                raise FileNotFoundError(f"sandbox {self.id}: no file {target}")
            if member.isdir():
                raise IsADirectoryError(f"sandbox {self.id}: {target} is a folder")
            extracted = tar.extractfile(member)
            if extracted is None:  # a link or device: read through `cat` instead
                result = self.exec(["cat", target])
                if result.exit_code != 0:
                    raise OSError(f"sandbox {self.id}: cannot read {target}: {result.stderr.strip()}")
                return result.stdout.encode()
            return extracted.read()

    # -- network, state -----------------------------------------------------------------------------

    def url(self, port: int) -> str:
        """`http://127.0.0.1:HOSTPORT` for container port `port` (published when the sandbox was created)."""
        container = self._container()
        bindings = (container.attrs.get("NetworkSettings", {}).get("Ports") or {}).get(f"{port}/tcp") or []
        if not bindings:
            published = sorted((container.attrs.get("NetworkSettings", {}).get("Ports") or {}).keys())
            raise ValueError(
                f"sandbox {self.id}: port {port} was not published (published: {', '.join(published) or 'none'}); "
                "list it in the spec's `ports`"
            )
        binding = bindings[0]
        host = binding.get("HostIp") or "127.0.0.1"
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"http://{host}:{binding['HostPort']}"

    def status(self) -> Literal["running", "stopped", "missing"]:
        from docker.errors import NotFound

        try:
            container = self.provider.client.containers.get(self.container_id)
        except NotFound:
            return "missing"
        return "running" if container.status == "running" else "stopped"

    def logs(self, tail: int | str = "all") -> str:
        """The container's output so far (its main command's stdout and stderr)."""
        raw: bytes = self._container().logs(tail=tail)
        return raw.decode("utf-8", "replace")

    def teardown(self) -> None:
        """Remove the container (with its anonymous volumes), its network and labelled volumes; idempotent."""
        self.provider.remove_sandbox(self.id)
