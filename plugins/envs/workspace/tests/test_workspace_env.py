"""The workspace env against the real thing: real files, real `sh`, real bubblewrap, real overlay mounts."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agentenv_runtime import Artifact, World
from agentenv_slack.env import SlackEnv
from agentenv_workspace import layers, pids, sandbox
from agentenv_workspace.env import WorkspaceEnv

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed")
needs_pids_cgroup = pytest.mark.skipif(
    not pids.available(), reason="no pids cgroup hierarchy this process may create groups in"
)
FIX = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


@pytest.fixture(autouse=True)
def _own_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Each test gets its own workspace root, and checks it leaves no mount behind."""
    monkeypatch.setenv(layers.ROOT_VARIABLE, str(tmp_path / "root"))
    yield
    layers.store().close()
    assert layers.mounts_under(tmp_path) == []


def artifact(tmp_path: Path, files: dict[str, str], **extra: Any) -> Artifact:
    repo = tmp_path / "repo"
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    path = tmp_path / "calc.json"
    path.write_text(
        json.dumps({"name": "calc", "env": "workspace", "version": "1", "data": {"folder": "repo", **extra}})
    )
    return Artifact.from_file(path)


def loaded(tmp_path: Path, **settings: Any) -> WorkspaceEnv:
    env = WorkspaceEnv(settings)
    env.load(artifact(tmp_path, {"calc.py": "def add(a, b):\n    return a - b\n", "pkg/util.py": "X = 1\n"}))
    return env


def ok(env: WorkspaceEnv, tool: str, **args: Any) -> Any:
    result, error = env.call(tool, args)
    assert error is None, error
    return result


