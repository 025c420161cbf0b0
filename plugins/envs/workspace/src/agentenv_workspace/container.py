"""The Docker sandbox: one container per live workspace tree, commands through a small exec server inside it.

The container runs `server.py` (below, standard library only) as its main process; the server listens on a
unix socket in a host folder bind-mounted at `/run/agentenv`, so commands reach it with no network at all
(`--network none` unless the workspace allows the network) and without a `docker exec` per call. The tree
itself is the host's live tree (an overlay mount, see `layers`) bind-mounted at the workspace's mount point,
so snapshot, reset and fork of the tree stay layer operations on the host. What commands change outside the
tree (packages installed in the container, files in /usr/local) is the container's own writable layer: a
snapshot commits it to an image (`commit`) when it is not empty, and a fork or a restore of that snapshot
starts its container from that image; when it is empty (most steps) nothing is committed and the container
starts from the configured image, through the warm pool when there is one.

Containers and commits carry the owner labels of agentenv-docker (`agentenv.owner.*`) and
`agentenv.workspace=1`; `prune()` removes those whose owning process is gone.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_workspace import layers
from agentenv_workspace.sandbox import LOGS_POINT, SAFE_PATH, Limits, Outcome

DEFAULT_IMAGE = "agentenv/base:py3.11-bookworm"
LABEL = "agentenv.workspace"
RUN_POINT = "/run/agentenv"
SLOT_POINT = "/agentenv-slot"
SOCKET = "exec.sock"
SERVER = r"""
import json, os, resource, selectors, signal, socketserver, sys, threading, time

LIMITS = json.loads(sys.argv[2])
CPU = LIMITS.pop("RLIMIT_CPU")
for name, value in LIMITS.items():  # inherited by every command
    resource.setrlimit(getattr(resource, name), (value, value))
SPAWN = threading.Lock()  # posix_spawn takes the server's cwd: one chdir-and-spawn at a time


def run(request):
    started = time.perf_counter()
    deadline = started + request["timeout"]
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_end, 1), (os.POSIX_SPAWN_DUP2, write_end, 2)]
    try:  # posix_spawn (vfork and exec) costs half of what subprocess.Popen does
        with SPAWN:
            os.chdir(request["cwd"])
            pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", request["command"]], request["env"],
                                 file_actions=actions, setsid=True)
    finally:
        os.close(write_end)
    try:
        resource.prlimit(pid, resource.RLIMIT_CPU, (CPU, CPU))
    except ProcessLookupError:
        pass
    limit, kept, size, timed_out = request["limit"], bytearray(), 0, False
    with selectors.DefaultSelector() as selector:  # keep at most limit + 1 bytes, but drain everything
        selector.register(read_end, selectors.EVENT_READ)
        while True:
            left = deadline - time.perf_counter()
            if not timed_out and (left <= 0 or not selector.select(left)):
                timed_out, deadline = True, time.perf_counter() + 1.0  # a moment for what is buffered
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                continue
            if timed_out and (left <= 0 or not selector.select(left)):
                break  # an escaped process (its own session) still holds the pipe
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            size += len(chunk)
            kept += chunk[: limit + 1 - len(kept)]
    os.close(read_end)
    status = os.waitpid(pid, 0)[1] if timed_out else wait(pid, deadline)
    code = 124 if timed_out or status is None else os.waitstatus_to_exitcode(status)
    return {"exit_code": code, "timed_out": timed_out or status is None,
            "output": bytes(kept[:limit]).decode("utf-8", "replace"), "truncated": size > limit,
            "seconds": time.perf_counter() - started}


def wait(pid, deadline):
    # the output ended: the shell has (nearly always) exited; its status, or None at the deadline (killed)
    pause = 0.0002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.perf_counter() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:  # one request a line; a client keeps its connection for many (none: a probe)
            try:
                reply = run(json.loads(line))
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            self.wfile.write(json.dumps(reply).encode() + b"\n")


class Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


if len(sys.argv) > 3:  # a warm-pool container: the tree arrives later, mounted below the slot
    slot, mount_point = sys.argv[3], sys.argv[4]
    for link, target in ((mount_point, slot + "/tree"), ("/logs", slot + "/logs")):
        if not os.path.lexists(link):
            os.makedirs(os.path.dirname(link) or "/", exist_ok=True)
            os.symlink(target, link)
path = sys.argv[1]
if os.path.exists(path):
    os.unlink(path)
