"""Run benchmarks (the tasks issue).

1. `agentenv run hello` versus bare `python -c pass` on this machine, in one script (overhead target ≤ 200 ms),
   in this workspace's venv and in a fresh install of just the distributions hello needs (made with uv).
2. Graded `support-refund` rollouts per second with the scripted agent in-process (`-k N`, default 1000;
   target ≥ 300/s on 2 cores), against a baseline measured in the same process: the same tool calls made
   directly on a forked world with no engine, steps, agent or records; then the same rollouts over two worker
   processes (`agentenv run -k N --workers 2`), worlds still in-process inside each worker.

Run: .venv/bin/python bench/run_bench.py [-k 1000] [--repeat 21]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def wall(command: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
    return time.perf_counter() - start


ROOT = Path(__file__).resolve().parent.parent
HELLO_DISTRIBUTIONS = [
    "kernel",
    "runtime",
    "plugins/bundles/hello",
    "plugins/steps/steps",
    "plugins/envs/slack",
    "plugins/agents/core",
    "plugins/stores/local",
]
"""What `agentenv run hello` needs: `pip install agentenv-hello`, which declares agentenv-kernel, agentenv-runtime,
agentenv-steps, agentenv-slack, agentenv-agents and agentenv-store-local."""


def compile_bytecode() -> None:
    """Measure agentenv as installed: installers write bytecode (pip does by default, uv with
    --compile-bytecode), and Python writes it on first import unless PYTHONDONTWRITEBYTECODE is set, as it is
    on some CI machines; without it every start would compile every module from source."""
    import compileall
    import sysconfig

    folders = {sysconfig.get_paths()["purelib"], *(p for p in sys.path if p.startswith(str(ROOT)))}
    for folder in sorted(folders):
        compileall.compile_dir(folder, quiet=1, workers=0)


def fresh_install(folder: Path) -> Path | None:
    """A new venv holding only what hello needs, installed from this checkout as regular (not editable)
    packages with bytecode, as a user's `pip install` gives. Its `bin` folder, or None without uv."""
    import shutil

    uv = shutil.which("uv")
    if uv is None:
        print("fresh install: skipped (uv not found; `./dev sync` installs it)")
        return None
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(folder)], check=True)
    python = folder / "bin" / "python"
    install = [uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python)]
    subprocess.run([*install, *HELLO_DISTRIBUTIONS], check=True, cwd=ROOT)
    return folder / "bin"


def bench_hello(repeat: int) -> None:
    """`agentenv run hello` against `python -c pass` of the same venv: in this workspace (every distribution
    installed editable, the test tools beside them) and in a fresh install of just what hello needs. All the
    commands alternate, so a slow spell of the machine hits each alike."""
    compile_bytecode()
    with tempfile.TemporaryDirectory() as cwd:
        venvs = {"workspace venv": BIN}
        fresh = fresh_install(Path(cwd) / "fresh")
        if fresh is not None:
            venvs["fresh install"] = fresh
        env = {k: v for k, v in os.environ.items() if k != "AGENTENV_CONFIG"}
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(repeat):
            for label, bin_dir in venvs.items():
                for command in ("pass", "hello"):
                    argv = (
                        [str(bin_dir / "python"), "-c", "pass"]
                        if command == "pass"
                        else [str(bin_dir / "agentenv"), "run", "hello"]
                    )
                    samples.setdefault((label, command), []).append(wall(argv, env, cwd))
    for label in venvs:
        base, hello = samples[(label, "pass")], samples[(label, "hello")]
        print(f"{label}:")
        for name, times in (("python -c pass:    ", base), ("agentenv run hello:", hello)):
            print(f"  {name} best {min(times) * 1000:6.1f} ms, median {statistics.median(times) * 1000:6.1f} ms")
        overhead = (statistics.median(hello) - statistics.median(base)) * 1000
        best = (min(hello) - min(base)) * 1000
        verdict = "met" if overhead <= 200 else "NOT met"
        print(f"  overhead: {overhead:.0f} ms median, {best:.0f} ms best of {repeat} (target ≤ 200 ms: {verdict})")


