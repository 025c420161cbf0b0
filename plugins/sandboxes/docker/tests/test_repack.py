"""A regular (wheel) install is packed again into a wheel with the same files, which installs and imports.

This is what lets `--sandbox docker` build world images from a `pip install` of wheels, where no source
folder exists. No Docker needed: the wheel is compared file by file and installed with pip (`--no-deps`).
"""

from __future__ import annotations

import csv
import importlib.metadata
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from agentenv_docker.repack import RepackError, record_hash, repack_installed

PROJECT = Path(__file__).resolve().parents[2] / "local"  # agentenv-sandbox-local: small and pure


def build(project: Path, out: Path) -> Path:
    uv = shutil.which("uv")
    command = [uv, "build", "--wheel", "--out-dir", str(out), str(project)] if uv else [
        sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(project)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


def pip() -> list[str]:
    """A pip to install with: this interpreter's, else python3's (uv venvs have none)."""
    for python in (sys.executable, shutil.which("python3")):
        if python and subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return [python, "-m", "pip"]
    pytest.skip("no pip on this machine to install a wheel with")


def pip_install(wheel: Path, target: Path) -> importlib.metadata.Distribution:
    done = subprocess.run(
        [*pip(), "install", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (info,) = target.glob("*.dist-info")
    return importlib.metadata.Distribution.at(info)


def contents(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/RECORD")}


def test_an_installed_wheel_packs_again_into_the_same_wheel(tmp_path: Path) -> None:
    original = build(PROJECT, tmp_path / "dist")
    installed = pip_install(original, tmp_path / "site")
    out = tmp_path / "repacked"
    out.mkdir()
    again = repack_installed(installed, out)
    assert again.name == original.name
    assert contents(again) == contents(original), "the same files with the same bytes"
    with zipfile.ZipFile(again) as archive:
        record = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))).decode()
    files = contents(again)
    for path, digest, size in csv.reader(record.splitlines()):
        if path in files:
            assert (digest, int(size)) == (record_hash(files[path]), len(files[path])), path
    reinstalled = pip_install(again, tmp_path / "site2")
    assert reinstalled.version == installed.version


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    installed = pip_install(build(PROJECT, tmp_path / "dist"), tmp_path / "site")
    victim = next(Path(str(f.locate())) for f in installed.files or [] if f.suffix == ".py")
    victim.unlink()
    with pytest.raises(RepackError, match="listed in its RECORD but missing; reinstall"):
        repack_installed(installed, tmp_path)