Server(path, Handler).serve_forever()
"""


class ContainerError(RuntimeError):
    """The container could not start or stopped answering; the message says why and what to check."""


@dataclass
class Container:
    container_id: str
    socket_path: Path
    mount_point: str
    image: str = ""
    """The image it was started from (a configured image, or a commit of another container)."""
    upper: Path | None = None
    """Its writable layer as a host folder, when the engine's storage driver keeps one (overlay2,
    fuse-overlayfs) and this process can read it; else its changes are asked of `docker diff`."""
    lower: tuple[Path, ...] = ()
    """Its image's layers as host folders (top first), beside `upper`."""
    mounts: tuple[str, ...] = ()
    """Its paths that are mounts (the tree, /logs, the run folder, a warm-pool slot): not its own files."""
    committed: tuple[str, str] | None = None
    """(signature of its changes, image) of its last commit, so an unchanged container is committed once."""
    _idle: list[socket.socket] = field(default_factory=list, repr=False, compare=False)
    """Connections to the exec server waiting for the next command (one per concurrent caller)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def exec(self, command: str, *, cwd: str, timeout: float, output_limit: int) -> Outcome:
        """Run `command` through the exec server: one request and one reply on a kept connection."""
        workdir = f"{self.mount_point}/{cwd}".rstrip("/") if cwd not in ("", ".") else self.mount_point
        request = {
            "command": command,
            "cwd": workdir,
            "timeout": timeout,
            "limit": output_limit,
            "env": {
                "PATH": SAFE_PATH,
                "HOME": self.mount_point,
                "LANG": "C.UTF-8",
                "PYTHONDONTWRITEBYTECODE": "1",
                "PWD": workdir,  # `pwd` says the mount point even where it is a link into a warm-pool slot
            },
        }
        name = self.container_id[:12]
        try:
            client = self._connection()
        except OSError as exc:
            raise ContainerError(f"container {name}: exec server unreachable ({exc})") from exc
        try:
            client.settimeout(timeout + 30)
            client.sendall(json.dumps(request).encode() + b"\n")
            reply = _read_line(client)
        except OSError as exc:
            client.close()
            raise ContainerError(f"container {name}: exec server unreachable ({exc})") from exc
        if not reply.endswith(b"\n"):
            client.close()
            raise ContainerError(f"container {name}: the exec server closed without answering")
        with self._lock:
            self._idle.append(client)
        data = json.loads(reply)
        if "error" in data:
            raise ContainerError(f"container {name}: the exec server could not run the command: {data['error']}")
        return Outcome(data["exit_code"], data["output"], data["truncated"], data["timed_out"], data["seconds"])

    def _connection(self) -> socket.socket:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            client.connect(str(self.socket_path))
        except OSError:
            client.close()
            raise
        return client

    def close(self) -> None:
        """Close the kept connections (the container itself stays; `remove` removes it)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for client in idle:
            client.close()

    def remove(self) -> None:
        """Close the connections and remove the container (gone already is fine)."""
        self.close()
        remove(self.container_id, self.socket_path)


def _read_line(client: socket.socket) -> bytes:
    """One reply: JSON on one line (the server answers one request at a time, so nothing follows it); without
    its line end when the server closed the connection first."""
    chunks = []
    while True:
        chunk = client.recv(1 << 16)
        chunks.append(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return b"".join(chunks)


def _client() -> Any:
    from agentenv_docker.api import engine

    return engine()


def limits_of(limits: Limits) -> dict[str, int]:
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_FSIZE": limits.file_size_mb * 1024 * 1024,
        "RLIMIT_CORE": 0,
    }


def start(
    image: str,
    tree: Path,
    logs: Path,
    run_dir: Path,
    *,
    mount_point: str,
    network: bool,
    limits: Limits,
    binds: dict[str, Path] | None = None,
    ready_timeout: float = 60.0,
) -> Container:
    """Start a container for `tree` and wait until its exec server answers."""
    from agentenv_docker.api import ensure_base_image, owner_labels

    if image == DEFAULT_IMAGE:
        ensure_base_image(image, log=lambda message: None)  # built from this machine on first use
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "server.py").write_text(SERVER)
    socket_path = layers.short_socket(run_dir / SOCKET)
    try:
        container = _client().containers.run(
            image,
            ["python3", "-B", f"{RUN_POINT}/server.py", f"{RUN_POINT}/{SOCKET}", json.dumps(limits_of(limits))],
            detach=True,
            network_mode=None if network else "none",
            volumes={
                str(tree): {"bind": mount_point, "mode": "rw"},
                str(logs): {"bind": LOGS_POINT, "mode": "rw"},
                str(run_dir): {"bind": RUN_POINT, "mode": "rw"},
                **{str(source): {"bind": target, "mode": "ro"} for target, source in (binds or {}).items()},
            },
            working_dir=mount_point,
            labels={**owner_labels(), LABEL: "1"},
            mem_limit=f"{limits.memory_mb}m",
            pids_limit=limits.processes,
        )
    except Exception as exc:
        raise ContainerError(
            f"docker sandbox: cannot start a container from {image!r} ({type(exc).__name__}: {exc}); "
            "is the engine running and the image built (agentenv docker base-image)?"
        ) from exc
    _wait(container.id, socket_path, ready_timeout)
    mounts = (mount_point, LOGS_POINT, RUN_POINT, SLOT_POINT, *(binds or {}))  # an image committed from a warm
    # container links the mount point into its slot, where the engine then mounts the tree
    return Container(container.id, socket_path, mount_point, image, *layer_dirs(container.attrs), mounts)


