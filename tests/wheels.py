"""Wheels of the workspace's distributions and fresh virtual environments that hold only some of them.

Building, running and where dependencies come from are `agentenv_testing.wheels`' (`AGENTENV_WHEELHOUSE`:
`.ci/run` fills it with `pip download` of every third-party requirement in `uv.lock`, so installs run offline).

Two installers: `pip_venv` is what a user does (`python -m venv` + pip); `uv_venv` is the same install made by
uv, about ten times faster, for the matrix that makes one environment per distribution.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from agentenv_testing.wheels import build_wheel, run
from agentenv_testing.wheels import pip_source_args as source_args

ROOT = Path(__file__).resolve().parents[1]


def projects() -> dict[str, Path]:
    """Every workspace distribution → its folder (kernel, runtime, testing, plugins/*/*)."""
    folders = [ROOT / "kernel", ROOT / "runtime", ROOT / "testing", *sorted(ROOT.glob("plugins/*/*"))]
    found = {}
    for folder in folders:
        if (folder / "pyproject.toml").is_file():
            found[tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]] = folder
    return found


def uv() -> str | None:
    user_bin = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(user_bin) if user_bin.exists() else None)


def build_all(out: Path) -> dict[str, Path]:
    """A wheel of every workspace distribution, by distribution name."""
    return {name: build_wheel(folder, out) for name, folder in projects().items()}


@dataclass
class Venv:
    """A fresh virtual environment: its folder, interpreter and `agentenv` console script."""

    root: Path
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def agentenv(self) -> Path:
        return self.root / "bin" / "agentenv"

    def run(self, *args: str | Path, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """A command of this venv (`agentenv …` or `python …`) with its own bin first on PATH."""
        head, *rest = (str(a) for a in args)
        program = str(self.root / "bin" / head) if (self.root / "bin" / head).exists() else head
        env = {"PATH": f"{self.root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", **self.extra_env}
        return run([program, *rest], env=env, cwd=cwd or self.root.parent, timeout=timeout)

    def installed(self) -> set[str]:
        listed = self.run("python", "-m", "pip", "list", "--format", "json") if self._has_pip() else None
        if listed is not None and listed.returncode == 0:
            return {row["name"].lower() for row in json.loads(listed.stdout)}
        tool = uv()
        assert tool, "neither pip nor uv to list the venv with"
        frozen = run([tool, "pip", "list", "--python", str(self.python), "--format", "json"])
        return {row["name"].lower() for row in json.loads(frozen.stdout)}

    def _has_pip(self) -> bool:
        return any((self.root / "lib").glob("python*/site-packages/pip"))


def pip_venv(folder: Path, wheels: list[Path], find_links: Path | None = None) -> Venv:
    """`python -m venv` + `pip install WHEELS`: exactly `wheels` and what they declare, as a user installs.
    `find_links` (our other wheels) stands in for the index where a user's pip finds the declared siblings."""
    made = run([sys.executable, "-m", "venv", str(folder)])
    assert made.returncode == 0, made.stderr
    venv = Venv(folder)
    links = ["--find-links", str(find_links)] if find_links else []
    install = venv.run("python", "-m", "pip", "install", "--no-input", *source_args(), *links, *map(str, wheels))
    assert install.returncode == 0, install.stdout + install.stderr
    _assert_isolated(venv)
    return venv


def uv_venv(folder: Path, wheels: list[Path], find_links: Path) -> Venv:
    """The same install made by uv; the other workspace wheels are only a place to find declared siblings."""
    tool = uv()
    assert tool, "uv is needed for the install matrix (./dev installs it)"
    made = run([tool, "venv", "--quiet", "--python", sys.executable, str(folder)])
    assert made.returncode == 0, made.stderr
    venv = Venv(folder)
    install = run([tool, "pip", "install", "--quiet", "--python", str(venv.python), *source_args(),
                   "--find-links", str(find_links), *map(str, wheels)])  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    _assert_isolated(venv)
    return venv


def _assert_isolated(venv: Venv) -> None:
    where = venv.run("python", "-c", "import agentenv; print(agentenv.__file__)")
    assert where.stdout.startswith(str(venv.root)), f"the kernel is imported from outside the venv: {where.stdout}"