def test_file_tools_read_write_list_search(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    assert [e["path"] for e in ok(env, "list_dir", recursive=True)["entries"]] == ["calc.py", "pkg", "pkg/util.py"]
    assert ok(env, "read_file", path="calc.py", start_line=2)["content"] == "    return a - b\n"
    ok(env, "write_file", path="docs/notes.md", content="hello\n")
    assert (env.root / "docs/notes.md").read_text() == "hello\n"
    hits = ok(env, "search", pattern=r"return a \S b", glob="*.py")["matches"]
    assert hits == [{"path": "calc.py", "line": 2, "text": "    return a - b"}]


def test_paths_outside_the_workspace_are_refused_before_anything_changes(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    (env.root / "escape").symlink_to("/etc")
    for path in ("../outside.txt", "/etc/passwd", "escape/passwd"):
        result, error = env.call("write_file", {"path": path, "content": "x"})
        assert result is None and error is not None and error["field"] == "path", error
    assert not (tmp_path / "root" / "outside.txt").exists()
    _, error = env.call("read_file", {"path": "/workspace/../etc/passwd"})
    assert error is not None and error["code"] == "invalid_arguments"


def test_apply_patch_applies_and_a_stale_hunk_is_named_and_changes_nothing(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    assert ok(env, "apply_patch", patch_text=FIX) == {"files": ["calc.py"]}
    assert "a + b" in (env.root / "calc.py").read_text()
    two = FIX.replace("calc.py", "pkg/util.py").replace("def add(a, b):", "X = 1")
    stale = FIX + two  # the first hunk no longer fits either
    before = env.state_digest()
    _, error = env.call("apply_patch", {"patch_text": stale})
    assert error is not None and error["code"] == "patch_failed"
    assert "calc.py: hunk #1 @@ -1,2 +1,2 @@" in error["message"] and "line 2" in error["message"]
    assert env.state_digest() == before


def test_exec_runs_in_the_tree_caps_output_and_times_out(tmp_path: Path) -> None:
    env = loaded(tmp_path, output_limit=300)
    run = ok(env, "exec", command="python3 -c 'import calc; print(calc.add(2, 2))'")
    assert run["exit_code"] == 0 and run["output"] == "0\n"
    long = ok(env, "exec", command="yes agentenv | head -c 5000")
    assert long["truncated"] and len(long["output"]) == 300
    slow = ok(env, "exec", command="sleep 30", timeout=0.5)
    assert slow["timed_out"] and slow["exit_code"] == 124


def test_exec_file_size_limit_is_enforced(tmp_path: Path) -> None:
    env = loaded(tmp_path, file_size_mb=1)
    run = ok(env, "exec", command="head -c 3000000 /dev/zero > big.bin; echo status=$?")
    assert "status=0" not in run["output"]
    assert (env.root / "big.bin").stat().st_size <= 1024 * 1024


@needs_bwrap
def test_commands_cannot_reach_the_host_or_the_network(tmp_path: Path) -> None:
    secret = tmp_path / "hidden" / "test_secret.py"
    secret.parent.mkdir()
    secret.write_text("SECRET = 42\n")
    env = loaded(tmp_path)
    run = ok(env, "exec", command=f"cat {secret}; ls {tmp_path}; cat /etc/hostname; ls /root")
    assert "SECRET" not in run["output"] and "No such file" in run["output"]
    net = ok(env, "exec", command="python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\"")
    assert net["exit_code"] != 0


@needs_pids_cgroup
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_the_process_limit_binds_root_too(tmp_path: Path, isolation: str) -> None:
    forks = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait; echo all started"
    limited = ok(loaded(tmp_path, processes=8, isolation=isolation), "exec", command=forks)
    assert limited["exit_code"] != 0 and "Cannot fork" in limited["output"], limited  # RLIMIT_NPROC spares root
    roomy = ok(loaded(tmp_path, processes=64, isolation=isolation), "exec", command=forks)
    assert roomy["exit_code"] == 0 and "all started" in roomy["output"], roomy


@needs_pids_cgroup
def test_a_process_that_leaves_the_commands_session_ends_with_the_command(tmp_path: Path) -> None:
    import os

    env = loaded(tmp_path, isolation="none")  # no pid namespace to end it: the command's cgroup does
    sleeper = f"sleep 1234.{os.getpid()}"  # this run's own
    assert ok(env, "exec", command=f"setsid {sleeper} >/dev/null 2>&1 & echo started")["output"] == "started\n"
    left = subprocess.run(["pgrep", "-f", sleeper], capture_output=True, text=True).stdout.split()
    assert left == []


def test_snapshot_restore_and_fork_carry_the_whole_tree(tmp_path: Path) -> None:
    env = loaded(tmp_path)
    start = env.snapshot()
    ok(env, "apply_patch", patch_text=FIX)
    ok(env, "exec", command="rm pkg/util.py && echo new > added.txt")
    fixed = env.snapshot()
    fork = env.fork()
    ok(fork, "write_file", path="added.txt", content="fork only\n")
    assert (env.root / "added.txt").read_text() == "new\n"
    env.restore(start)
    assert "a - b" in (env.root / "calc.py").read_text() and (env.root / "pkg/util.py").exists()
    assert not (env.root / "added.txt").exists()
    env.restore(fixed)
    assert not (env.root / "pkg/util.py").exists() and (env.root / "added.txt").read_text() == "new\n"
    assert (fork.root / "added.txt").read_text() == "fork only\n"
    env.reset()
    assert env.state_digest() == WorkspaceEnv.fork(env).state_digest()


def test_git_source_checks_out_the_commit(tmp_path: Path) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (repo / "a.txt").write_text("two\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    spec = tmp_path / "up.json"
    spec.write_text(
        json.dumps({"name": "up", "env": "workspace", "version": "1", "data": {"git": "upstream", "commit": first}})
    )
    env = WorkspaceEnv()
    env.load(Artifact.from_file(spec))
    assert (env.root / "a.txt").read_text() == "one\n"
    assert ok(env, "exec", command="git log --oneline | wc -l")["output"].strip() == "1"


def test_bad_artifact_names_the_field(tmp_path: Path) -> None:
    spec = tmp_path / "bad.json"
    spec.write_text(json.dumps({"name": "bad", "env": "workspace", "version": "1", "data": {"folder": "nope"}}))
    with pytest.raises(ValueError, match=r"field `data.folder`: .*nope does not exist"):
        WorkspaceEnv().load(Artifact.from_file(spec))


def test_composes_with_slack_through_rbac_and_the_trajectory(tmp_path: Path) -> None:
    slack = SlackEnv()
    slack.load(SlackEnv.find_artifact("acme"))
    world = World([loaded(tmp_path), slack], roles={"reader": {"tools": ["*"], "deny": ["exec", "write_file"]}})
    assert world.call("exec", {"command": "touch x"}, role="reader").error["code"] == "forbidden"
    assert not (world.env("workspace").root / "x").exists()  # type: ignore[attr-defined]
    assert world.call("apply_patch", {"patch_text": FIX}).ok
    assert world.call("exec", {"command": 42}).error["code"] == "invalid_arguments"
    tools = [event.get("tool") for event in world.trajectory.events]
    assert "apply_patch" in tools
    copy = world.fork()
    assert "a + b" in (copy.env("workspace").root / "calc.py").read_text()  # type: ignore[attr-defined]


def holding(script: str, spec: Artifact, root: Path) -> subprocess.Popen[str]:
    """A Python process running `script` (argv[1]: the artifact file) on its own workspace root, to be killed."""
    import os
    import sys

    return subprocess.Popen(
        [sys.executable, "-c", script, spec.source],
        env={**os.environ, layers.ROOT_VARIABLE: str(root)},
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_sigkilled_process_leaves_nothing_after_prune(tmp_path: Path) -> None:
    import signal

    root = tmp_path / "killed"
    script = (
        "import json, sys, time\n"
        "from agentenv_runtime import Artifact\n"
        "from agentenv_workspace.env import WorkspaceEnv\n"
        "env = WorkspaceEnv(); env.load(Artifact.from_file(__import__('pathlib').Path(sys.argv[1])))\n"
        "fork = env.fork(); fork.call('exec', {'command': 'true'})\n"
        "print(env.root, fork.root, flush=True); time.sleep(60)\n"
    )
    child = holding(script, artifact(tmp_path, {"a.txt": "a\n"}), root)
    assert child.stdout is not None
    trees = child.stdout.readline().split()
    assert all(Path(tree, "a.txt").is_file() for tree in trees)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert list(root.iterdir())  # the killed process could not clean up
    found = pids.hierarchy()
    groups = list((found[0] / pids.BASE_NAME).glob(f"{child.pid}-*")) if found and pids.available() else []
    assert groups or not pids.available()  # its command cgroups' folder too
    assert layers.prune(root)
    assert list(root.iterdir()) == [] and layers.mounts_under(root) == []
    assert not [group for group in groups if group.exists()]


def test_an_interrupted_run_leaves_no_process_mount_or_folder(tmp_path: Path) -> None:
    import os
    import signal
    import sys
    import time

    root = tmp_path / "interrupted"
    policy = tmp_path / "slow.toml"
    policy.write_text(
        '[[turn]]\nactions = [{ call = "exec", args = { command = "sleep 1234.5678 & sleep 1234.5678" } }]\n'
    )
    agentenv = Path(sys.executable).parent / "agentenv"
    child = subprocess.Popen(
        [str(agentenv), "run", "coding", "--task", "fix-bug", "--agent", str(policy)],
        env={**os.environ, layers.ROOT_VARIABLE: str(root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not any(root.glob("*/live/*/tree")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # the command is running
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=60) != 0
    assert layers.mounts_under(root) == []
    assert not root.exists() or list(root.iterdir()) == []
    sleepers = subprocess.run(["pgrep", "-f", "sleep 1234.5678"], capture_output=True, text=True).stdout.split()
    assert sleepers == []


def test_a_sigkilled_docker_run_leaves_nothing_after_prune(docker_engine: None, tmp_path: Path) -> None:
    import signal
    import tempfile

    from agentenv_docker.api import engine, ensure_base_image
    from agentenv_workspace import container

    ensure_base_image(log=lambda message: None)
    root = tmp_path / "killed-docker"
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from agentenv_runtime import Artifact\n"
        "from agentenv_workspace.env import WorkspaceEnv\n"
        "env = WorkspaceEnv({'sandbox': 'docker'}); env.load(Artifact.from_file(Path(sys.argv[1])))\n"
        "out = env.call('exec', {'command': 'touch /usr/local/bin/installed'})\n"  # outside the tree: a commit
        "fork = env.fork(); out = fork.call('exec', {'command': 'ls /usr/local/bin'})\n"
        "ids = [e._container.container_id for e in (env, fork) if e._container]\n"
        "print(*ids, fork._image, out, flush=True)\n"
        "time.sleep(60)\n"
    )
    child = holding(script, artifact(tmp_path, {"a.txt": "a\n"}), root)
    try:
        assert child.stdout is not None
        parent_id, fork_id, image, *_ = child.stdout.readline().split()
        assert image.startswith("sha256:")
        child.send_signal(signal.SIGKILL)
        child.wait()
        for container_id in (parent_id, fork_id):  # nothing could clean up
            assert engine().containers.get(container_id).status == "running"
        assert engine().images.get(image).labels["agentenv.owner.pid"] == str(child.pid)
        assert {parent_id, fork_id, image} <= set(container.prune())
        owned = {"label": f"agentenv.owner.pid={child.pid}"}
        assert engine().containers.list(all=True, filters=owned) == engine().images.list(filters=owned) == []
        assert layers.prune(root)
        assert list(root.iterdir()) == [] and layers.mounts_under(root) == []
        links = Path(tempfile.gettempdir()).glob(f"{layers.SOCKET_LINK_PREFIX}*")
        assert [link for link in links if link.is_symlink() and not link.exists()] == []
    finally:
        child.kill()
        child.wait()
        container.prune()
        layers.prune(root)


def test_discard_takes_no_lock_since_it_runs_as_a_finalizer(tmp_path: Path) -> None:
    """A tree's discard is a weakref finalizer: the garbage collector may run it in any thread, at any allocation,
    even in the middle of the store's own locked code. Taking the store's lock there would deadlock that thread and
    every later finalizer of the store."""
    folder = tmp_path / "own-store"  # a store of its own: a deadlocked one is never closed
    for part in ("layers", "live"):
        (folder / part).mkdir(parents=True)
    store = layers.Store(folder, overlay=False)
    live = store.live(())
    returned = threading.Event()

    def finalizer_inside_locked_code() -> None:
        with store._lock:
            store.discard(live)
        returned.set()

    threading.Thread(target=finalizer_inside_locked_code, daemon=True).start()
    assert returned.wait(10), "discard waited for the store's lock"
    deadline = time.monotonic() + 10
    while live.folder.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not live.folder.exists()
    store.close()
