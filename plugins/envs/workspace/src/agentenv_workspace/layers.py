"""Where workspaces live on disk, and how they snapshot, reset and fork fast.

A workspace's state is a stack of read-only *layers* (directories) plus one writable directory on top:
- with overlayfs (root on Linux), the live tree is an overlay mount of the layers under a fresh upper dir, so
  a fork or a reset is one mount (about a millisecond, whatever the repository's size), and a snapshot turns
  the upper dir into a new layer (a layer commit) instead of copying the tree;
- without it, the live tree is a plain copy of the top layer, and a snapshot is a copy of the tree.

Every directory belongs to this process: `<root>/<pid>-<start time>/`. At exit the process unmounts and removes
its own; `prune()` (run whenever a store opens) removes those of processes that are gone, SIGKILLed included.
Unmounting takes tens of milliseconds on some kernels, so a replaced mount is unmounted and removed by a
background reaper, off the episode's path.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import shutil
import stat
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT_VARIABLE = "AGENTENV_WORKSPACE_ROOT"
MNT_DETACH = 2
_libc: ctypes.CDLL | None = None


def workspace_root() -> Path:
    """The folder every process keeps its workspaces under (`AGENTENV_WORKSPACE_ROOT` moves it)."""
    return Path(os.environ.get(ROOT_VARIABLE) or Path(tempfile.gettempdir()) / "agentenv-workspaces")


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def mount_overlay(lowers: list[Path], upper: Path, work: Path, target: Path) -> None:
    """Mount `lowers` (top first) under `upper` at `target`; OSError when the kernel refuses."""
    options = f"lowerdir={':'.join(str(p) for p in lowers)},upperdir={upper},workdir={work}"
    if _lib().mount(b"overlay", str(target).encode(), b"overlay", 0, options.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount overlay at {target}: {os.strerror(errno)}")


def bind_mount(source: Path, target: Path, *, shared: bool = False) -> None:
    """Bind `source` at `target`; `shared` also makes it a shared mount, so mounts made below it later show in
    containers that bind it with rslave propagation (the warm pool's slots)."""
    ms_bind, ms_shared = 4096, 1 << 20
    if _lib().mount(str(source).encode(), str(target).encode(), None, ms_bind, None) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"bind {source} at {target}: {os.strerror(errno)}")
    if shared and _lib().mount(b"none", str(target).encode(), None, ms_shared, None) != 0:
        errno = ctypes.get_errno()
        unmount(target)
        raise OSError(errno, f"make {target} shared: {os.strerror(errno)}")


def unmount(target: Path) -> None:
    _lib().umount2(str(target).encode(), MNT_DETACH)


def mounts_under(folder: Path) -> list[Path]:
    """Mount points below `folder`, deepest first (from /proc/self/mounts)."""
    prefix = str(folder).rstrip("/") + "/"
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    points = [line.split()[1].replace("\\040", " ") for line in lines if len(line.split()) > 1]
    return sorted((Path(p) for p in points if p.startswith(prefix)), key=lambda p: -len(str(p)))


def remove_tree(folder: Path) -> None:
    """Unmount whatever is mounted below `folder`, then delete it."""
    for point in mounts_under(folder):
        unmount(point)
    shutil.rmtree(folder, ignore_errors=True)


def copy_upper(upper: Path, target: Path) -> None:
    """Copy an overlay upper dir into a new layer, keeping its whiteouts (0/0 character devices that mark
    deleted files) and its opaque-directory marks (extended attributes, which `copystat` carries)."""

    def copy(src: str, dst: str) -> None:
        info = os.lstat(src)
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            os.mknod(dst, stat.S_IFCHR | 0o000, 0)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)

    shutil.copytree(upper, target, symlinks=True, copy_function=copy, dirs_exist_ok=True)


def overlay_supported(scratch: Path) -> bool:
    """Whether this process may mount overlayfs here (tried once per store on a throwaway mount)."""
    if os.name != "posix" or os.geteuid() != 0 or os.environ.get("AGENTENV_WORKSPACE_OVERLAY") == "0":
        return False
    probe = scratch / "probe"
    parts = [probe / name for name in ("lower", "upper", "work", "merged")]
    for part in parts:
        part.mkdir(parents=True, exist_ok=True)
    try:
        mount_overlay([parts[0]], parts[1], parts[2], parts[3])
    except OSError:
        return False
    finally:
        remove_tree(probe)
    return True


