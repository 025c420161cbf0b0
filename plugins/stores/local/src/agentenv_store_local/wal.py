"""Damage in a SQLite write-ahead log, found before SQLite hides it.

When SQLite opens a database it replays the `-wal` file only up to the first frame whose salt or checksum
does not match, and silently drops the rest, or the whole log if its header is bad. The store keeps its
records in that log until a checkpoint, so a damaged log would make `runs list` show fewer runs, or none,
with exit 0. This module tells the two cases SQLite treats alike apart:

- a *torn tail*, the normal result of a crash: the last frames of the log are incomplete, nothing
  after them belongs to the current log. SQLite's recovery is right to drop them;
- *damage*: the header is invalid, or a frame of the current log fails while a later frame still carries
  the current log's salts. Those later frames were committed, and dropping them loses records.

The format is SQLite's documented one (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header
and frames of a 24-byte header plus one page, each checked by a running checksum.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HEADER_SIZE = 32
FRAME_HEADER_SIZE = 24
MAGIC_LITTLE_ENDIAN = 0x377F0682
MAGIC_BIG_ENDIAN = 0x377F0683
FORMAT_VERSION = 3007000
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class WalDamage:
    """Where a log is damaged and how much of it SQLite would drop."""

    offset: int
    reason: str
    frames_dropped: int


def wal_damage(database: Path) -> WalDamage | None:
    """The damage in `database`'s `-wal` file, or None if it is absent, empty, sound or only torn at its tail."""
    wal = database.with_name(database.name + "-wal")
    try:
        with wal.open("rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except PermissionError:
        return None  # SQLite cannot replay a log this user may not read either; it reports that itself
    if len(data) < HEADER_SIZE:
        return None  # a log whose header was never completely written holds no committed frame
    return _check(data)


def _check(data: bytes) -> WalDamage | None:
    magic, version, page_size, _sequence, salt1, salt2, sum1, sum2 = struct.unpack(">8I", data[:HEADER_SIZE])
    if magic not in (MAGIC_LITTLE_ENDIAN, MAGIC_BIG_ENDIAN):
        return WalDamage(0, f"the header's magic number is {magic:#010x}", _frame_count(data, 0))
    big_endian = magic == MAGIC_BIG_ENDIAN
    if version != FORMAT_VERSION or not _valid_page_size(page_size):
        return WalDamage(0, "the header's version or page size is invalid", _frame_count(data, 0))
    if _checksum(data[:24], (0, 0), big_endian) != (sum1, sum2):
        return WalDamage(0, "the header's checksum does not match", _frame_count(data, page_size))
    running = (sum1, sum2)
    frame_size = FRAME_HEADER_SIZE + page_size
    for index, offset in enumerate(_frame_offsets(data, frame_size)):
        frame = data[offset : offset + frame_size]
        frame_salts = struct.unpack(">2I", frame[8:16])
        if frame_salts == (salt1, salt2):
            expected = struct.unpack(">2I", frame[16:24])
            running = _checksum(frame[FRAME_HEADER_SIZE:], _checksum(frame[:8], running, big_endian), big_endian)
            if running == expected:
                continue
        later = _later_current_frames(data, offset + frame_size, frame_size, (salt1, salt2))
        if later:
            return WalDamage(offset, f"frame {index + 1} fails its check", later + 1)
        return None  # a torn tail, or frames of an earlier log: what SQLite's recovery is for
    return None


def _later_current_frames(data: bytes, start: int, frame_size: int, salts: tuple[int, int]) -> int:
    """How many whole frames after `start` carry the current log's salts (committed after the damage)."""
    offsets = _frame_offsets(data, frame_size, start)
    return sum(1 for offset in offsets if struct.unpack(">2I", data[offset + 8 : offset + 16]) == salts)


def _frame_offsets(data: bytes, frame_size: int, start: int = HEADER_SIZE) -> Iterator[int]:
    """Offsets of the whole frames from `start` on (a partial last frame is a torn write, not a frame)."""
    return iter(range(start, len(data) - frame_size + 1, frame_size))


def _frame_count(data: bytes, page_size: int) -> int:
    if not _valid_page_size(page_size):
        return 0
    return max(0, (len(data) - HEADER_SIZE) // (FRAME_HEADER_SIZE + page_size))


def _valid_page_size(size: int) -> bool:
    return 512 <= size <= 65536 and size & (size - 1) == 0


def _checksum(data: bytes, seed: tuple[int, int], big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum: pairs of 32-bit words in the byte order the magic number names."""
    s1, s2 = seed
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    for first, second in zip(words[0::2], words[1::2], strict=True):
        s1 = (s1 + first + s2) & _MASK
        s2 = (s2 + second + s1) & _MASK
    return s1, s2
