"""Sandbox benchmark: how long until a served world answers its card, versus a warm in-process fork.

Run: .venv/bin/python bench/sandbox_bench.py [--rounds N] [--forks N] [--no-docker]

The world is the support desk (helpdesk + email + slack with `acme`, two roles), started the way deploy_env
starts it (`agentenv_steps.deploy.ServePlan`: role file and artifacts put into the sandbox, random tokens
in environment variables, `agentenv serve` waiting for them):

  process   cold start: create a `process` sandbox → put files → `GET /.well-known/agent-env.json` answers
  docker    the same in a `docker` sandbox from the world image (its build time is reported separately and
            is not part of the cold start: the image is built once per set of installed versions)
  fork      warm start: `fork()` of an in-process template world (what every in-process deploy does) plus
            arming the clock — the baseline, measured in the same run

Reported: median and p90 per start, and the ratios of each cold start to the warm fork and docker to
process. Compare ratios, not absolute times: they depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentenv.contracts import kinds

ENVS = ["helpdesk", "email", "slack"]
ROLES = {"support": {"tools": ["*"], "deny": ["issue_refund"]}, "billing_lead": {"tools": ["*"]}}
START = "2026-11-24T10:00:00Z"


def plan_and_classes() -> tuple[Any, dict[str, Any]]:
    from agentenv.plugins.host import get_host
    from agentenv_runtime.env.artifact import Artifact
    from agentenv_steps.deploy import DeployEnvSettings, ServePlan

    host = get_host()
    classes = {name: host.get(kinds.ENVS, name) for name in ENVS}
    pairs = [(name, Artifact.from_file(cls.artifact_paths()["acme"])) for name, cls in classes.items()]
    settings = DeployEnvSettings(envs=ENVS, roles=ROLES, start=START)
    return ServePlan(settings, classes, pairs, seed=0), classes


def cold_start(provider: Any, spec_fields: dict[str, Any], plan: Any) -> float:
    """Seconds from `create` to an answered card; the sandbox is torn down afterwards (not timed)."""
    from agentenv.contracts import SandboxSpec
    from agentenv_gateway.client import wait_for_card

    spec = SandboxSpec(env=plan.env, ports=[8000], labels={"agentenv.run": "sandbox-bench"}, **spec_fields)
    started = time.perf_counter()
    sandbox = provider.create(spec)
    try:
        for path, data in plan.files.items():
            sandbox.put_file(path, data)
        sandbox.put_file("world/ready", b"")
        wait_for_card(sandbox.url(8000), plan.tokens["control"], timeout=180, interval=0.01)
        return time.perf_counter() - started
    finally:
        sandbox.teardown()


def warm_fork(template: Any) -> float:
    """Seconds for one deploy from a template: a fork plus arming the clock (as deploy_env does in process)."""
    started = time.perf_counter()
    world = template.fork()
    world.set_clock(START, mode="frozen")
    return time.perf_counter() - started


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"median {fmt(statistics.median(times))}  p90 {fmt(p90)}  (n={len(times)})"


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 1 else f"{seconds:.3f} s"


def measure(name: str, rounds: int, run: Callable[[], float]) -> list[float]:
    times = [run() for _ in range(rounds)]
    print(f"{name:<28} {summary(times)}", flush=True)
    return times


def docker_usable() -> str | None:
    """None when docker can be used, else why not."""
    try:
        if subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode != 0:
            return "`docker info` failed"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no docker: {exc}"
    try:
        import agentenv_docker  # noqa: F401
    except ImportError:
        return "agentenv-docker is not installed"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="cold starts per provider")
    parser.add_argument("--forks", type=int, default=200, help="warm forks")
    parser.add_argument("--no-docker", action="store_true", help="skip the docker provider")
    args = parser.parse_args()

    from agentenv.plugins.host import get_host
    from agentenv_sandbox_local.process import ProcessProvider
    from agentenv_steps.serving import world_dists

    plan, classes = plan_and_classes()
    print(f"world {'+'.join(ENVS)} (acme), roles {', '.join(ROLES)}; python {sys.version.split()[0]}\n")
    from agentenv_runtime.world.build import build_world

    template = build_world(ENVS, artifacts=["acme"], roles=ROLES)
    fork = measure("fork (warm, in process)", args.forks, lambda: warm_fork(template))

    with tempfile.TemporaryDirectory(prefix="agentenv-bench-") as scratch:
        process_provider = ProcessProvider({"root": scratch, "state_dir": str(Path(scratch) / "state")})
        python = [sys.executable]
        process = measure(
            "process (cold, to card)",
            args.rounds,
            lambda: cold_start(process_provider, {"command": plan.command(*python, "127.0.0.1", "{port}")}, plan),
        )

    docker: list[float] = []
    why_not = "skipped (--no-docker)" if args.no_docker else docker_usable()
    if why_not is None:
        from agentenv_docker.images import ensure_world_image
        from agentenv_docker.provider import DockerProvider

        class HostCtx:
            host = get_host()

        dists = world_dists(classes, HostCtx())
        started = time.perf_counter()
        tag, built = ensure_world_image(dists)
        build = time.perf_counter() - started
        print(f"{'docker world image':<28} {tag}: " + (f"built in {fmt(build)}" if built else "already built"))
        docker_provider = DockerProvider()
        command = plan.command("python3", "0.0.0.0", "8000")
        docker = measure(
            "docker (cold, to card)",
            args.rounds,
            lambda: cold_start(docker_provider, {"image": tag, "command": command}, plan),
        )
    else:
        print(f"{'docker (cold, to card)':<28} {why_not}")

    base = statistics.median(fork)
    print("\nratios (median / median)")
    print(f"  process cold / fork warm   {statistics.median(process) / base:,.0f}x")
    if docker:
        print(f"  docker cold / fork warm    {statistics.median(docker) / base:,.0f}x")
        print(f"  docker cold / process cold {statistics.median(docker) / statistics.median(process):.2f}x")


if __name__ == "__main__":
    main()