def prune(root: Path | None = None) -> list[Path]:
    """Remove the workspace folders of processes that no longer run; the folders removed."""
    from agentenv_sandbox_local.api import process_alive

    root = root or workspace_root()
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for folder in root.iterdir():
        pid, _, started = folder.name.partition("-")
        if not (pid.isdigit() and started.isdigit()) or process_alive(int(pid), int(started)):
            continue
        remove_tree(folder)
        removed.append(folder)
    prune_links()  # short links to the sockets of containers whose run folder just went
    from agentenv_workspace.pids import prune as prune_groups

    prune_groups()  # the process sandbox's command cgroups of dead processes
    return removed


SOCKET_LINK_PREFIX = "agentenv-sock-"
UNIX_PATH_MAX = 100


def short_socket(path: Path) -> Path:
    """`path`, or the same socket through a short symlink in the temp folder: a unix socket path longer than
    about 100 bytes cannot be connected to. Dangling links are removed by `prune_links`."""
    if len(str(path)) <= UNIX_PATH_MAX:
        return path
    link = Path(tempfile.gettempdir()) / f"{SOCKET_LINK_PREFIX}{uuid.uuid4().hex[:12]}"
    link.symlink_to(path.parent)
    return link / path.name


def prune_links() -> None:
    """Remove socket links whose run folder is gone."""
    for link in Path(tempfile.gettempdir()).glob(f"{SOCKET_LINK_PREFIX}*"):
        if link.is_symlink() and not link.exists():
            link.unlink(missing_ok=True)


@dataclass
class Live:
    """One workspace's writable tree: `path` is what tools and commands see."""

    folder: Path
    path: Path
    layers: tuple[str, ...]
    """The layer ids below it, top first (copy mode: the one layer it was copied from)."""
    upper: Path | None = None
    """The overlay's writable dir (None in copy mode)."""
    touched: bool = True
    """Whether it may differ from `layers` (a tool or a command wrote, or may have written, to it)."""
    before_removal: list[Callable[[], None]] = field(default_factory=list)
    """Run by the reaper before the tree goes (a container that has it mounted is removed first)."""


