"""Which files of a folder leave this machine: the one list that `bundle export` and `registry push` share.

A bundle folder is also a working folder: it may hold a `.env` with API keys, `.agentenv/secrets.toml`, a private
key, a Git checkout. None of that belongs in an export or in the registry, so both copy only `shipped_files`:
caches and version-control folders skipped, secret files left out, and a symlink that leads out of the folder
refused (following it would copy whatever it points at, `~/.ssh` included). Symlinks inside the folder are
shipped as the files they point at.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path, PurePosixPath

SKIPPED_PARTS = frozenset({"__pycache__", ".git", ".hg", ".svn", ".DS_Store", ".venv", ".mypy_cache", ".ruff_cache"})
"""Folder (or file) names never shipped: caches and version control."""
SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    ".netrc",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials.json",
    "service-account*.json",
)
"""File names (shell patterns) that hold secrets by convention."""
SECRET_PATHS = (".agentenv/secrets.toml", ".agentenv/secrets*", ".aws/*", ".ssh/*", ".docker/config.json")
"""Paths relative to the folder (shell patterns) that hold secrets."""
SHIPPABLE_EXAMPLES = frozenset({".env.example", ".env.sample", ".env.template"})
"""Templates that document a `.env` and carry no values by convention: shipped."""


class UnsafeFile(ValueError):
    """A file that cannot be shipped safely (a symlink out of the folder); the message names it and the fix."""


def is_secret(relative: PurePosixPath) -> bool:
    """Whether a path inside a folder names a secret file by the conventions above."""
    name = relative.name
    if name in SHIPPABLE_EXAMPLES:
        return False
    text = relative.as_posix()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAMES) or any(
        fnmatch.fnmatchcase(text, pattern) for pattern in SECRET_PATHS
    )


def shipped_files(root: Path) -> list[tuple[Path, PurePosixPath]]:
    """(file on disk, path inside the folder) for every file of `root` that may be shipped, sorted by path.

    Raises UnsafeFile for a symlink whose target lies outside `root` (or does not exist)."""
    root = root.resolve()
    found: list[tuple[Path, PurePosixPath]] = []
    for directory, folders, files in os.walk(root):
        here = Path(directory)
        kept = []
        for name in sorted(folders):
            path = here / name
            if name in SKIPPED_PARTS:
                continue
            if path.is_symlink():
                _inside(root, path)  # a link to a folder inside is already shipped where it points
                continue
            kept.append(name)
        folders[:] = kept
        for name in files:
            path = here / name
            relative = PurePosixPath(path.relative_to(root).as_posix())
            if name in SKIPPED_PARTS or is_secret(relative) or name.endswith(".pyc"):
                continue
            if path.is_symlink():
                _inside(root, path)
            found.append((path, relative))
    return sorted(found, key=lambda pair: pair[1])


def archive_mode(path: Path) -> int:
    """The mode an archive records for `path`: 0o755/0o644 (reproducible across umasks), except that a file
    others may not read keeps that restriction (0o700/0o600)."""
    mode = path.stat().st_mode
    executable = bool(mode & stat.S_IXUSR)
    private = not mode & (stat.S_IRGRP | stat.S_IROTH)
    if private:
        return 0o700 if executable else 0o600
    return 0o755 if executable else 0o644


def _inside(root: Path, link: Path) -> None:
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        raise UnsafeFile(f"{link}: a symlink to a missing target ({os.readlink(link)}); remove it or point it at a "
                         "file inside the folder") from None
    if target != root and root not in target.parents:
        raise UnsafeFile(
            f"{link}: a symlink out of the folder (to {target}); refusing to ship what it points at. "
            "Copy the file into the folder or remove the link"
        )
