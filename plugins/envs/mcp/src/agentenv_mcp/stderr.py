"""A bounded sink for a stdio server's stderr: a server that floods it fills neither memory nor the disk, and the
last lines it wrote are at hand for the error that says why it failed."""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import TextIO

TAIL_BYTES = 16_384
CHUNK = 65_536


class StderrTail:
    """A pipe whose write end goes to the server as its stderr; a thread keeps the last `TAIL_BYTES` read."""

    def __init__(self, name: str, limit: int = TAIL_BYTES) -> None:
        read_fd, write_fd = os.pipe()
        self._read = os.fdopen(read_fd, "rb", buffering=0)
        self.sink: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit
        self.total = 0
        """Bytes the server wrote in all, kept or not."""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name=f"agentenv-mcp-stderr-{name}", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while chunk := self._read.read(CHUNK):
            with self._lock:
                self.total += len(chunk)
                self._chunks.append(chunk)
                self._size += len(chunk)
                while self._size - len(self._chunks[0]) >= self._limit:
                    self._size -= len(self._chunks.popleft())
        self._read.close()

    def text(self, lines: int = 20) -> str:
        """The last `lines` lines the server wrote to stderr."""
        with self._lock:
            data = b"".join(self._chunks)[-self._limit :]
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])

    def close(self) -> None:
        """Close our copy of the write end; the thread ends once the server's copy closes too (it exited)."""
        self.sink.close()
