"""The `sqlite` document store on damaged or read-only files: it says so instead of showing fewer records."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from agentenv_store_local._files import StoreFileError
from agentenv_store_local.document import SqliteDocumentStore
from agentenv_store_local.wal import FRAME_HEADER_SIZE, HEADER_SIZE

RECORDS = 5


def crashed_copy(tmp_path: Path) -> Path:
    """A database as a crashed writer leaves it: five records in the write-ahead log, never checkpointed
    (copied while the writer's connection is still open)."""
    live = tmp_path / "live" / "records.sqlite3"
    store = SqliteDocumentStore({"path": str(live)})
    for n in range(RECORDS):
        store.put("runs", f"r{n}", {"n": n, "text": "x" * 300})
    copy = tmp_path / "crashed" / "records.sqlite3"
    copy.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(f"{live}{suffix}", f"{copy}{suffix}")
    store.close()
    assert (copy.parent / "records.sqlite3-wal").stat().st_size > HEADER_SIZE
    return copy


def page_size(wal: Path) -> int:
    return int.from_bytes(wal.read_bytes()[8:12], "big")


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_crashed_writers_log_is_replayed(tmp_path: Path) -> None:
    copy = crashed_copy(tmp_path)
    assert len(SqliteDocumentStore({"path": str(copy)}).query("runs")) == RECORDS


@pytest.mark.parametrize("where", ["first frame's page", "header"])
def test_a_damaged_log_is_refused_and_left_as_it_was(tmp_path: Path, where: str) -> None:
    copy = crashed_copy(tmp_path)
    wal = copy.with_name("records.sqlite3-wal")
    flip(wal, HEADER_SIZE + FRAME_HEADER_SIZE + 100 if where.startswith("first") else 20)
    damaged = wal.read_bytes()
    with pytest.raises(StoreFileError) as refused:
        SqliteDocumentStore({"path": str(copy)})
    message = str(refused.value)
    assert "write-ahead log" in message and "damaged" in message and "move records.sqlite3-wal aside" in message
    assert wal.read_bytes() == damaged  # SQLite never opened it, so the next write did not overwrite the frames


def test_a_torn_last_frame_is_what_recovery_is_for(tmp_path: Path) -> None:
    """A write cut off by a power loss leaves an incomplete last frame: not damage, the records before it are read."""
    copy = crashed_copy(tmp_path)
    wal = copy.with_name("records.sqlite3-wal")
    data = wal.read_bytes()
    wal.write_bytes(data[: len(data) - page_size(wal) // 2])
    store = SqliteDocumentStore({"path": str(copy)})
    assert len(store.query("runs")) < RECORDS  # the last transaction is gone, as SQLite's recovery decides


def test_a_damaged_last_frame_is_a_torn_tail_too(tmp_path: Path) -> None:
    copy = crashed_copy(tmp_path)
    wal = copy.with_name("records.sqlite3-wal")
    frame = FRAME_HEADER_SIZE + page_size(wal)
    frames = (wal.stat().st_size - HEADER_SIZE) // frame
    flip(wal, HEADER_SIZE + (frames - 1) * frame + FRAME_HEADER_SIZE + 7)
    SqliteDocumentStore({"path": str(copy)}).query("runs")


def test_a_closed_store_leaves_no_log_behind(tmp_path: Path) -> None:
    path = tmp_path / "records.sqlite3"
    script = textwrap.dedent(
        f"""
        from agentenv_store_local.document import SqliteDocumentStore
        SqliteDocumentStore({{"path": {str(path)!r}}}).put("runs", "a", {{"n": 1}})
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    assert not path.with_name("records.sqlite3-wal").exists()


needs_another_user = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="reading as a user without write access needs root and util-linux's setpriv",
)


@needs_another_user
def test_a_store_this_user_cannot_write_is_read() -> None:
    tmp_path = Path(tempfile.mkdtemp(prefix="agentenv-read-only-"))  # pytest's own folders are private to root
    os.chmod(tmp_path, 0o755)
    copy = crashed_copy(tmp_path)  # a log to replay, in files owned by root
    for item in (copy.parent, *copy.parent.iterdir()):
        os.chmod(item, 0o755 if item.is_dir() else 0o644)
    script = textwrap.dedent(
        f"""
        from agentenv_store_local.document import SqliteDocumentStore
        from agentenv_store_local._files import StoreFileError
        store = SqliteDocumentStore({{"path": {str(copy)!r}}})
        print(len(store.query("runs")), store.read_only)
        try:
            store.put("runs", "new", {{"n": 9}})
        except StoreFileError as exc:
            print("refused:", exc)
        """
    )
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    shutil.rmtree(tmp_path)
    assert done.returncode == 0, done.stderr
    first, refusal = done.stdout.splitlines()[:2]
    assert first == f"{RECORDS} True"
    assert "read-only here" in refusal and "write access" in refusal
