"""Real installs for tests: build a distribution's wheel, and install wheels into a fresh virtual environment with
its own pip (no workspace, no editable installs), or unpack one onto a folder that goes on `sys.path`.

Where third-party dependencies come from (`pip_source_args`): when `AGENTENV_WHEELHOUSE` names a directory, pip
installs with `--no-index --find-links $AGENTENV_WHEELHOUSE`, so the test runs offline; a CI script fills that
directory beforehand with `pip download`. Without the variable, pip and the build use the package index as usual.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

WHEELHOUSE_VAR = "AGENTENV_WHEELHOUSE"
FRAMEWORK_VENVS_VAR = "AGENTENV_FRAMEWORK_VENVS"
"""Where `framework_venv` keeps its venvs (default `~/.cache/agentenv/framework-venvs`)."""


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


def uv_binary() -> str | None:
    """uv on PATH, or where `./dev sync` installs it; None when there is none (a test then skips, naming it)."""
    return shutil.which("uv") or next((str(p) for p in [Path.home() / ".local/bin/uv"] if p.exists()), None)


def find_python(version: str) -> str | None:
    """An interpreter of Python `version` (3.13, or 3.13.0): `python3.13` on PATH if it runs (a pyenv shim of a
    version that is installed but not selected does not), else the newest matching pyenv build; None if neither."""
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return found
    versions = Path.home() / ".pyenv" / "versions"
    builds = [*versions.glob(f"{version}/bin/python"), *versions.glob(f"{version}.*/bin/python")]
    if not builds:
        return None
    return str(max(builds, key=lambda path: [int(part) for part in re.findall(r"\d+", path.parent.parent.name)]))


def framework_venv(
    name: str, requirements: Sequence[str | Path], *, python: str = "3.11", editables: Sequence[Path] = ()
) -> Path:
    """The interpreter of a venv holding a framework's real published packages, never the workspace lock's: made
    with uv (its shared cache) under `$AGENTENV_FRAMEWORK_VENVS` and kept for reuse, keyed by what it holds.

    `requirements` are pip arguments: names with versions, or a `Path` to a requirements file (its content goes
    into the key); `editables` are local projects installed with `-e`. `python` is a version `find_python` finds
    (check it first to skip with a reason). Needs uv (`uv_binary()`)."""
    uv = uv_binary()
    assert uv is not None, "uv is not installed (./dev sync installs it)"
    interpreter = find_python(python)
    assert interpreter is not None, f"Python {python} is not installed (neither python{python} on PATH nor pyenv's)"
    held = [item.read_text(encoding="utf-8") if isinstance(item, Path) else item for item in requirements]
    key = hashlib.sha256(json.dumps([held, python, [str(e) for e in editables]]).encode()).hexdigest()[:12]
    root = Path(os.environ.get(FRAMEWORK_VENVS_VAR, Path.home() / ".cache/agentenv/framework-venvs"))
    venv = root / f"{name}-{key}"
    if (venv / ".agentenv-ready").exists():
        return venv / "bin" / "python"
    shutil.rmtree(venv, ignore_errors=True)
    env = {"UV_PYTHON_DOWNLOADS": "never"}
    made = run([uv, "venv", "-q", "-p", interpreter, str(venv)], env=env)
    assert made.returncode == 0, made.stderr[-2000:]
    args = [arg for item in requirements for arg in (["-r", str(item)] if isinstance(item, Path) else [item])]
    args += [arg for project in editables for arg in ("-e", str(project))]
    command = [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *args]
    installed = run(command, env=env, timeout=1800)
    assert installed.returncode == 0, f"{' '.join(command)}\n{installed.stderr[-3000:]}"
    (venv / ".agentenv-ready").write_text("ok\n")
    return venv / "bin" / "python"
