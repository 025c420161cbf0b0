"""A wheel of an installed distribution, made from its installed files.

World images install agentenv and its plugins into the container from wheels. A workspace (editable) install
has its source folder, so a fresh wheel is built from it; a regular install from wheels has no source folder,
but it has everything a wheel holds: the files its `RECORD` lists and its `.dist-info` folder. Packing those
again gives a wheel of exactly the installed version, with no index and no network.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import zipfile
from pathlib import Path

SKIPPED_METADATA = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
"""Files an installer adds to `.dist-info`; a wheel does not carry them."""


class RepackError(RuntimeError):
    """The installed distribution cannot be packed again (a file of its RECORD is missing, or it is not pure)."""


def repack_installed(dist: str | importlib.metadata.Distribution, out_dir: Path) -> Path:
    """Write `<name>-<version>-<tag>.whl` of installed `dist` into `out_dir` and return its path."""
    found = importlib.metadata.distribution(dist) if isinstance(dist, str) else dist
    dist = found.metadata["Name"]
    files = [f for f in (found.files or []) if _belongs_in_wheel(f)]
    info_dir = next((f.parts[0] for f in files if f.parts[0].endswith(".dist-info")), None)
    if info_dir is None:
        raise RepackError(f"{dist}: no .dist-info folder in its RECORD; reinstall it from a wheel")
    wheel_meta = found.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    if not tags or any(not tag.endswith("-any") for tag in tags):
        raise RepackError(f"{dist}: only pure-Python distributions can be packed again (tags {tags or 'unknown'})")
    name = info_dir.removesuffix(".dist-info")  # already `<escaped name>-<version>`
    target = out_dir / f"{name}-{tags[0]}.whl"
    rows: list[tuple[str, str, str]] = []
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for file in files:
            path = Path(str(file.locate()))
            if not path.is_file():
                raise RepackError(f"{dist}: {file} is listed in its RECORD but missing; reinstall {dist}")
            data = path.read_bytes()
            wheel.writestr(str(file), data)
            rows.append((str(file), record_hash(data), str(len(data))))
        record_name = f"{info_dir}/RECORD"
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows([*rows, (record_name, "", "")])
        wheel.writestr(record_name, buffer.getvalue())
    return target


def _belongs_in_wheel(file: importlib.metadata.PackagePath) -> bool:
    parts = file.parts
    if not parts or parts[0] == ".." or "__pycache__" in parts or file.suffix == ".pyc":
        return False  # console scripts (outside site-packages) and bytecode are made by the installer
    return not (parts[0].endswith(".dist-info") and parts[-1] in SKIPPED_METADATA)


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"