@dataclass
class Warm:
    """A started container waiting for a tree: its slot folder shows, inside it, whatever is mounted below."""

    container: Container
    slot: Path


class Pool:
    """Started containers of one kind (image, network, limits, mount point), so an episode does not wait for a
    `docker run`: claiming one bind-mounts the tree and the logs folder into its slot (propagated into the
    container, see `layers.bind_mount`) and starts a replacement in the background."""

    def __init__(self, folder: Path, image: str, *, mount_point: str, network: bool, limits: Limits, size: int) -> None:
        self.folder, self.image, self.size = folder, image, size
        self.mount_point, self.network, self.limits = mount_point, network, limits
        self.idle: list[Warm] = []
        self.lock = threading.Lock()
        self.filling: threading.Thread | None = None

    def _start_one(self) -> Warm:
        from agentenv_docker.api import ensure_base_image, owner_labels

        if self.image == DEFAULT_IMAGE:
            ensure_base_image(self.image, log=lambda message: None)
        slot = self.folder / uuid.uuid4().hex[:12]
        (slot / "tree").mkdir(parents=True)
        (slot / "logs").mkdir()
        layers.bind_mount(slot, slot, shared=True)
        run_dir = self.folder / f"{slot.name}.run"
        run_dir.mkdir()
        (run_dir / "server.py").write_text(SERVER)
        import docker

        mount = docker.types.Mount(SLOT_POINT, str(slot), type="bind", propagation="rslave")
        limits = json.dumps(limits_of(self.limits))
        started = _client().containers.run(
            self.image,
            ["python3", "-B", f"{RUN_POINT}/server.py", f"{RUN_POINT}/{SOCKET}", limits, SLOT_POINT, self.mount_point],
            detach=True,
            network_mode=None if self.network else "none",
            mounts=[mount],
            volumes={str(run_dir): {"bind": RUN_POINT, "mode": "rw"}},
            labels={**owner_labels(), LABEL: "1"},
            mem_limit=f"{self.limits.memory_mb}m",
            pids_limit=self.limits.processes,
        )
        socket_path = layers.short_socket(run_dir / SOCKET)
        _wait(started.id, socket_path)
        mounts = (SLOT_POINT, RUN_POINT, self.mount_point, LOGS_POINT)  # the last two: links into the slot
        found = layer_dirs(started.attrs)
        return Warm(Container(started.id, socket_path, self.mount_point, self.image, *found, mounts), slot)

    def fill(self) -> None:
        """Start containers until `size` wait idle."""
        while True:
            with self.lock:
                if len(self.idle) >= self.size:
                    return
            warm = self._start_one()
            with self.lock:
                self.idle.append(warm)

    def _refill(self) -> None:
        with self.lock:
            if self.filling is None or not self.filling.is_alive():
                self.filling = threading.Thread(target=self.fill, name="workspace-pool", daemon=True)
                self.filling.start()

    def claim(self, tree: Path, logs: Path) -> tuple[Container, Callable[[], None]]:
        """A started container showing `tree` at the mount point; and what gives it back (removes it)."""
        with self.lock:
            warm = self.idle.pop() if self.idle else None
        if warm is None:
            warm = self._start_one()
        self._refill()
        layers.bind_mount(tree, warm.slot / "tree")
        layers.bind_mount(logs, warm.slot / "logs")

        def release() -> None:
            warm.container.remove()
            layers.remove_tree(warm.slot)

        return warm.container, release

    def close(self) -> None:
        if self.filling is not None:
            self.filling.join()
        with self.lock:
            idle, self.idle = self.idle, []
        for warm in idle:
            warm.container.remove()
            layers.remove_tree(warm.slot)


_pools: dict[tuple[Any, ...], Pool] = {}
_pools_lock = threading.Lock()


