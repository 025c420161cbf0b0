"""Start-up benchmark of the `agentenv` command: what a person waits for before anything happens.

Run: .venv/bin/python bench/startup.py [--repeat N]

Times (wall clock, fresh process each run, best and median of N, default 15) of
  python -c pass          the baseline: the interpreter alone, measured in this same run
  agentenv --version
  agentenv --help
  agentenv plugin list
using the `agentenv` console script next to this interpreter (so the same venv and the same plugins).
Each is printed with its overhead over the baseline in milliseconds and as a ratio.

Targets: `agentenv --help` ≤ 50 ms over `python -c pass` (the kernel-split issue); `--version` imports nothing heavy.
Also reported (not timed): which heavy SDKs and frameworks each command imports. `plugin list` must import
none of docker, boto3, mcp, a2a, modal, e2b, google.cloud, fastapi, openai; `--help` must not import pydantic
or typer either. The numbers depend on the machine: compare the overheads, never absolute times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY_SDKS = ("docker", "boto3", "mcp", "a2a", "modal", "e2b", "google.cloud", "fastapi", "openai")
FRAMEWORKS = ("pydantic", "typer", "click")
HELP_TARGET_MS = 50.0

PROBE = """
import contextlib, io, json, sys
from agentenv.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main(json.loads(sys.argv[1]))
watched = json.loads(sys.argv[2])
print(json.dumps(sorted({w for w in watched for m in sys.modules if m == w or m.startswith(w + ".")})))
"""


def console_script() -> Path:
    script = Path(sys.executable).parent / "agentenv"
    if not script.exists():
        raise SystemExit(f"no `agentenv` console script next to {sys.executable}: install agentenv-kernel there")
    return script


def timed(command: list[str], repeat: int) -> tuple[float, float]:
    """(best, median) wall seconds of running `command` to completion; one warm-up run first."""
    subprocess.run(command, capture_output=True, check=True)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def imported(args: list[str], watched: tuple[str, ...]) -> list[str]:
    """Which of `watched` (packages) the dispatcher imports while running `agentenv ARGS`."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(list(watched))],
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[str] = json.loads(proc.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs per command (default 15)")
    repeat = parser.parse_args().repeat

    script = str(console_script())
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "agentenv --version": [script, "--version"],
        "agentenv --help": [script, "--help"],
        "agentenv plugin list": [script, "plugin", "list"],
    }
    print(f"interpreter: {sys.executable} ({sys.version.split()[0]}); {repeat} runs each, best / median")
    results = {label: timed(command, repeat) for label, command in commands.items()}
    base_best, base_median = results["python -c pass"]
    print(f"{'command':<24}{'best ms':>9}{'median ms':>11}{'overhead best/median ms':>26}{'ratio':>8}")
    for label, (best, median) in results.items():
        overhead = f"{(best - base_best) * 1000:.1f} / {(median - base_median) * 1000:.1f}"
        print(f"{label:<24}{best * 1000:>9.1f}{median * 1000:>11.1f}{overhead:>26}{median / base_median:>7.1f}x")

    help_overhead = (results["agentenv --help"][1] - base_median) * 1000
    verdict = "meets" if help_overhead <= HELP_TARGET_MS else "MISSES"
    print(
        f"\ntarget: `agentenv --help` ≤ {HELP_TARGET_MS:.0f} ms over `python -c pass` (median): {verdict} "
        f"({help_overhead:.0f} ms)"
    )

    print("\nimports (not timed):")
    for args in (["--version"], ["--help"], ["plugin", "list"]):
        heavy = imported(args, HEAVY_SDKS)
        frameworks = imported(args, FRAMEWORKS)
        print(
            f"  agentenv {' '.join(args):<12} heavy SDKs: {', '.join(heavy) or 'none'}; "
            f"frameworks: {', '.join(frameworks) or 'none'}"
        )
    heavy_on_list = imported(["plugin", "list"], HEAVY_SDKS)
    print(
        f"target: `plugin list` imports none of {', '.join(HEAVY_SDKS)}: {'meets' if not heavy_on_list else 'MISSES'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
