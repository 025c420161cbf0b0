"""Workspace artifacts: where a workspace's starting files come from.

A workspace artifact is an ordinary artifact file (`{"name", "env": "workspace", "version", "data"}`) whose
`data` names one source, relative to the artifact file's folder:
- `{"folder": "calc"}` — a directory, copied as it is;
- `{"tarball": "calc.tar.gz"}` — a tar archive (any compression `tarfile` reads);
- `{"git": "calc.bundle", "commit": "<sha>"}` — a git repository (a folder or a `git bundle` file) checked
  out at that commit, history included;
- `{"files": {"path": "content", …}}` — files written inline.

Any of them may add `"git_init": true`: the files become the first commit of a fresh repository (fixed
author and date, so the commit id is the same on every machine), for tasks that ask the agent to commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from agentenv_runtime import Artifact, ArtifactError

SOURCE_KINDS = ("folder", "tarball", "git", "files")
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "agentenv",
    "GIT_AUTHOR_EMAIL": "agentenv@example.com",
    "GIT_COMMITTER_NAME": "agentenv",
    "GIT_COMMITTER_EMAIL": "agentenv@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def source_kind(artifact: Artifact) -> str:
    """Which source the artifact names; ArtifactError naming the file and field otherwise."""
    given = [kind for kind in SOURCE_KINDS if kind in artifact.data]
    if len(given) != 1:
        raise ArtifactError(
            f"{artifact.source}: field `data` must name exactly one source of {', '.join(SOURCE_KINDS)} "
            f'(found {", ".join(given) or "none"}); e.g. "data": {{"folder": "repo"}}'
        )
    return given[0]


def materialize(artifact: Artifact, target: Path) -> None:
    """Write the artifact's files into the empty folder `target`."""
    kind = source_kind(artifact)
    base = Path(artifact.source).parent if artifact.source and not artifact.source.startswith("<") else Path.cwd()
    value: Any = artifact.data[kind]
    where = f"{artifact.source}: field `data.{kind}`"
    if kind == "files":
        _write_files(value, target, where)
    else:
        if not isinstance(value, str) or not value:
            raise ArtifactError(f"{where}: give a path relative to the artifact file")
        path = (base / value).resolve()
        if not path.exists():
            raise ArtifactError(f"{where}: {path} does not exist")
        if kind == "folder":
            if not path.is_dir():
                raise ArtifactError(f"{where}: {path} is not a folder")
            shutil.copytree(path, target, symlinks=True, dirs_exist_ok=True)
        elif kind == "tarball":
            _extract(path, target, where)
        else:
            _checkout(path, str(artifact.data.get("commit") or ""), target, f"{artifact.source}: field `data`")
    if artifact.data.get("git_init"):
        git_init(target)


def _write_files(files: Any, target: Path, where: str) -> None:
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise ArtifactError(f"{where}: must be an object of relative path → file content (text)")
    root = target.resolve()
    for name, content in files.items():
        path = (root / name).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ArtifactError(f"{where}: {name!r} leaves the workspace; use a relative path inside it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def _extract(path: Path, target: Path, where: str) -> None:
    try:
        with tarfile.open(path) as archive:
            archive.extractall(target, filter="data")  # no absolute paths, no `..`, no device files
    except (tarfile.TarError, OSError) as exc:
        raise ArtifactError(f"{where}: cannot extract {path}: {exc}") from None


def _checkout(repository: Path, commit: str, target: Path, where: str) -> None:
    if not commit:
        raise ArtifactError(f"{where}.commit: a git source needs the commit to check out (a full or short sha)")
    git = shutil.which("git")
    if git is None:
        raise ArtifactError(f"{where}.git: git is not installed; install it or use a folder or tarball source")
    for args in (
        ["clone", "--quiet", "--no-checkout", str(repository), str(target)],
        ["-C", str(target), "checkout", "--quiet", "--detach", commit],
    ):
        done = subprocess.run([git, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ArtifactError(f"{where}: git {args[0] if args[0] != '-C' else args[2]} failed: {done.stderr.strip()}")


def git_init(folder: Path) -> str:
    """Make `folder` a repository whose one commit holds its files; the commit id."""
    git = shutil.which("git")
    if git is None:
        raise ArtifactError("data.git_init: git is not installed; install it or drop `git_init`")
    env = {**os.environ, **GIT_IDENTITY}
    for args in (["init", "--quiet", "--initial-branch=main"], ["add", "-A"], ["commit", "--quiet", "-m", "initial"]):
        subprocess.run([git, "-C", str(folder), *args], check=True, capture_output=True, env=env)
    done = subprocess.run([git, "-C", str(folder), "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return done.stdout.strip()