def pool(image: str, *, mount_point: str, network: bool, limits: Limits, size: int) -> Pool:
    """The process's pool for containers of this kind (made, and filled in the background, on first use)."""
    key = (image, mount_point, network, limits, size, id(layers.store()))
    with _pools_lock:
        found = _pools.get(key)
        if found is None:
            store = layers.store()
            folder = store.folder / "pool" / uuid.uuid4().hex[:8]
            folder.mkdir(parents=True)
            found = _pools[key] = Pool(
                folder, image, mount_point=mount_point, network=network, limits=limits, size=size
            )
            store.on_close.append(found.close)
            found._refill()
        return found


def _wait(container_id: str, socket_path: Path, ready_timeout: float = 60.0) -> None:
    deadline = time.monotonic() + ready_timeout
    while not _answers(socket_path):  # the socket file appears at bind(), before listen(): connect to be sure
        if time.monotonic() > deadline:
            remove(container_id)
            raise ContainerError(f"docker sandbox: the exec server in {container_id[:12]} did not start in time")
        time.sleep(0.005)


def _answers(socket_path: Path) -> bool:
    if not socket_path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(socket_path))
        except OSError:
            return False
    return True


COMMIT_LABEL = "agentenv.workspace.commit"
COMMIT_REPOSITORY = "agentenv-workspace-commit"


def layer_dirs(attrs: dict[str, Any]) -> tuple[Path | None, tuple[Path, ...]]:
    """A container's writable layer and the image's layers below it as host folders (from `docker inspect`);
    (None, ()) unless this process can read them (a local engine on overlay2 or fuse-overlayfs, as root)."""
    data = (attrs.get("GraphDriver") or {}).get("Data") or {}
    upper = Path(data["UpperDir"]) if data.get("UpperDir") else None
    if upper is None or not upper.is_dir() or not os.access(upper, os.R_OK | os.X_OK):
        return None, ()
    lower = tuple(Path(p) for p in str(data.get("LowerDir") or "").split(":") if p)
    return upper, tuple(p for p in lower if p.is_dir())


def _mount_related(path: str, mounts: tuple[str, ...]) -> bool:
    """Whether a changed path is a mount point, below one, or a folder on the way to one (made by the engine)."""
    return any(path == m or path.startswith(m + "/") or m.startswith(path + "/") for m in mounts)


def _whited_out(name: str, info: os.stat_result) -> str | None:
    """The name a whiteout entry deletes: overlayfs marks it with a 0/0 character device of that name,
    fuse-overlayfs and aufs with a `.wh.NAME` file (`.wh..wh..opq` and `.wh..opq` mark opaque folders)."""
    if name.startswith(".wh."):
        return None if name.startswith(".wh..wh.") or name == ".wh..opq" else name[4:]
    return name if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0 else None


def _upper_entries(upper: Path, lower: tuple[Path, ...], mounts: tuple[str, ...]) -> list[str]:
    """Each changed path of a writable layer outside the mounts, with its kind, size and modification time.

    Left out, as no change to carry: a folder the image already has (it is in the layer because something
    below it changed, which is listed, or because its times changed: a file made and deleted in /tmp), and a
    whiteout of a name the image does not have (fuse-overlayfs leaves one where a new file was deleted)."""

    def fail(error: OSError) -> None:
        raise error

    def in_image(path: str, folder: bool) -> bool:
        for layer in lower:
            try:
                info = os.lstat(f"{layer}{path}")
            except OSError:
                continue
            return stat.S_ISDIR(info.st_mode) or not folder
        return False

    found = []
    top = str(upper)
    for current, dirs, files in os.walk(top, onerror=fail):
        inside = current[len(top) :]
        dirs[:] = [d for d in dirs if f"{inside}/{d}" not in mounts]  # a mount point's own marks stay out
        for name in dirs + files:
            path = f"{inside}/{name}"
            if _mount_related(path, mounts) or (name in dirs and in_image(path, True)):
                continue
            info = os.lstat(os.path.join(current, name))
            deleted = None if name in dirs else _whited_out(name, info)
            if deleted is not None and not in_image(f"{inside}/{deleted}", False):
                continue
            link = os.readlink(os.path.join(current, name)) if stat.S_ISLNK(info.st_mode) else ""
            found.append(f"{path}\0{info.st_mode:o} {info.st_size} {info.st_mtime_ns} {info.st_rdev} {link}")
    return found


