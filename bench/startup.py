"""Start-up benchmark of the `agentenv` command: what a person waits for before anything happens.

Run: .venv/bin/python bench/startup.py [--repeat N] [--peer PATH/TO/agent-env | --no-peer]

Times (wall clock, fresh process each run, best and median of N, default 15; the commands take turns, so
load from other jobs reaches them alike) of
  python -c pass          the baseline: the interpreter alone, measured in this same run
  agentenv --version
  agentenv --help
  agentenv plugin list
  agentenv run hello      in a fresh empty folder (its store is created there, as a newcomer's is)
using the `agentenv` console script next to this interpreter (so the same venv and the same plugins).
Each is printed with its overhead over the baseline in milliseconds and as a ratio.

The peer framework (agentenv-framework 0.9.1364, its `agent-env` script) runs `agent-env --help` and
`agent-env run hello` in the same run, and the speed-ups are printed as ratios of medians. Its venv is `--peer`,
else `$AGENTENV_PEER_CLI`, else one this script builds once in `$TMPDIR/agentenv-peer-0.9.1364` with uv (from
`$AGENTENV_WHEELHOUSE/reference` first, then the index; the peer needs the network once for its SDKs).
Every command runs with bytecode caching on (`PYTHONDONTWRITEBYTECODE` removed; the warm-up run writes the
caches): compiling every module on every start is not what a user's installed tools do.

Targets: `agentenv --help` ≤ 50 ms over `python -c pass` (the kernel-split issue) and ≥ 20× faster than the peer's;
`agentenv run hello` ≥ 10× faster than the peer's `agent-env run hello` (issue 32); `--version` imports nothing heavy.
Where `run hello`'s time goes (measured 2026-12-06): a script that only imports pydantic and asyncio, builds one
model and runs an empty `asyncio.run` costs about two thirds of it (~170 ms of ~250 ms on a quiet machine), so 10×
the peer (~180 ms) would leave our own code (CLI, plugin host, engine, store, the run) ~10 ms; it takes ~60 ms (the
run itself, imports done, ~15 ms). That script is the `floor: pydantic+asyncio` row, timed in the same rounds; its
ratio to the peer's `run hello` is printed: on the 2-core CI machine it is itself just under 10×.
Also reported (not timed): which heavy SDKs and frameworks each command imports. `plugin list` must import
none of docker, boto3, mcp, a2a, modal, e2b, google.cloud, fastapi, openai; `--help` must not import pydantic
or typer either. The numbers depend on the machine: compare the overheads, never absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY_SDKS = ("docker", "boto3", "mcp", "a2a", "modal", "e2b", "google.cloud", "fastapi", "openai")
FRAMEWORKS = ("pydantic", "typer", "click")
HELP_TARGET_MS = 50.0
PEER = "agentenv-framework==0.9.1364"
RUN_TARGET, HELP_RATIO_TARGET = 10.0, 20.0
FLOOR = (
    "import asyncio\nfrom pydantic import BaseModel\nclass Step(BaseModel):\n    id: str\n"
    "Step(id='hello')\nasyncio.run(asyncio.sleep(0))\n"
)
"""What any run of a pydantic-validated asyncio engine pays before its own code: the `run hello` floor row."""
CACHED_BYTECODE = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

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


def peer_cli(asked: str | None) -> Path:
    """The peer's `agent-env` script: the one named, or a venv built once for this benchmark."""
    named = asked or os.environ.get("AGENTENV_PEER_CLI")
    if named:
        if not Path(named).is_file():
            raise SystemExit(f"--peer {named}: no such file (point it at the `agent-env` script of a {PEER} venv)")
        return Path(named)
    venv = Path(tempfile.gettempdir()) / f"agentenv-peer-{PEER.split('==')[1]}"
    script = venv / "bin" / "agent-env"
    if script.exists():
        return script
    uv = shutil.which("uv")
    if uv is None:
        raise SystemExit("no uv on PATH to build the peer's venv: install uv, or pass --peer (or --no-peer)")
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    links = Path(os.environ.get("AGENTENV_WHEELHOUSE", "/nonexistent")) / "reference"
    extra = ["--find-links", str(links)] if links.is_dir() else []
    print(f"building the peer's venv in {venv} ({PEER}; once)", file=sys.stderr)
    subprocess.run([uv, "pip", "install", "-q", "-p", str(venv / "bin" / "python"), *extra, PEER], check=True)
    return script


def timed(commands: dict[str, list[str]], repeat: int, cwd: Path | None = None) -> dict[str, tuple[float, float]]:
    """(best, median) wall seconds of running each command to completion; one warm-up run of each first.

    The runs are interleaved (one of each command per round, in turn), so a change in the machine's load
    during the benchmark reaches every command alike and the ratios stay comparable on a shared machine.
    """
    for command in commands.values():
        subprocess.run(command, capture_output=True, check=True, cwd=cwd, env=CACHED_BYTECODE)
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(repeat):
        for label, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True, cwd=cwd, env=CACHED_BYTECODE)
            samples[label].append(time.perf_counter() - start)
    return {label: (min(times), statistics.median(times)) for label, times in samples.items()}


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
    parser.add_argument("--peer", metavar="PATH", help="the peer's `agent-env` script (default: see above)")
    parser.add_argument("--no-peer", action="store_true", help="time our commands only")
    options = parser.parse_args()
    repeat = options.repeat

    script = str(console_script())
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "agentenv --version": [script, "--version"],
        "agentenv --help": [script, "--help"],
        "agentenv plugin list": [script, "plugin", "list"],
        "agentenv run hello": [script, "run", "hello"],
        "floor: pydantic+asyncio": [sys.executable, "-c", FLOOR],
    }
    if not options.no_peer:
        peer = str(peer_cli(options.peer))
        commands |= {"peer agent-env --help": [peer, "--help"], "peer agent-env run hello": [peer, "run", "hello"]}
    print(f"interpreter: {sys.executable} ({sys.version.split()[0]}); {repeat} runs each, best / median")
    with tempfile.TemporaryDirectory(prefix="agentenv-startup-") as scratch:  # run hello writes its store here
        results = timed(commands, repeat, Path(scratch))
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

    if not options.no_peer:
        for ours, theirs, target in (("agentenv run hello", "peer agent-env run hello", RUN_TARGET),
                                     ("agentenv --help", "peer agent-env --help", HELP_RATIO_TARGET)):  # fmt: skip
            ratio = results[theirs][1] / results[ours][1]
            verdict = "meets" if ratio >= target else "MISSES"
            print(f"target: `{ours}` ≥ {target:.0f}× faster than the peer's (medians): {verdict} ({ratio:.1f}×)")
        floor = results["peer agent-env run hello"][1] / results["floor: pydantic+asyncio"][1]
        print(
            f"  (the floor row, importing pydantic and asyncio, building one model and running an empty loop, is "
            f"{floor:.1f}× the peer's `run hello`: the most `run hello` can reach while it keeps pydantic and asyncio)"
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