def baseline_rollout(template: object) -> None:
    world = template.fork()  # type: ignore[attr-defined]
    ticket = world.call("get_ticket", {"ticket_id": "TCK-9001"}, "billing_lead").result
    order = world.call("get_order", {"order_id": ticket["order_id"]}, "billing_lead").result
    world.call("issue_refund", {"order_id": order["order_id"], "amount": 89.99, "reason": "x"}, "billing_lead")
    world.call("close_ticket", {"ticket_id": "TCK-9001", "resolution": "done"}, "billing_lead")
    world.call("send_email", {"to": ["dana.kim@example.com"], "subject": "s", "body": "89.99"}, "billing_lead")
    world.trajectory.digest()


def bench_rollouts(k: int) -> None:
    from agentenv.plugins.host import get_host
    from agentenv_runtime.engine.bundle import find_bundle
    from agentenv_runtime.engine.runner import TaskRunner
    from agentenv_runtime.engine.task import read_task
    from agentenv_runtime.world.build import build_world
    from agentenv_testing.tasks import temporary_config

    host = get_host()
    bundle = find_bundle("support-refund", host)
    task = read_task(bundle.task_files()["resolve-refund"])
    with tempfile.TemporaryDirectory() as tmp:
        runner = TaskRunner(host, temporary_config(Path(tmp)))

        async def rollouts(n: int) -> list[float | None]:
            scores = []
            for seed in range(n):
                record = await runner.run(task, seed=seed, bundle="support-refund", bundle_dir=bundle.path)
                scores.append(record["score"])
            return scores

        asyncio.run(rollouts(10))  # warm caches (template world, memoized loads, parsed policy)
        start = time.perf_counter()
        scores = asyncio.run(rollouts(k))
        took = time.perf_counter() - start
    template = build_world("helpdesk,email,slack", artifacts=["acme"], roles={"billing_lead": {"tools": ["*"]}})
    for _ in range(10):
        baseline_rollout(template)
    start = time.perf_counter()
    for _ in range(k):
        baseline_rollout(template)
    base = time.perf_counter() - start
    from agentenv_runtime.engine.runner import run_parallel

    with tempfile.TemporaryDirectory() as tmp:
        config_file = Path(tmp) / "config.toml"
        config_file.write_text(
            f'[plugins.agentenv-store-local.document]\npath = "{tmp}/records.sqlite3"\n'
            f'[plugins.agentenv-store-local.object]\nroot = "{tmp}/objects"\n'
        )
        os.environ["AGENTENV_CONFIG"] = str(config_file)
        start = time.perf_counter()
        parallel = run_parallel(
            task,
            list(range(k)),
            2,
            bundle="support-refund",
            bundle_dir=bundle.path,
            overrides={},
            on_done=lambda summary: None,
        )
        took_parallel = time.perf_counter() - start
        os.environ.pop("AGENTENV_CONFIG")
    rate, base_rate = k / took, k / base
    print(
        f"support-refund, {k} graded rollouts in-process (scripted agent, records written): "
        f"{rate:.0f}/s ({took / k * 1000:.2f} ms each); all scored 1.0: {all(s == 1.0 for s in scores)}"
    )
    print(
        f"  baseline (same tool calls on a forked world, no engine): {base_rate:.0f}/s "
        f"({base / k * 1000:.2f} ms each); engine+steps+agent+records cost {rate and base_rate / rate:.2f}x"
    )
    rate2 = k / took_parallel
    print(
        f"  with --workers 2 (worker start-up included): {rate2:.0f}/s, all scored 1.0: "
        f"{all(s['score'] == 1.0 for s in parallel)}; {rate2 / rate:.2f}x the single process"
    )
    print(
        f"  target ≥ 300/s on 2 cores: {'met' if max(rate, rate2) >= 300 else 'NOT met'} ({os.cpu_count()} cores here)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-k", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    bench_hello(args.repeat)
    bench_rollouts(args.k)
