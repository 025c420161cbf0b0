"""Unified diffs: parsed, checked against the files, then applied all at once.

Every hunk of every file is located before anything is written, so a patch that does not fit changes nothing
and the error names the file, the hunk (`#2 @@ -10,4 +10,5 @@`) and the first line that did not match. A hunk
may sit a few lines away from where its header says (the file moved since the diff was made); it is then
found by searching outwards from the stated line, as `patch` does without fuzz.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEV_NULL = "/dev/null"


class PatchError(ValueError):
    """A diff that cannot be parsed or does not apply; the message names the file and hunk."""


@dataclass
class Hunk:
    header: str
    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _strip(name: str) -> str | None:
    name = name.split("\t")[0].strip()
    if name == DEV_NULL:
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def parse(diff: str) -> list[FilePatch]:
    """The file patches of a unified diff (git's `diff --git` headers are accepted and skipped)."""
    files: list[FilePatch] = []
    lines = diff.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            files.append(FilePatch(_strip(line[4:]), _strip(lines[index + 1][4:])))
            index += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not files:
                raise PatchError(f"line {index + 1}: hunk {line!r} comes before any `--- a/FILE` / `+++ b/FILE` header")
            hunk, index = _read_hunk(lines, index, match, files[-1])
            files[-1].hunks.append(hunk)
            continue
        index += 1
    if not files:
        raise PatchError("no file headers found; give a unified diff (`--- a/FILE`, `+++ b/FILE`, `@@ … @@` hunks)")
    for patch in files:
        if not patch.hunks and patch.new_path is not None:
            raise PatchError(f"{patch.path}: the diff has headers but no hunks for it")
    return files


def _read_hunk(lines: list[str], index: int, match: re.Match[str], patch: FilePatch) -> tuple[Hunk, int]:
    header = lines[index]
    old_count = int(match.group(2) or 1)
    new_count = int(match.group(4) or 1)
    hunk = Hunk(header, int(match.group(1)))
    index += 1
    while index < len(lines) and (len(hunk.old) < old_count or len(hunk.new) < new_count):
        line = lines[index]
        if line.startswith("\\"):  # "\ No newline at end of file"
            index += 1
            continue
        tag, text = (line[:1], line[1:]) if line else (" ", "")
        if tag == " ":
            hunk.old.append(text)
            hunk.new.append(text)
        elif tag == "-":
            hunk.old.append(text)
        elif tag == "+":
            hunk.new.append(text)
        else:
            break
        index += 1
    if len(hunk.old) != old_count or len(hunk.new) != new_count:
        raise PatchError(
            f"{patch.path}: hunk {header!r} promises {old_count} old and {new_count} new lines but has "
            f"{len(hunk.old)} and {len(hunk.new)}; the diff is cut or was edited by hand"
        )
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    return hunk, index


def apply(patch: FilePatch, original: str | None) -> str | None:
    """The file's new text (None: the patch deletes it); PatchError naming the hunk that does not fit."""
    if patch.new_path is None:
        return None
    if original is None:
        if patch.old_path is not None:
            raise PatchError(f"{patch.path}: the file does not exist; the diff expects to change it")
        original = ""
    lines = original.splitlines()
    trailing_newline = original.endswith("\n") or not original
    offset = 0
    result: list[str] = []
    cursor = 0
    for number, hunk in enumerate(patch.hunks, start=1):
        wanted = max(hunk.old_start - 1 + offset, 0) if hunk.old else hunk.old_start + offset
        where = _locate(lines, hunk.old, wanted, cursor)
        if where is None:
            raise PatchError(
                f"{patch.path}: hunk #{number} {hunk.header} does not apply: {_mismatch(lines, hunk, wanted)}"
            )
        result.extend(lines[cursor:where])
        result.extend(hunk.new)
        cursor = where + len(hunk.old)
        offset = where - (hunk.old_start - 1) if hunk.old else offset
    result.extend(lines[cursor:])
    text = "\n".join(result)
    return text + "\n" if result and trailing_newline else text


def _locate(lines: list[str], old: list[str], wanted: int, floor: int) -> int | None:
    """The index nearest `wanted` (not before `floor`) where `old` matches."""
    if not old:
        return min(max(wanted, floor), len(lines))
    for distance in range(len(lines) + 1):
        for candidate in (wanted - distance, wanted + distance) if distance else (wanted,):
            if floor <= candidate <= len(lines) - len(old) and lines[candidate : candidate + len(old)] == old:
                return candidate
    return None


def _mismatch(lines: list[str], hunk: Hunk, wanted: int) -> str:
    for step, expected in enumerate(hunk.old):
        line_no = wanted + step
        actual = lines[line_no] if line_no < len(lines) else None
        if actual != expected:
            found = "the file ends" if actual is None else f"found {actual!r}"
            return f"line {line_no + 1} should be {expected!r} but {found} (and no nearby place matches)"
    return "its context matches nowhere in the file"
