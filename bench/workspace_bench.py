"""Workspace reset and fork of a 1,000-file repository, graded rollouts per second, and the Docker sandbox.

Prints ratios against baselines measured in the same run: a plain `shutil.copytree` of the repository (what a
reset or fork costs without layers), a GRPO group of 8 forks graded one after another (against the same group
graded in threads at once; the rewards and digests must be the same), `docker exec` on the same container
(against the in-container exec server, samples interleaved so both see the same load, plus the CPU time one
call costs every process involved, which the machine's load disturbs less than wall time), a cold `docker run`
until the server answers (against taking a started container from the warm pool), and a fork whose container
changed nothing outside the tree (against one that did: a `docker commit` and a container from it).
Goals from issue 26: reset and fork ≤ 20 ms each; exec and warm start ≥ 10x. `--no-docker` skips the Docker half.

    .venv/bin/python bench/workspace_bench.py
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentenv_runtime import Artifact
from agentenv_workspace import layers, sandbox
from agentenv_workspace.env import WorkspaceEnv, state_of

FILES = 1000
ROUNDS = 30
GROUP = 8
FIX = "--- a/calc.py\n+++ b/calc.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


def make_repo(folder: Path) -> Artifact:
    repo = folder / "repo"
    for index in range(FILES):
        path = repo / f"pkg{index % 25}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE_{index} = {index}\n" * 20)
    spec = folder / "repo.json"
    spec.write_text(json.dumps({"name": "repo", "env": "workspace", "version": "1", "data": {"folder": "repo"}}))
    return Artifact.from_file(spec)


def timed(action: Callable[[], object], rounds: int = ROUNDS) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        artifact = make_repo(folder)
        env = WorkspaceEnv()
        env.load(artifact)
        start = env.snapshot()
        print(f"overlay layers: {layers.store().overlay}")

        copies = iter(range(10**6))
        baseline = timed(lambda: shutil.copytree(folder / "repo", folder / f"copy{next(copies)}"), 10)

        def reset() -> None:
            env.call("write_file", {"path": "pkg0/module_0.py", "content": "changed\n"})
            env.restore(start)
            assert env.root.is_dir()

        def fork() -> None:
            child = env.fork()
            assert (child.root / "pkg0" / "module_0.py").is_file()
            child.close()

        reset_ms, fork_ms = timed(reset), timed(fork)
        print(f"copytree baseline: {baseline:.2f} ms")
        print(f"reset (edit, restore, tree ready): {reset_ms:.2f} ms  ({baseline / reset_ms:.1f}x faster than a copy)")
        print(f"fork (new tree ready): {fork_ms:.2f} ms  ({baseline / fork_ms:.1f}x faster than a copy)")
        graded_rollouts()
        if "--no-docker" not in sys.argv:
            docker_half(artifact)
        layers.store().close()


def graded_rollouts(groups: int = 4) -> None:
    """GRPO groups of 8 forks of one `coding:fix-bug` start (process sandbox), each fork applying the fix and
    answering, graded one after another and in threads at once, alternately, so both see the same load."""
    from agentenv_rl.api import make

    episode = make("coding:fix-bug")
    episode.reset()

    def rollout(child: Any) -> tuple[float, str, str]:
        child.step({"tool": "apply_patch", "arguments": {"patch_text": FIX}})
        final = child.step({"answer": "done"})
        result = (final.reward, final.info["trajectory_digest"], child.world.state_digest())
        child.close()
        return result

    seconds = {"serial": 0.0, "parallel": 0.0}
    results: dict[str, list[tuple[float, str, str]]] = {"serial": [], "parallel": []}
    with ThreadPoolExecutor(GROUP) as threads:
        for _ in range(groups):
            for mode in seconds:
                began = time.perf_counter()
                group = [episode.fork() for _ in range(GROUP)]
                done = list(threads.map(rollout, group)) if mode == "parallel" else [rollout(c) for c in group]
                seconds[mode] += time.perf_counter() - began
                results[mode] += done
    episode.close()
    assert results["serial"] == results["parallel"], "parallel grading changed a result"
    assert {reward for reward, _, _ in results["serial"]} == {1.0}
    serial, parallel = (groups * GROUP / seconds[mode] for mode in ("serial", "parallel"))
    print(
        f"graded coding rollouts (fix-bug, groups of {GROUP} forks): serial {serial:.1f}/s, parallel (threads) "
        f"{parallel:.1f}/s ({parallel / serial:.1f}x); {len(results['serial'])} rollouts each, same rewards and "
        f"digests; other work kept the cores {machine_busy():.0f}% busy meanwhile"
    )


def machine_busy(seconds: float = 1.0) -> float:
    """How busy the cores are over the next `seconds` (percent, /proc/stat): sampled while this process
    waits, it is the load of other work, which takes CPU from the rollouts serial and parallel alike."""

    def sample() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(values), values[3] + values[4]

    total, idle = sample()
    time.sleep(seconds)
    later_total, later_idle = sample()
    return 100 * (1 - (later_idle - idle) / max(later_total - total, 1))


def cpu_used() -> float:
    """CPU seconds of this process and the commands it waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def cpu_meter(container_id: str) -> Callable[[], float]:
    """CPU seconds used so far by every process an exec involves: this one and its children (the docker CLI),
    the container's processes (its cgroup's CPU accounting), and the engine (dockerd, containerd, and the
    container's shim with the runc runs it waited for)."""
    from agentenv_docker.api import engine

    ticks = os.sysconf("SC_CLK_TCK")
    pid = engine().containers.get(container_id).attrs["State"]["Pid"]
    usage: Path | None = None
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            usage = Path(f"/sys/fs/cgroup/{controllers}{path}/cpuacct.usage")
        elif controllers == "" and usage is None and Path(f"/sys/fs/cgroup{path}/cpu.stat").is_file():
            usage = Path(f"/sys/fs/cgroup{path}/cpu.stat")
    engine_pids = []
    for proc in Path("/proc").iterdir():
        try:
            name = (proc / "comm").read_text().strip()
            command = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if name in ("dockerd", "containerd") or (
            name.startswith("containerd-shim") and container_id.encode() in command
        ):
            engine_pids.append(proc.name)

    def container_cpu() -> float:
        if usage is None or not usage.is_file():
            return 0.0
        text = usage.read_text()
        if usage.name == "cpuacct.usage":
            return int(text) / 1e9
        return int(text.split("usage_usec ")[1].split()[0]) / 1e6

    def engine_cpu() -> float:
        total = 0
        for engine_pid in engine_pids:
            try:
                fields = Path(f"/proc/{engine_pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        return total / ticks

    def meter() -> float:
        return cpu_used() + container_cpu() + engine_cpu()

    return meter


def exec_round_trips(running: Any, rounds: int = 8, batch: int = 20) -> None:
    """The exec server against `docker exec` on one container: per round a batch of server calls, then two
    `docker exec` calls, so both see the same load; wall time per call (median of rounds) and CPU per call."""
    argv = ["docker", "exec", running.container_id, "sh", "-c", "true"]
    meter = cpu_meter(running.container_id)
    server_wall: list[float] = []
    docker_wall: list[float] = []
    cpu = {"server": 0.0, "docker": 0.0}
    calls = {"server": 0, "docker": 0}
    running.exec("true", cwd=".", timeout=30, output_limit=1000)  # the first command pays for the cold caches
    for _ in range(rounds):
        used = meter()
        for _ in range(batch):
            began = time.perf_counter()
            running.exec("true", cwd=".", timeout=30, output_limit=1000)
            server_wall.append(time.perf_counter() - began)
        cpu["server"] += meter() - used
        calls["server"] += batch
        used = meter()
        for _ in range(2):
            began = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            docker_wall.append(time.perf_counter() - began)
        cpu["docker"] += meter() - used
        calls["docker"] += 2
    server, docker = statistics.median(server_wall) * 1000, statistics.median(docker_wall) * 1000
    server_cpu, docker_cpu = (cpu[k] / calls[k] * 1000 for k in ("server", "docker"))
    print(
        f"exec round trip: server {server:.2f} ms, docker exec {docker:.1f} ms ({docker / server:.1f}x); CPU per "
        f"call, all processes: server {server_cpu:.2f} ms, docker exec {docker_cpu:.1f} ms "
        f"({docker_cpu / server_cpu:.1f}x)"
    )


def docker_half(artifact: Artifact) -> None:
    from agentenv_workspace import container

    cold_env = WorkspaceEnv({"sandbox": "docker"})
    cold_env.load(artifact)
    limits = sandbox.Limits(60, 2048, 256, 64)
    started = time.perf_counter()
    running = cold_env.container(limits, {})
    cold = (time.perf_counter() - started) * 1000
    exec_round_trips(running)

    pooled = WorkspaceEnv({"sandbox": "docker", "warm_pool": 2})
    pooled.load(artifact)
    warm_pool = container.pool(container.DEFAULT_IMAGE, mount_point="/workspace", network=False, limits=limits, size=2)
    warm_pool.fill()
    samples = []
    for _ in range(4):
        child = pooled.fork()
        assert child.root.is_dir()  # the tree, as an episode has it before its first command
        began = time.perf_counter()
        child.container(limits, {})
        samples.append((time.perf_counter() - began) * 1000)
        child.close()
        warm_pool.fill()  # each claim is measured with the pool full again, as a steady-state episode finds it
    warm = statistics.median(samples)
    print(f"episode start: warm pool {warm:.1f} ms, cold docker run {cold:.1f} ms ({cold / warm:.1f}x)")

    start = pooled.snapshot()
    pooled.container(limits, {})
    resets = []
    for _ in range(4):
        pooled.call("write_file", {"path": "pkg0/module_0.py", "content": "changed\n"})
        warm_pool.fill()
        began = time.perf_counter()
        pooled.restore(start)
        pooled.container(limits, {})
        resets.append((time.perf_counter() - began) * 1000)
    reset_ms = statistics.median(resets)
    print(f"docker reset (restore + a started container on the fresh tree): {reset_ms:.1f} ms")
    cold_env.close()
    pooled.close()
    docker_forks(artifact)


def docker_forks(artifact: Artifact, rounds: int = 3) -> None:
    """A fork after a command that changed only the tree (no commit: the child takes a warm container) against
    one after a command that also installed a file outside it (a `docker commit`, and the child's container
    started from that image): fork() alone, and fork() until the child's first command answered."""
    from agentenv_workspace import container

    parent = WorkspaceEnv({"sandbox": "docker", "warm_pool": 1})
    parent.load(artifact)
    settings = parent.settings  # the pool its commands take containers from
    limits = sandbox.Limits(settings.cpu_seconds, settings.memory_mb, settings.processes, settings.file_size_mb)
    warm_pool = container.pool(container.DEFAULT_IMAGE, mount_point="/workspace", network=False, limits=limits, size=1)

    def fork_once(command: str) -> tuple[float, float, str]:
        assert parent.call("exec", {"command": command})[1] is None
        warm_pool.fill()
        began = time.perf_counter()
        child = parent.fork()
        forked = time.perf_counter()
        result, error = child.call("exec", {"command": "cat pkg0/module_0.py >/dev/null && ls /usr/local/bin"})
        answered = time.perf_counter()
        assert error is None and result["exit_code"] == 0, (error, result)
        _, image = state_of(child.snapshot())
        child.close()
        return (forked - began) * 1000, (answered - began) * 1000, image

    plain = [fork_once(f"echo {n} > pkg0/module_0.py") for n in range(rounds)]
    assert all(image == "" for _, _, image in plain)
    changed = [fork_once(f"echo {n} > pkg0/module_0.py; touch /usr/local/bin/tool{n}") for n in range(rounds)]
    assert all(image for _, _, image in changed)
    again = [fork_once("true") for _ in range(rounds)]  # nothing new outside the tree: the last commit again
    assert {image for _, _, image in again} == {changed[-1][2]}
    parent.close()
    for label, samples in (("tree only", plain), ("outside change", changed), ("commit reused", again)):
        fork_ms = statistics.median(s[0] for s in samples)
        ready_ms = statistics.median(s[1] for s in samples)
        print(f"docker fork, {label}: fork() {fork_ms:.1f} ms, fork() to the child's first answer {ready_ms:.1f} ms")


if __name__ == "__main__":
    main()