@dataclass
class Store:
    """This process's layers and live trees."""

    folder: Path
    overlay: bool
    layers: dict[str, Path] = field(default_factory=dict)
    alive: dict[int, Live] = field(default_factory=dict)
    """Live trees not discarded yet (their `before_removal` actions run at close)."""
    on_close: list[Callable[[], None]] = field(default_factory=list)
    """Run at close before the folder goes (the warm pool's idle containers are removed)."""
    _reaper: queue.SimpleQueue[Live | None] = field(default_factory=queue.SimpleQueue)
    """Trees to remove. A SimpleQueue, whose `put` is reentrant: `discard` puts from finalizers."""
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    """Rollouts run in threads (a GRPO group graded in parallel): one reaper, started by whoever makes the first
    live tree."""

    @classmethod
    def open(cls) -> Store:
        from agentenv_sandbox_local.api import start_time

        root = workspace_root()
        prune(root)
        pid = os.getpid()
        folder = root / f"{pid}-{start_time(pid) or 0}"
        (folder / "layers").mkdir(parents=True, exist_ok=True)
        (folder / "live").mkdir(exist_ok=True)
        store = cls(folder, overlay_supported(folder))
        from agentenv_workspace.shutdown import at_shutdown

        at_shutdown(store.close)  # before worker threads are joined: a waiting exec sees its container go
        return store

    # ---- layers ------------------------------------------------------------------------------------
    def new_layer(self) -> tuple[str, Path]:
        layer_id = uuid.uuid4().hex[:16]
        path = self.folder / "layers" / layer_id
        path.mkdir()
        self.layers[layer_id] = path
        return layer_id, path

    def layer(self, layer_id: str) -> Path:
        path = self.layers.get(layer_id)
        if path is None:
            raise KeyError(
                f"workspace layer {layer_id!r} is not in this process's store; a workspace snapshot can be "
                "restored only in the process that made it"
            )
        return path

    def adopt(self, source: Path) -> str:
        """A new bottom layer holding a copy of `source` (a loaded artifact)."""
        layer_id, path = self.new_layer()
        shutil.copytree(source, path, symlinks=True, dirs_exist_ok=True)
        return layer_id

    # ---- live trees --------------------------------------------------------------------------------
    def live(self, layers: tuple[str, ...]) -> Live:
        """A fresh writable tree showing `layers` (empty tree for no layers)."""
        self._start_reaper()
        folder = self.folder / "live" / uuid.uuid4().hex[:16]
        path = folder / "tree"
        if self.overlay and layers:
            upper, work = folder / "upper", folder / "work"
            for part in (upper, work, path):
                part.mkdir(parents=True)
            mount_overlay([self.layer(i) for i in layers], upper, work, path)
            live = Live(folder, path, layers, upper, touched=False)
        else:
            folder.mkdir(parents=True)
            if layers:
                shutil.copytree(self.layer(layers[0]), path, symlinks=True)
            else:
                path.mkdir()
            live = Live(folder, path, layers, touched=False)
        self.alive[id(live)] = live
        return live

    def commit(self, live: Live) -> tuple[str, ...]:
        """The layers that stand for `live` as it is now; `live` keeps working on top of them.

        Overlay: a copy of the upper dir (what changed, whiteouts included) becomes a new layer (a layer
        commit, cost proportional to the change, with no unmount). Copy mode: the tree is copied into a new
        layer."""
        if not live.touched:
            return live.layers
        if live.upper is not None and not any(live.upper.iterdir()):
            live.touched = False
            return live.layers
        if live.upper is None:
            layer_id, path = self.new_layer()
            shutil.copytree(live.path, path, symlinks=True, dirs_exist_ok=True)
            live.layers, live.touched = (layer_id,), False
            return live.layers
        layer_id, path = self.new_layer()
        copy_upper(live.upper, path)
        live.layers, live.touched = (layer_id, *live.layers), False
        return live.layers

    def discard(self, live: Live) -> None:
        """Unmount and delete a live tree in the background (unmounting can take tens of milliseconds).

        It runs as a weakref finalizer: in whatever thread the garbage collector happens to run, at any allocation,
        possibly in the middle of this store's own locked code. So it takes no lock (a dict's pop is atomic and a
        SimpleQueue's put is reentrant). Taking the store's lock here could deadlock a thread already holding it,
        and after it every later finalizer of the store's trees, in whatever thread each ran (a web server's, say)."""
        self.alive.pop(id(live), None)
        self._reaper.put(live)

    def _start_reaper(self) -> None:
        """Start the reaper thread, from ordinary code (`live`), never from a finalizer."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._reap, name="workspace-reaper", daemon=True)
                self._thread.start()

    def _reap(self) -> None:
        while (live := self._reaper.get()) is not None:
            for action in live.before_removal:
                action()
            remove_tree(live.folder)

    def close(self) -> None:
        """Remove everything this process made (registered with atexit)."""
        with self._lock:
            reaper, self._thread = self._thread, None
            if reaper is not None:
                self._reaper.put(None)
        if reaper is not None:
            reaper.join()
        for live in list(self.alive.values()):
            for action in live.before_removal:
                action()
        self.alive.clear()
        for action in self.on_close:
            action()
        self.on_close.clear()
        remove_tree(self.folder)


@contextlib.contextmanager
def private_root(root: Path) -> Iterator[None]:
    """Keep this process's workspaces under `root` for a while (tests), closing that store afterwards; a
    RuntimeError says what was left behind (a mount, a folder)."""
    saved = os.environ.get(ROOT_VARIABLE)
    os.environ[ROOT_VARIABLE] = str(root)
    try:
        yield
    finally:
        store().close()
        if saved is None:
            os.environ.pop(ROOT_VARIABLE, None)
        else:
            os.environ[ROOT_VARIABLE] = saved
    left = [*mounts_under(root), *(root.iterdir() if root.is_dir() else [])]
    if left:
        raise RuntimeError(f"workspaces left behind under {root}: {', '.join(map(str, left))}")


_store: Store | None = None
_store_lock = threading.Lock()


def store() -> Store:
    """This process's store, opened on first use."""
    global _store
    with _store_lock:
        if _store is None or not _store.folder.is_dir():
            _store = Store.open()
        return _store
