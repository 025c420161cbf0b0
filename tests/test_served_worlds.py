"""A task's world served from a sandbox (`process`, `docker`) instead of in process: same score, same trajectory,
nothing left running afterwards — also when the run is interrupted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentenv import get_host
from agentenv.contracts import kinds
from agentenv_runtime import TaskError
from agentenv_testing.tasks import run_task

TASK = "resolve-refund.toml"
AGENT_CALLS = ["get_ticket", "get_order", "issue_refund", "close_ticket", "send_email"]


def bundle_dir() -> Path:
    return Path(get_host().registry(kinds.BUNDLES)["support-refund"].obj.path)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def serve_processes() -> dict[int, str]:
    """Every `agentenv serve` process on this machine (pid → command line)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [w.decode(errors="replace") for w in argv if w]
        if "agentenv" in words and "serve" in words and alive(int(entry.name)):
            found[int(entry.name)] = " ".join(words)
    return found


def run_served(tmp_path: Path, sandbox: str) -> dict[str, Any]:
    bundle = bundle_dir()
    return run_task(bundle / "tasks" / TASK, tmp_path, seed=7, bundle_dir=bundle, overrides={"sandbox": sandbox})


def stored_trajectory(tmp_path: Path, record: dict[str, Any]) -> list[dict[str, Any]]:
    raw = (tmp_path / "objects" / record["trajectories"]["desk"]).read_bytes()
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sandbox state files of this test only (so `list`/`prune` see nothing of other runs)."""
    monkeypatch.setenv("AGENTENV_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def test_process_sandbox_serves_the_world_and_scores_like_in_process(tmp_path: Path, state_dir: Path) -> None:
    record = run_served(tmp_path / "served", "process")
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    assert record["score"] == 1.0 and record["passed"] is True
    desk = next(s for s in record["steps"] if s["id"] == "desk")["output"]
    assert desk["sandbox"] == "process" and desk["url"].startswith("http://127.0.0.1:")
    calls = [e for e in stored_trajectory(tmp_path / "served", record) if e["kind"] == "tool_call"]
    assert [e["tool"] for e in calls] == AGENT_CALLS
    assert {e["role"] for e in calls} == {"billing_lead"}
    assert all(e["error"] is None for e in calls)
    assert not alive(desk["pid"]), "the world server outlived the run"
    assert not list((state_dir / "process-sandboxes").glob("*.json")), "the sandbox's state file was left behind"
    # The served world is the same world: the in-process run records the very same trajectory.
    in_process = run_task(bundle_dir() / "tasks" / TASK, tmp_path / "inline", seed=7, bundle_dir=bundle_dir())
    assert in_process["score"] == 1.0
    assert in_process["trajectory_digest"] == record["trajectory_digest"]


def test_a_step_field_chain_falls_back_and_inline_in_a_chain_means_in_process(tmp_path: Path, state_dir: Path) -> None:
    bundle = bundle_dir()
    text = (bundle / "tasks" / TASK).read_text()
    task = tmp_path / "task.toml"
    task.write_text(text.replace('type = "deploy_env"', 'type = "deploy_env"\nsandbox = "moonbase-free,inline"', 1))
    with pytest.raises(TaskError) as caught:  # a provider nothing installs is refused before the run starts
        run_task(task, tmp_path, seed=7, bundle_dir=bundle)
    assert "step 'desk' (deploy_env): field `sandbox`: no sandbox provider 'moonbase-free'" in str(caught.value)
    task.write_text(text.replace('type = "deploy_env"', 'type = "deploy_env"\nsandbox = "inline"', 1))
    record = run_task(task, tmp_path / "again", seed=7, bundle_dir=bundle, overrides={"sandbox": "process,inline"})
    desk = next(s for s in record["steps"] if s["id"] == "desk")
    assert record["score"] == 1.0 and desk["output"]["sandbox"] == "process"


def cli_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[plugins.agentenv-store-local.document]\npath = "{tmp_path / "records.sqlite3"}"\n'
        f'[plugins.agentenv-store-local.object]\nroot = "{tmp_path / "objects"}"\n'
    )
    return {
        "AGENTENV_CONFIG": str(config),
        "AGENTENV_STATE_DIR": str(tmp_path / "state"),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }


def test_cli_run_with_process_sandbox_exits_zero(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "run", "support-refund", "--sandbox", "process", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=cli_env(tmp_path),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passed"] is True and result["tasks"][0]["score"] == 1.0


def test_sigint_mid_run_leaves_no_orphan_server(tmp_path: Path) -> None:
    """Interrupt `agentenv run` as soon as its world server exists: the server must go with the run."""
    before = set(serve_processes())
    env = cli_env(tmp_path)
    states = tmp_path / "state" / "process-sandboxes"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentenv", "run", "support-refund", "--sandbox", "process"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server_pid = None
    try:
        deadline = time.monotonic() + 120
        while server_pid is None and time.monotonic() < deadline and proc.poll() is None:
            for path in states.glob("process-*.json") if states.is_dir() else []:
                try:
                    main = json.loads(path.read_text()).get("main")
                except (OSError, ValueError):
                    continue
                if main:
                    server_pid = int(main["pid"])
            time.sleep(0.01)
        assert server_pid is not None, "the run never started a world server"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr  # interrupted while its world was starting
    deadline = time.monotonic() + 10
    while alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server_pid), f"orphan world server {server_pid} after SIGINT"
    assert set(serve_processes()) - before == set()
    assert not list(states.glob("*.json"))


def docker_works() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.slow
def test_docker_sandbox_serves_the_world(tmp_path: Path) -> None:
    if not docker_works():
        pytest.skip("`docker info` fails: no docker engine here")
    import docker

    record = run_served(tmp_path, "docker")
    assert record["status"] == "succeeded", [s.get("error") for s in record["steps"]]
    assert record["score"] == 1.0
    desk = next(s for s in record["steps"] if s["id"] == "desk")["output"]
    assert desk["sandbox"] == "docker" and desk["image"].startswith("agentenv/world:")
    calls = [e["tool"] for e in stored_trajectory(tmp_path, record) if e["kind"] == "tool_call"]
    assert calls == AGENT_CALLS
    client = docker.from_env()
    try:
        left = client.containers.list(all=True, filters={"label": f"agentenv.run={record['id']}"})
    finally:
        client.close()
    assert left == [], f"containers left after the run: {[c.name for c in left]}"


def test_world_image_tag_follows_the_installed_distributions() -> None:
    pytest.importorskip("agentenv_docker")
    from agentenv_docker.images import world_image_tag

    tag = world_image_tag(["agentenv-gateway", "agentenv-slack"])
    assert tag.startswith("agentenv/world:")
    assert tag == world_image_tag(["agentenv-slack", "agentenv-gateway"])  # order does not matter
    assert tag != world_image_tag(["agentenv-gateway", "agentenv-email"])
