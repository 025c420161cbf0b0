"""Stand-in for the in-sandbox `modal-sandbox-fs-tools` binary that the SDK's `sandbox.filesystem` execs.

Run as `python fs_tools.py <sandbox root> <json command>`. The SDK sends one JSON object naming the operation
(`{"ReadFile": {"path": ...}}`, `{"WriteFile": {"path": ...}}`, ...); file contents go through stdout/stdin and
errors are reported as a JSON object `{"error_kind", "message"}` on stderr with a non-zero exit code, which is
what the SDK's error translation parses. Absolute sandbox paths map into the sandbox's root folder.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path, PurePosixPath


def _fail(kind: str, message: str) -> None:
    sys.stderr.write(json.dumps({"error_kind": kind, "message": message}))
    sys.exit(1)


def _host_path(root: Path, path: str) -> Path:
    parts = [p for p in PurePosixPath(path).parts if p != "/"]
    if ".." in parts:
        _fail("PermissionDenied", "path leaves the sandbox")
    return root.joinpath(*parts)


def main() -> None:
    root = Path(sys.argv[1])
    command = json.loads(sys.argv[2])
    ((operation, args),) = command.items()
    target = _host_path(root, args["path"])
    if operation == "ReadFile":
        if not target.exists():
            _fail("NotFound", "No such file or directory")
        if target.is_dir():
            _fail("IsDirectory", "Is a directory")
        sys.stdout.buffer.write(target.read_bytes())
    elif operation == "WriteFile":
        if target.is_dir():
            _fail("IsDirectory", "Is a directory")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            _fail("NotDirectory", "Not a directory")
        with target.open("wb") as sink:
            shutil.copyfileobj(sys.stdin.buffer, sink)
    elif operation == "MakeDirectory":
        target.mkdir(parents=bool(args.get("create_parents", True)), exist_ok=True)
    elif operation == "Remove":
        if not target.exists():
            _fail("NotFound", "No such file or directory")
        if target.is_dir():
            shutil.rmtree(target) if args.get("recursive") else target.rmdir()
        else:
            target.unlink()
    else:
        _fail("NotSupported", f"the stand-in does not implement {operation}")


if __name__ == "__main__":
    main()
