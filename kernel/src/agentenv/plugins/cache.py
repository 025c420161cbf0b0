"""Remember what plugin discovery found until something is installed or removed.

Reading every distribution's metadata costs tens of milliseconds per start (a tenth of `agentenv run hello`),
and it only changes when installers create or delete `*.dist-info` folders: so the cache is keyed by every
`sys.path` entry and every metadata folder on them with its modification time (other files coming and going,
like the working folder's under `python -m agentenv`, do not count). It lives in `$AGENTENV_CACHE_DIR` (default
`$XDG_CACHE_HOME/agentenv`, else `~/.cache/agentenv`), one JSON file per environment; `AGENTENV_NO_CACHE=1`
turns it off; a cache that cannot be read or written is ignored. Plain `os.path` rather than `pathlib`, which
(with the `urllib` and `ipaddress` it imports) would be a tenth of `agentenv --help`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

CACHE_DIR_VAR = "AGENTENV_CACHE_DIR"
NO_CACHE_VAR = "AGENTENV_NO_CACHE"
KEPT = 8
"""Fingerprints kept per environment (the oldest is dropped)."""
FORMAT = 4
"""Bump when what is cached changes (its shape or its verdicts), so older files are ignored."""
_FINGERPRINTS: dict[tuple[tuple[str, int], ...], str] = {}
"""This process's fingerprints, by the import path and the modification time of each of its folders."""


def cache_dir(environ: Mapping[str, str]) -> str | None:
    """Where cache files go; None when there is no absolute place (no home folder: then nothing is cached)."""
    if environ.get(CACHE_DIR_VAR):
        return environ[CACHE_DIR_VAR]
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "agentenv") if os.path.isabs(base) else None


def fingerprint(paths: list[str]) -> str:
    """A digest of the import path and of every distribution's metadata folder on it. A process works it out
    again only when a folder on the path changed (installing or removing a distribution changes its folder)."""
    key = tuple((entry, _mtime(entry or ".")) for entry in paths)
    if key not in _FINGERPRINTS:
        digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{sys.prefix}".encode())
        for entry, mtime in key:
            try:
                names = sorted(os.listdir(entry or "."))
                digest.update(f"\0{entry}".encode())
            except OSError:  # a zip file (its modification time stands for its contents) or nothing at all
                names = []
                digest.update(f"\0{entry}\0{mtime}".encode())
            for name in names:
                if name.endswith((".dist-info", ".egg-info")):
                    digest.update(f"\0{name}\0{_mtime(os.path.join(entry or '.', name))}".encode())
        _FINGERPRINTS[key] = digest.hexdigest()
    return _FINGERPRINTS[key]


def _mtime(path: str) -> int:
    with contextlib.suppress(OSError):
        return os.stat(path).st_mtime_ns
    return -1


def cached(name: str, compute: Callable[[], Any], environ: Mapping[str, str], extra: str = "") -> Any:
    """`compute()` (JSON-serialisable), or what it returned earlier for the same fingerprint (and `extra`,
    whatever else the answer depends on). An exception from `compute` propagates and nothing is stored.

    A few fingerprints are kept per environment: the import path differs between `agentenv` (its script
    folder first) and `python -m agentenv` (the working folder first), and both should hit.
    """
    folder = cache_dir(environ)
    if folder is None or environ.get(NO_CACHE_VAR, "") not in ("", "0"):
        return compute()
    key = fingerprint(list(sys.path))
    if extra:
        key += "-" + hashlib.sha256(extra.encode()).hexdigest()[:16]
    env_id = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    path = os.path.join(folder, f"{name}-{env_id}.json")
    entries: Any = {}
    with contextlib.suppress(OSError, ValueError), open(path, encoding="utf-8") as cache_file:
        entries = json.load(cache_file)
    entries = entries if isinstance(entries, dict) else {}
    if key in entries:
        return entries[key]
    value = compute()
    entries = {**dict(list(entries.items())[-(KEPT - 1) :]), key: value}
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as cache_file:
            json.dump(entries, cache_file)
        os.replace(partial, path)  # atomic: concurrent starts never read half a file
    return value
