"""Plugin loading: why agentenv uses neither stevedore nor the importlib-metadata backport at run time.

Run: .venv/bin/python bench/plugin_loading.py [--repeat N]

In fresh interpreters (best and median of N, default 21), against `python -c pass` measured in the same run:
  import stevedore                    what it would add to every start if the dispatcher used it
  stevedore: list agentenv.plugins    ExtensionManager over our group without loading (its own entry-point cache)
  stdlib: list agentenv.plugins       importlib.metadata.entry_points(group=…) with each distribution's name
  import importlib_metadata           the backport, against `import importlib.metadata`
  agentenv --help                     the whole command as shipped (discovery cache on)
and whether stevedore's listing keeps what the metadata-first compatibility check needs (the distribution of
each entry point, to read its declared ranges before importing it).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

STEVEDORE_LIST = """
from stevedore import ExtensionManager
m = ExtensionManager("agentenv.plugins", invoke_on_load=False, on_load_failure_callback=None, verify_requirements=False)
"""
STEVEDORE_NO_LOAD = """
from stevedore._cache import get_group_all
eps = get_group_all("agentenv.plugins")
print(len(eps), all(hasattr(ep, "dist") and ep.dist is not None for ep in eps))
"""
STDLIB_LIST = """
from importlib.metadata import entry_points
eps = entry_points(group="agentenv.plugins")
print(len(eps), [ep.dist.metadata["Name"] for ep in eps][:1])
"""


def timed(command: list[str], repeat: int) -> tuple[float, float]:
    subprocess.run(command, capture_output=True, check=False)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return min(samples), statistics.median(samples)


def available(module: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    repeat = parser.parse_args().repeat
    py = sys.executable
    agentenv = str(Path(py).parent / "agentenv")
    commands = {"python -c pass": [py, "-c", "pass"]}
    commands["import importlib.metadata"] = [py, "-c", "import importlib.metadata"]
    commands["stdlib: list agentenv.plugins"] = [py, "-c", STDLIB_LIST]
    if available("stevedore"):
        commands["import stevedore"] = [py, "-c", "import stevedore"]
        commands["stevedore: list agentenv.plugins"] = [py, "-c", STEVEDORE_LIST]
    if available("importlib_metadata"):
        commands["import importlib_metadata"] = [py, "-c", "import importlib_metadata"]
    commands["agentenv --help"] = [agentenv, "--help"]
    results = {name: timed(command, repeat) for name, command in commands.items()}
    base = results["python -c pass"][1]
    print(f"{repeat} runs each, best / median ms; overhead = median minus `python -c pass`")
    for name, (best, median) in results.items():
        print(f"  {name:36} {best:7.1f} {median:7.1f}   +{median - base:6.1f} ms")
    help_over = results["agentenv --help"][1] - base
    if "import stevedore" in results:
        extra = results["import stevedore"][1] - base
        print(
            f"\nstevedore on the start path: +{extra:.1f} ms on top of `agentenv --help` "
            f"({help_over:.1f} ms over the interpreter): {100 * extra / max(help_over, 0.1):.0f} % more"
        )
        kept = subprocess.run([py, "-c", STEVEDORE_NO_LOAD], capture_output=True, text=True)
        print(f"stevedore's cached entry points keep their distribution: {kept.stdout.strip() or kept.stderr[-200:]}")
    else:
        print("\nstevedore is not installed here (it is a dev dependency of the workspace: ./dev sync)")
    if "import importlib_metadata" in results:
        diff = results["import importlib_metadata"][1] - results["import importlib.metadata"][1]
        print(
            f"importlib_metadata backport vs the standard library: {diff:+.1f} ms, and no feature we use is missing "
            f"from importlib.metadata on Python {sys.version_info.major}.{sys.version_info.minor}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
