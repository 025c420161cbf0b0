"""`WorkspaceEnv`: an env whose state is a working directory, with shell and file tools.

The tree is loaded from a workspace artifact (a folder, a tarball, a git repository at a commit, inline files;
see `sources`), lives in this process's layer store (see `layers`), and is what `exec` commands see at
`/workspace`. To the world it is an env like any other: its tools go through RBAC, triggers and the trajectory,
and `snapshot()`/`restore()`/`fork()` stand for the whole tree, so a world's checkpoint, an RL reset and a
GRPO fork carry the files too. A snapshot's bytes name layers of this process's store: they restore here,
not in another process.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import weakref
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self

from agentenv_runtime import Artifact, ArtifactError, Env, ToolError, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_workspace import container, layers, patch, sandbox, sources

TOKEN_PREFIX = b"agentenv-workspace/1:"
SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})
"""Folders `search` and recursive `list_dir` do not walk into (the agent can still name them)."""
MAX_READ_BYTES = 256 * 1024
MAX_LISTED = 2000
DEFAULT_MOUNT = sandbox.MOUNT_POINT
SANDBOX_VARIABLE = "AGENTENV_WORKSPACE_SANDBOX"
POOL_VARIABLE = "AGENTENV_WORKSPACE_POOL"
RelPath = Annotated[str, Field(min_length=1, max_length=4096)]


class WorkspaceSettings(BaseModel):
    """The sandbox a workspace's commands run in; Harbor's `[environment]` limits map onto these."""

    model_config = ConfigDict(extra="forbid")

    sandbox: Literal["process", "docker"] = Field(
        default_factory=lambda: "docker" if os.environ.get(SANDBOX_VARIABLE) == "docker" else "process",
        description="process: commands on this host (rlimits, bubblewrap); docker: one container per tree "
        "(default: $AGENTENV_WORKSPACE_SANDBOX, else process).",
    )
    image: str = Field(
        "", description="Docker image for the docker sandbox (default: agentenv-docker's local base image)."
    )
    dockerfile: str = Field(
        "",
        description="A folder with a Dockerfile for the docker sandbox, relative to the workspace artifact's "
        "folder (e.g. ../envs/git); built on first use, cached by content hash.",
    )
    warm_pool: int = Field(
        default_factory=lambda: int(os.environ.get(POOL_VARIABLE) or 0),
        ge=0,
        le=64,
        description="Docker sandbox: containers kept started so an episode takes one instead of waiting for a "
        "`docker run` (default: $AGENTENV_WORKSPACE_POOL, else 0).",
    )
    isolation: Literal["auto", "bwrap", "none"] = Field(
        "auto", description="bwrap: namespaces, only the workspace reachable; none: rlimits only; auto: bwrap if found."
    )
    network: bool = Field(False, description="Let commands reach the network (off by default).")
    mount_point: str = Field(
        DEFAULT_MOUNT,
        pattern=r"^/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$",
        description="Where commands see the tree (bubblewrap only), e.g. /app for a Harbor task's WORKDIR.",
    )
    cpu_seconds: int = Field(300, ge=1, description="CPU seconds one command may use (RLIMIT_CPU).")
    memory_mb: int = Field(4096, ge=16, description="Address space of one command's processes, MiB (RLIMIT_AS).")
    processes: int = Field(
        512,
        ge=1,
        description="Processes per user (RLIMIT_NPROC, which Linux does not apply to root); the process sandbox "
        "also limits one command's tasks (processes and threads) to it with a pids cgroup where it can make one.",
    )
    file_size_mb: int = Field(1024, ge=1, description="Largest file a command may write, MiB (RLIMIT_FSIZE).")
    exec_timeout: float = Field(600.0, gt=0, description="Longest a command may run, seconds; `exec` may ask less.")
    output_limit: int = Field(32_000, ge=256, description="Bytes of a command's output returned; the rest is cut.")


def token_of(layer_ids: tuple[str, ...], image: str = "") -> bytes:
    """A snapshot's bytes: the tree's layers, and the committed image of its container when it has one."""
    body: object = {"layers": list(layer_ids), "image": image} if image else list(layer_ids)
    return TOKEN_PREFIX + json.dumps(body).encode()


def state_of(data: bytes) -> tuple[tuple[str, ...], str]:
    """The layers and the container image ("" for the configured one) a snapshot names."""
    if not data.startswith(TOKEN_PREFIX):
        raise ValueError("not a workspace snapshot (it was made by another env or another version)")
    body = json.loads(data[len(TOKEN_PREFIX) :])
    if isinstance(body, dict):
        return tuple(body["layers"]), str(body["image"])
    return tuple(body), ""


class WorkspaceEnv(Env):
    """A working directory in a sandbox: run commands, read, write, search and patch files."""

    name: ClassVar[str] = "workspace"
    description: ClassVar[str] = (
        "A code workspace (a sandboxed working directory at /workspace): run shell commands, read and write "
        "files, list folders, search with a regex, apply unified diffs."
    )
    Settings: ClassVar[type[BaseModel]] = WorkspaceSettings
    settings: WorkspaceSettings
    _loaded_layers: ClassVar[dict[str, str]] = {}
    """Artifact sha256 → the layer it was materialized into (per process: every template loads once)."""

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        self._layers: tuple[str, ...] = ()
        self._image = ""
        """Docker sandbox: the committed image the tree's container starts from ("" for the configured one)."""
        self._started_from = ""
        """What `_image` was when the running container started (its own changes are relative to it)."""
        self._live: layers.Live | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._container: container.Container | None = None
        super().__init__(settings)

    # ---- the tree ----------------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        """The live tree on the host (made on first use after a load, a restore or a fork)."""
        return self._materialize_live().path

    @property
    def logs(self) -> Path:
        """The folder commands see as `/logs` (Harbor's reward file goes to `/logs/verifier/reward.txt`)."""
        folder = self._materialize_live().folder / "logs"
        folder.mkdir(exist_ok=True)
        return folder

    def _materialize_live(self) -> layers.Live:
        if self._live is None:
            store = layers.store()
            self._live = store.live(self._layers)
            self._finalizer = weakref.finalize(self, store.discard, self._live)
        return self._live

    def _drop_live(self) -> None:
        self._container = None
        if self._finalizer is not None:
            self._finalizer()  # discards the live tree once, now
            self._finalizer = None
        self._live = None

    def close(self) -> None:
        """Give the live tree back (it is removed in the background); the env can still be restored."""
        self._drop_live()

    def mark_changed(self) -> None:
        """Say the tree may differ from its layers (tools call it; so must code that writes to `root`)."""
        if self._live is not None:
            self._live.touched = True

    # ---- state: snapshot, restore, fork --------------------------------------------------------------
    def snapshot(self) -> bytes:
        """Bytes naming the layers that hold the tree as it is (a layer commit when it changed), and in the
        Docker sandbox the image holding what commands changed outside the tree (a `docker commit`, only when
        something did)."""
        self._commit()
        return token_of(self._layers, self._image)

    def _commit(self) -> None:
        if self._live is None:
            return
        changed = self._live.touched
        self._layers = layers.store().commit(self._live)
        if changed and self._container is not None:  # no command since the last snapshot: nothing to look at
            committed = container.commit(self._container)
            self._image = committed if committed is not None else self._started_from

    def restore(self, data: bytes) -> None:
        """Back to a snapshot: the live tree is replaced by a fresh one over those layers, made on first use
        (and its container, started from the snapshot's image, on the first command)."""
        wanted, image = state_of(data)
        for layer_id in wanted:
            layers.store().layer(layer_id)  # KeyError naming the problem before anything changes
        if image and not container.known_image(image):
            raise KeyError(
                f"workspace container image {image[:19]!r} is not a commit of this process's store; a workspace "
                "snapshot can be restored only in the process that made it"
            )
        if self._live is not None and not self._live.touched and self._live.layers == wanted and self._image == image:
            return
        self._drop_live()
        self._layers, self._image = wanted, image

    def hold(self) -> None:
        """Nothing to hold: a restore of a workspace is already a fresh mount."""

    def rewind(self, data: bytes) -> bool:
        return False

    def reset(self) -> None:
        self.restore(self._initial)

    def fork(self) -> Self:
        """An independent workspace with the same files (a new writable tree over the same layers)."""
        data = self.snapshot()
        clone = type(self)(self.settings)
        own = clone.__dict__
        for key, value in self.__dict__.items():
            if key not in own or key in ("clock", "_initial"):
                own[key] = value
        clone.loaded = list(self.loaded)
        clone._layers, clone._image = state_of(data)
        return clone

    def state_digest(self) -> str:
        """SHA-256 over every path, mode bit for executables, and content of the tree (order-independent)."""
        hasher = hashlib.sha256()
        root = self.root
        for path in sorted(_walk(root, skip=frozenset())):
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                hasher.update(f"L {rel} -> {os.readlink(path)}\n".encode())
            elif stat.S_ISREG(info.st_mode):
                executable = "x" if info.st_mode & 0o111 else "-"
                hasher.update(f"F {rel} {executable} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
        return hasher.hexdigest()

    # ---- data --------------------------------------------------------------------------------------
    def load(self, artifact: Artifact) -> None:
        """Put the artifact's files on top of the tree; the result becomes `reset()`'s state."""
        if artifact.env != self.name:
            raise ArtifactError(f"{artifact.source}: artifact is for env {artifact.env!r}, not {self.name!r}")
        store = layers.store()
        layer_id = self._loaded_layers.get(artifact.sha256)
        if layer_id is None or layer_id not in store.layers:
            layer_id, path = store.new_layer()
            try:
                sources.materialize(artifact, path)
            except BaseException:
                shutil.rmtree(path, ignore_errors=True)
                store.layers.pop(layer_id, None)
                raise
            self._loaded_layers[artifact.sha256] = layer_id
        self._commit()
        base = self._layers
        self._drop_live()
        self._layers = (layer_id, *base) if store.overlay else self._flatten(layer_id, base)
        self.loaded.append(artifact)
        self._initial = token_of(self._layers, self._image)

    def _flatten(self, layer_id: str, below: tuple[str, ...]) -> tuple[str, ...]:
        """Copy mode keeps one layer per state: the new files over a copy of what was there."""
        if not below:
            return (layer_id,)
        store = layers.store()
        merged_id, merged = store.new_layer()
        shutil.copytree(store.layer(below[0]), merged, symlinks=True, dirs_exist_ok=True)
        shutil.copytree(store.layer(layer_id), merged, symlinks=True, dirs_exist_ok=True)
        return (merged_id,)

    def export(self) -> dict[str, Any]:
        """The tree as an inline-files artifact body (text files; `.git` left out)."""
        root = self.root
        files = {}
        for path in sorted(_walk(root)):
            if path.is_file() and not path.is_symlink():
                try:
                    files[path.relative_to(root).as_posix()] = path.read_text()
                except UnicodeDecodeError:
                    continue
        return {"files": files}

    # ---- paths -------------------------------------------------------------------------------------
    def resolve(self, path: str, field: str = "path") -> Path:
        """A path the agent gave (relative, or under /workspace) as a host path inside the tree; anything that
        leaves the tree, through `..` or a symlink, is refused."""
        text, mount = path.strip(), self.settings.mount_point
        if text == mount or text.startswith(mount + "/"):
            text = text[len(mount) :].lstrip("/") or "."
        if os.path.isabs(text):
            raise ToolError(
                f"{field}: {path!r} is outside the workspace; give a path relative to it (or under /workspace)",
                code="invalid_arguments",
                field=field,
            )
        root = self.root.resolve()
        candidate = (root / text).resolve()
        if candidate != root and not candidate.is_relative_to(root):
            raise ToolError(
                f"{field}: {path!r} leads outside the workspace; stay inside it",
                code="invalid_arguments",
                field=field,
            )
        return candidate

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.root.resolve()).as_posix() or "."

    # ---- commands ----------------------------------------------------------------------------------
    def isolated(self) -> bool:
        """Whether commands run under bubblewrap; ToolError when it is asked for and missing."""
        mode = self.settings.isolation
        if mode == "none":
            return False
        found = sandbox.bwrap_path() is not None
        if mode == "bwrap" and not found:
            raise ToolError(
                "workspace setting `isolation` is `bwrap` but bubblewrap is not installed; install it "
                '(apt-get install bubblewrap) or set isolation = "none" for trusted agents',
                code="sandbox_unavailable",
            )
        return found

    def run_command(
        self,
        command: str,
        *,
        cwd: str = ".",
        timeout: float | None = None,
        binds: dict[str, Path] | None = None,
        environment: dict[str, str] | None = None,
    ) -> sandbox.Outcome:
        """Run a command in the sandbox (the `exec` tool and the test verifiers both come here); `binds` show host
        folders read-only at those paths (bubblewrap only), `environment` adds variables."""
        settings = self.settings
        folder = self.resolve(cwd, "cwd")
        if not folder.is_dir():
            raise ToolError(f"cwd: {cwd!r} is not a folder in the workspace", code="invalid_arguments", field="cwd")
        self.mark_changed()
        limits = sandbox.Limits(settings.cpu_seconds, settings.memory_mb, settings.processes, settings.file_size_mb)
        if settings.sandbox == "docker":
            wait = min(timeout or settings.exec_timeout, settings.exec_timeout)
            if environment:
                command = "".join(f"export {k}={shlex.quote(v)}; " for k, v in environment.items()) + command
            running: container.Container = self.container(limits, binds or {})
            return running.exec(command, cwd=self._relative(folder), timeout=wait, output_limit=settings.output_limit)
        return sandbox.run(
            command,
            self.root,
            self.logs,
            cwd=self._relative(folder),
            timeout=min(timeout or settings.exec_timeout, settings.exec_timeout),
            output_limit=settings.output_limit,
            limits=limits,
            network=settings.network,
            isolated=self.isolated(),
            mount_point=settings.mount_point,
            binds=binds,
            environment=environment,
        )

    def container(self, limits: sandbox.Limits, binds: dict[str, Path]) -> container.Container:
        """This tree's container, started on the first command (with that command's read-only `binds`)."""
        if self._container is None:
            live = self._materialize_live()
            extra = live.folder / "binds"
            for target, source in binds.items():  # shown through the run folder: the container is made once
                shutil.copytree(source, extra / target.strip("/"), dirs_exist_ok=True)
            image = self.settings.image or container.DEFAULT_IMAGE
            if self.settings.dockerfile:
                base = Path(self.loaded[-1].source).parent if self.loaded else Path.cwd()
                image = container.ensure_image((base / self.settings.dockerfile).resolve())
            self._started_from, image = self._image, self._image or image
            if self.settings.warm_pool and not binds and not self._image:  # the pool holds the configured image
                warm = container.pool(
                    image,
                    mount_point=self.settings.mount_point,
                    network=self.settings.network,
                    limits=limits,
                    size=self.settings.warm_pool,
                )
                self._container, release = warm.claim(live.path, self.logs)
                live.before_removal.append(release)
                return self._container
            self._container = container.start(
                image,
                live.path,
                self.logs,
                live.folder / "run",
                mount_point=self.settings.mount_point,
                network=self.settings.network,
                limits=limits,
                binds={target: extra / target.strip("/") for target in binds},
            )
            running = self._container
            live.before_removal.append(running.remove)
        return self._container

    # ---- tools -------------------------------------------------------------------------------------
    @tool(name="exec")
    def exec_command(
        self,
        command: Annotated[str, Field(min_length=1, max_length=100_000)],
        cwd: RelPath = ".",
        timeout: Annotated[float, Field(gt=0, le=3600)] | None = None,
    ) -> dict[str, Any]:
        """Run a shell command (`sh -c`) in the workspace, which commands see as /workspace.

        Args:
            command: The command line, e.g. `python -m unittest -q` or `git diff`.
            cwd: Folder to run in, relative to the workspace root.
            timeout: Seconds before the command and everything it started are killed (at most the workspace's limit).
        """
        return self.run_command(command, cwd=cwd, timeout=timeout).as_dict()

    @tool(read_only=True)
    def read_file(
        self,
        path: RelPath,
        start_line: Annotated[int, Field(ge=1)] = 1,
        end_line: Annotated[int, Field(ge=1)] | None = None,
    ) -> dict[str, Any]:
        """Read a text file, whole or a range of lines.

        Args:
            path: File path relative to the workspace root.
            start_line: First line to return (1-based).
            end_line: Last line to return (inclusive); omit for the end of the file.
        """
        target = self.resolve(path)
        if not target.is_file():
            raise ToolError(f"path: no file {path!r} in the workspace", code="not_found", field="path")
        raw = target.read_bytes()
        lines = raw[: MAX_READ_BYTES * 4].decode("utf-8", errors="replace").splitlines(keepends=True)
        last = min(end_line or len(lines), len(lines))
        if end_line is not None and end_line < start_line:
            raise ToolError("end_line: must not be before start_line", code="invalid_arguments", field="end_line")
        content = "".join(lines[start_line - 1 : last])
        truncated = len(content) > MAX_READ_BYTES
        return {
            "path": self._relative(target),
            "content": content[:MAX_READ_BYTES],
            "start_line": start_line,
            "end_line": last,
            "total_lines": len(lines),
            "truncated": truncated,
        }

    @tool
    def write_file(self, path: RelPath, content: Annotated[str, Field(max_length=16 * 1024 * 1024)]) -> dict[str, Any]:
        """Create or overwrite a text file (folders are made as needed).

        Args:
            path: File path relative to the workspace root.
            content: The whole new content of the file.
        """
        target = self.resolve(path)
        if target.is_dir():
            raise ToolError(f"path: {path!r} is a folder", code="invalid_arguments", field="path")
        self.mark_changed()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return {"path": self._relative(target), "bytes": len(content.encode())}

    @tool(read_only=True)
    def list_dir(self, path: RelPath = ".", recursive: bool = False) -> dict[str, Any]:
        """List a folder's entries (name, type, size); `recursive` walks below it, skipping .git and caches.

        Args:
            path: Folder relative to the workspace root.
            recursive: Also list everything below it.
        """
        folder = self.resolve(path)
        if not folder.is_dir():
            raise ToolError(f"path: no folder {path!r} in the workspace", code="not_found", field="path")
        found = sorted(_walk(folder)) if recursive else sorted(folder.iterdir())
        entries = []
        for entry in found[:MAX_LISTED]:
            info = entry.lstat()
            kind = "link" if stat.S_ISLNK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) else "file"
            entries.append({"path": self._relative(entry), "type": kind, "size": info.st_size if kind == "file" else 0})
        return {"path": self._relative(folder), "entries": entries, "truncated": len(found) > MAX_LISTED}

    @tool(read_only=True)
    def search(
        self,
        pattern: Annotated[str, Field(min_length=1, max_length=1000)],
        path: RelPath = ".",
        glob: str | None = None,
        max_results: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        """Search files for a regular expression (Python syntax); one match per line.

        Args:
            pattern: The regular expression, e.g. `def \\w+_total`.
            path: Folder (or file) to search, relative to the workspace root.
            glob: Only files whose name matches this pattern, e.g. `*.py`.
            max_results: Stop after this many matching lines.
        """
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError(
                f"pattern: not a valid regular expression ({exc})", code="invalid_arguments", field="pattern"
            ) from None
        start = self.resolve(path)
        files = [start] if start.is_file() else sorted(p for p in _walk(start) if p.is_file() and not p.is_symlink())
        matches: list[dict[str, Any]] = []
        for file in files:
            if glob and not fnmatch.fnmatch(file.name, glob):
                continue
            try:
                text = file.read_text(errors="strict")
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable: not searched
            for number, line in enumerate(text.splitlines(), start=1):
                if regex.search(line):
                    matches.append({"path": self._relative(file), "line": number, "text": line[:500]})
                    if len(matches) >= max_results:
                        return {"matches": matches, "truncated": True}
        return {"matches": matches, "truncated": False}

    @tool
    def apply_patch(
        self, patch_text: Annotated[str, Field(min_length=1, max_length=16 * 1024 * 1024)]
    ) -> dict[str, Any]:
        """Apply a unified diff (as `git diff` or `diff -u` writes it); all files change or none do.

        Args:
            patch_text: The diff: `--- a/FILE` / `+++ b/FILE` headers and `@@ -l,n +l,n @@` hunks.
        """
        try:
            patches = patch.parse(patch_text)
        except patch.PatchError as exc:
            raise ToolError(f"patch_text: {exc}", code="invalid_arguments", field="patch_text") from None
        planned: list[tuple[Path, str | None]] = []
        for file_patch in patches:
            target = self.resolve(file_patch.path, "patch_text")
            original = target.read_text() if file_patch.old_path is not None and target.is_file() else None
            if file_patch.old_path is None and target.exists():
                raise ToolError(
                    f"patch_text: {file_patch.path}: the diff creates it but it already exists",
                    code="patch_failed",
                    field="patch_text",
                )
            try:
                planned.append((target, patch.apply(file_patch, original)))
            except patch.PatchError as exc:
                raise ToolError(f"patch_text: {exc}", code="patch_failed", field="patch_text") from None
        self.mark_changed()
        for target, text in planned:
            if text is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        return {"files": [self._relative(target) for target, _ in planned]}


def _walk(folder: Path, skip: frozenset[str] = SKIP_DIRS) -> list[Path]:
    """Every entry below `folder` (not following symlinks), leaving out `skip` folders."""
    found: list[Path] = []
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        base = Path(current)
        found.extend(base / d for d in dirs)
        found.extend(base / f for f in files)
    return found