def outside_signature(running: Container) -> str | None:
    """What `running` changed in its own file system (outside its mounts: installed packages, /usr/local, /tmp)
    as a signature: None when nothing. Read from its writable layer when this host shows it (a walk of the few
    changed entries); else from `docker diff` (which walks the whole file system on some drivers and tells no
    content apart, so then every change counts as new)."""
    if running.upper is not None:
        try:
            entries = _upper_entries(running.upper, running.lower, running.mounts)
        except OSError:
            entries = None
        if entries is not None:
            return hashlib.sha256("\n".join(sorted(entries)).encode()).hexdigest() if entries else None
    changes = _client().api.diff(running.container_id) or []
    if not [c for c in changes if not _mount_related(c["Path"], running.mounts)]:
        return None
    return uuid.uuid4().hex


def commit(running: Container) -> str | None:
    """The image a fork or a restore of `running`'s tree starts its container from: None when commands changed
    nothing outside the mounts (the image `running` started from will do: the fast path), else a `docker commit`
    of it, made once per distinct state. Commits carry the owner labels: this process's store removes them when
    it closes, `prune` after a crash."""
    signature = outside_signature(running)
    if signature is None:
        return None
    if running.committed is not None and running.committed[0] == signature:
        return running.committed[1]
    from agentenv_docker.api import owner_labels

    labels = {**owner_labels(), LABEL: "1", COMMIT_LABEL: "1"}
    tag = hashlib.sha256(f"{running.image}\0{signature}".encode()).hexdigest()[:16]
    changes = [f"LABEL {key}={json.dumps(value)}" for key, value in labels.items()]
    try:
        made = _client().api.commit(running.container_id, repository=COMMIT_REPOSITORY, tag=tag, changes=changes)
    except Exception as exc:
        raise ContainerError(
            f"docker sandbox: cannot commit container {running.container_id[:12]} ({type(exc).__name__}: {exc})"
        ) from exc
    image = str(made["Id"])
    _commits_of_store().append(image)
    running.committed = (signature, image)
    return image


_commits: dict[int, list[str]] = {}


def _commits_of_store() -> list[str]:
    """The images this process's store committed, oldest first (removed, newest first, when it closes)."""
    store = layers.store()
    with _pools_lock:
        found = _commits.get(id(store))
        if found is None:
            found = _commits[id(store)] = []
            store.on_close.append(lambda: _forget(_commits.pop(id(store), [])))
        return found


def known_image(image: str) -> bool:
    """Whether `image` is a commit of this process's store (what a workspace snapshot may name)."""
    return image in _commits.get(id(layers.store()), [])


def _forget(images: list[str]) -> None:
    _remove_images(images)


def _remove_images(images: list[str]) -> list[str]:
    """Remove images, newest first (a commit of a container started from a commit sits on it); the removed."""
    removed = []
    for image in reversed(images):
        try:
            _client().images.remove(image, force=True)
        except Exception:
            continue
        removed.append(image)
    return removed


def context_tag(context: Path) -> str:
    """The image tag of a build context: its content hash, so an unchanged Dockerfile is built once."""
    hasher = hashlib.sha256()
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        hasher.update(f"{path.relative_to(context).as_posix()}\0".encode() + path.read_bytes() + b"\0")
    return f"agentenv-workspace:{hasher.hexdigest()[:16]}"


def ensure_image(context: Path, timeout: float = 1800.0) -> str:
    """Build the Dockerfile in `context` unless an image of that content exists; its tag."""
    if not (context / "Dockerfile").is_file():
        raise ContainerError(f"workspace setting `dockerfile`: no Dockerfile in {context}")
    tag = context_tag(context)
    client = _client()
    try:
        client.images.get(tag)
        return tag
    except Exception:
        pass
    try:
        client.images.build(path=str(context), tag=tag, rm=True, timeout=int(timeout), labels={LABEL: "1"})
    except Exception as exc:
        raise ContainerError(f"workspace setting `dockerfile`: building {context} failed: {exc}") from exc
    return tag


def remove(container_id: str, socket_path: Path | None = None) -> None:
    """Remove a container (gone already is fine), and the short link to its socket if it has one."""
    if socket_path is not None and socket_path.parent.is_symlink():
        socket_path.parent.unlink(missing_ok=True)
    try:
        _client().containers.get(container_id).remove(force=True)
    except Exception:
        return


def prune() -> list[str]:
    """Remove workspace containers, then committed images, whose owning process no longer runs; their ids
    (images' start with `sha256:`)."""
    from agentenv_docker.api import live_owner

    layers.prune_links()
    client = _client()
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        if live_owner(container.labels) is None:
            container.remove(force=True)
            removed.append(container.id)
    images = client.images.list(all=True, filters={"label": f"{COMMIT_LABEL}=1"})
    dead = sorted((i for i in images if live_owner(i.labels) is None), key=lambda i: str(i.attrs.get("Created")))
    return removed + _remove_images([image.id for image in dead])
