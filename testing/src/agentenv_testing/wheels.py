"""Real installs for tests: build a distribution's wheel, and install wheels into a fresh virtual environment with
its own pip (no workspace, no editable installs), or unpack one onto a folder that goes on `sys.path`.

Where third-party dependencies come from (`pip_source_args`): when `AGENTENV_WHEELHOUSE` names a directory, pip
installs with `--no-index --find-links $AGENTENV_WHEELHOUSE`, so the test runs offline; a CI script fills that
directory beforehand with `pip download`. Without the variable, pip and the build use the package index as usual.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

WHEELHOUSE_VAR = "AGENTENV_WHEELHOUSE"


def pip_source_args() -> list[str]:
    """`--no-index --find-links DIR` when AGENTENV_WHEELHOUSE names a directory, else nothing (use the index)."""
    wheelhouse = os.environ.get(WHEELHOUSE_VAR, "")
    if wheelhouse and Path(wheelhouse).is_dir():
        return ["--no-index", "--find-links", str(Path(wheelhouse).resolve())]
    return []


def build_wheel(project: Path, out: Path) -> Path:
    """One wheel of `project` into `out`, with uv when it is on PATH, else `python -m build`."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("*.whl"))
    uv = shutil.which("uv")
    if uv:
        command = [uv, "build", "--wheel", "--out-dir", str(out), *pip_source_args(), str(project)]
    else:
        command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(project)]
    env = {**os.environ, "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never"}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"{' '.join(command)}\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


def unpack_wheel(wheel: Path, site: Path) -> Path:
    """Install a pure-Python wheel by unpacking it into `site` (what an installer does, less scripts): with `site`
    on `sys.path` or `PYTHONPATH`, its modules import and its `*.dist-info` entry points are discovered."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def run(
    command: Sequence[str], cwd: Path | None = None, timeout: float = 900, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A subprocess without the caller's agentenv, Python-path and virtual-environment variables (plus `env`)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENV_", "PYTHON", "VIRTUAL_ENV"))}
    return subprocess.run(
        list(command), capture_output=True, text=True, env={**clean, **(env or {})}, timeout=timeout, cwd=cwd
    )


def fresh_venv(folder: Path, requirements: Sequence[str | Path], find_links: Sequence[Path] = ()) -> Path:
    """A new venv in `folder/venv` holding exactly `requirements` (wheel paths or names) and what they declare,
    looked up in `find_links` too; returns its `bin/` folder."""
    venv = folder / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr
    pip_install(venv / "bin", requirements, find_links)
    files = run([str(venv / "bin" / "python"), "-c", "import agentenv; print(agentenv.__file__)"], cwd=folder)
    assert files.stdout.startswith(str(venv)), "the kernel is imported from the venv, not the workspace"
    return venv / "bin"


def pip_install(bin_dir: Path, requirements: Sequence[str | Path], find_links: Sequence[Path] = ()) -> None:
    links = [arg for folder in find_links for arg in ("--find-links", str(folder))]
    command = [str(bin_dir / "python"), "-m", "pip", "install", "--no-input", *pip_source_args(), *links]
    install = run([*command, *map(str, requirements)])
    assert install.returncode == 0, install.stdout + install.stderr


def installed(python: Path) -> set[str]:
    """The lower-cased names of the distributions installed for `python`."""
    frozen = run([str(python), "-m", "pip", "list", "--format", "json"])
    return {row["name"].lower() for row in json.loads(frozen.stdout)}
