"""Remember what plugin discovery found until something is installed or removed.

Reading every distribution's metadata costs tens of milliseconds per start (a tenth of `agentenv run hello`),
and it only changes when installers create or delete `*.dist-info` folders: so the cache is keyed by every
`sys.path` entry and every metadata folder on them with its modification time (other files coming and going,
like the working folder's under `python -m agentenv`, do not count). It lives in `$AGENTENV_CACHE_DIR` (default
`$XDG_CACHE_HOME/agentenv`, else `~/.cache/agentenv`), one JSON file per environment; `AGENTENV_NO_CACHE=1`
turns it off; a cache that cannot be read or written is ignored. Plain `os.path` rather than `pathlib`, which
(with the `urllib` and `ipaddress` it imports) would be a tenth of `agentenv --help`.

The root help is the one answer that also depends on plugin code (the commands its hooks return): `cached_text`
keeps it with the file of every module loaded while it was made, and uses it only while none changed. Its plain
text format needs neither `json` nor `hashlib`, so a cached `agentenv --help` imports almost nothing.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` and `json` are a third of what `agentenv --help` imports: the text cache needs neither
    from collections.abc import Callable, Mapping
    from typing import Any

CACHE_DIR_VAR = "AGENTENV_CACHE_DIR"
NO_CACHE_VAR = "AGENTENV_NO_CACHE"
KEPT = 8
"""Fingerprints kept per environment (the oldest is dropped)."""
FORMAT = 4
"""Bump when what is cached changes (its shape or its verdicts), so older files are ignored."""
_INSTALLS: dict[tuple[tuple[str, int], ...], str] = {}
"""This process's descriptions of what is installed, by the import path and the modification time of its folders."""
_DIGESTS: dict[str, str] = {}
"""Their digests (the same description object each time: its hash is computed once)."""


def cache_dir(environ: Mapping[str, str]) -> str | None:
    """Where cache files go; None when there is no absolute place (no home folder: then nothing is cached)."""
    if environ.get(CACHE_DIR_VAR):
        return environ[CACHE_DIR_VAR]
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "agentenv") if os.path.isabs(base) else None


def installs(paths: list[str]) -> str:
    """What is installed, as text: the import path and every distribution's metadata folder on it with its
    modification time. A process works it out again only when a folder on the path changed (installing or removing
    a distribution changes its folder)."""
    key = tuple((entry, _mtime(entry or ".")) for entry in paths)
    if key not in _INSTALLS:
        parts = [f"{FORMAT}\0{sys.version}\0{sys.prefix}"]
        for entry, mtime in key:
            try:
                names = sorted(os.listdir(entry or "."))
                parts.append(f"\0{entry}")
            except OSError:  # a zip file (its modification time stands for its contents) or nothing at all
                names = []
                parts.append(f"\0{entry}\0{mtime}")
            for name in names:
                if name.endswith((".dist-info", ".egg-info")):
                    parts.append(f"\0{name}\0{_mtime(os.path.join(entry or '.', name))}")
        _INSTALLS[key] = "".join(parts)
    return _INSTALLS[key]


def fingerprint(paths: list[str]) -> str:
    """A digest of `installs(paths)`, worked out once per process for each."""
    described = installs(paths)
    if described not in _DIGESTS:
        import hashlib

        _DIGESTS[described] = hashlib.sha256(described.encode()).hexdigest()
    return _DIGESTS[described]


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def cached(name: str, compute: Callable[[], Any], environ: Mapping[str, str], extra: str = "") -> Any:
    """`compute()` (JSON-serialisable), or what it returned earlier for the same fingerprint (and `extra`,
    whatever else the answer depends on). An exception from `compute` propagates and nothing is stored.

    A few fingerprints are kept per environment: the import path differs between `agentenv` (its script
    folder first) and `python -m agentenv` (the working folder first), and both should hit.
    """
    import hashlib
    import json

    path = _cache_file(environ, f"{name}-{hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]}.json")
    if path is None:
        return compute()
    key = fingerprint(list(sys.path))
    if extra:
        key += "-" + hashlib.sha256(extra.encode()).hexdigest()[:16]
    entries: Any = {}
    try:
        with open(path, encoding="utf-8") as cache_file:
            entries = json.load(cache_file)
    except (OSError, ValueError):
        pass
    entries = entries if isinstance(entries, dict) else {}
    if key in entries:
        return entries[key]
    value = compute()
    _write(path, json.dumps({**dict(list(entries.items())[-(KEPT - 1) :]), key: value}))
    return value


def cached_text(name: str, compute: Callable[[], str], environ: Mapping[str, str], extra: str = "") -> str:
    """`compute()`, or the text it gave earlier with the same things installed, the same `extra`, and every
    module file loaded when it ran (`sys.modules`) unchanged since: an edited plugin, or one added to an editable
    install, is noticed at once. Plain text (no `json`, no `hashlib`), for the one answer `agentenv --help` needs;
    `cached` is for the rest. Like it, it keeps a few entries per environment."""
    import zlib

    path = _cache_file(environ, f"{name}-{zlib.crc32(sys.prefix.encode()):08x}.txt")  # a clash only misses
    if path is None:
        return compute()
    key = f"{installs(list(sys.path))}\0{extra}"
    try:
        with open(path, encoding="utf-8") as cache_file:
            entries = [entry.split(_FIELD, 2) for entry in cache_file.read().split(_ENTRY) if entry]
    except (OSError, ValueError):  # no cache yet, or not UTF-8
        entries = []
    entries = [entry for entry in entries if len(entry) == 3]
    for stored_key, sources, text in entries:
        if stored_key == key and _unchanged(sources):
            return text
    entries = [entry for entry in entries if entry[0] != key]
    text = compute()
    files = sorted({f for module in list(sys.modules.values()) if isinstance(f := getattr(module, "__file__", 0), str)})
    mine = [key, "".join(f"{_stamp(file)} {file}\n" for file in files), text]
    _write(path, "".join(_ENTRY + _FIELD.join(entry) for entry in [*entries[-(KEPT - 1) :], mine]))
    return text


_ENTRY, _FIELD = "\x1e\n", "\x1f\n"
"""What separates the entries of a text cache, and the fields of an entry (key, module files, text)."""


def _unchanged(sources: str) -> bool:
    try:
        return all(_stamp(file) == stamp for stamp, file in (line.split(" ", 1) for line in sources.splitlines()))
    except ValueError:  # not a line this code wrote
        return False


def _stamp(path: str) -> str:
    """A file's modification time and size: the size catches a rewrite within the clock tick of the last one."""
    try:
        found = os.stat(path)
    except OSError:
        return "-"
    return f"{found.st_mtime_ns}:{found.st_size}"


def _cache_file(environ: Mapping[str, str], name: str) -> str | None:
    """Where the cache file `name` goes; None when nothing is cached (no place for it, or `AGENTENV_NO_CACHE`)."""
    folder = cache_dir(environ)
    if folder is None or environ.get(NO_CACHE_VAR, "") not in ("", "0"):
        return None
    return os.path.join(folder, name)


def _write(path: str, text: str) -> None:
    """Replace the file at `path` with `text` atomically (concurrent starts never read half a file); a cache
    that cannot be written is no cache."""
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(partial, "w", encoding="utf-8") as cache_file:
            cache_file.write(text)
        os.replace(partial, path)
    except OSError:
        pass
