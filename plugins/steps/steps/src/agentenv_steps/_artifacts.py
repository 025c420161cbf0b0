"""Artifact specs as tasks write them, resolved to `Artifact`s with a small per-process cache.

A spec is one of:
- `NAME`            the artifact NAME of every env in the world that ships one;
- `ENV=NAME`        the artifact NAME packaged with ENV;
- `ENV=PATH`        an artifact file (relative paths are relative to the bundle or the task file);
- `store:KEY`       an artifact JSON in the object store (e.g. written by `snapshot_env`); its `env` field
                    says which env loads it;
- `ENV=store:KEY`   the same, for ENV explicitly;
- `step:ID[/NAME]`  the artifacts an earlier step produced (snapshot_env's, or stored files that are artifacts),
                    or the one named NAME; `ENV=step:…` loads them into ENV.

Reading and hashing an artifact is the slow part of deploying a world, so files are cached by
(path, mtime, size) and stored objects by the hash of their bytes.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.contracts import StepContext, StepFailed
from agentenv_runtime import Artifact, ArtifactError, Env

from agentenv_steps._produced import STEP_PREFIX, choose, fetch, produced, split_step_ref

STORE_PREFIX = "store:"
_CACHE_SIZE = 32
_files: OrderedDict[tuple[str, int, int], Artifact] = OrderedDict()
_objects: OrderedDict[str, Artifact] = OrderedDict()
_packaged: dict[type[Env], tuple[int, dict[str, Path]]] = {}


@dataclass(frozen=True)
class Spec:
    text: str
    env: str | None
    """The env named before `=`, or None."""
    value: str
    """NAME, PATH, the object key (without `store:`) or the step reference (without `step:`)."""
    stored: bool
    from_step: bool = False


def parse_spec(text: str) -> Spec:
    """Split a spec; a ValueError says what is malformed."""
    text = text.strip()
    if not text:
        raise ValueError("an artifact spec is empty; write NAME, ENV=NAME_OR_PATH or store:KEY")
    env: str | None = None
    rest = text
    if not text.startswith((STORE_PREFIX, STEP_PREFIX)):  # `store:a=b` is a key with '=' in it, not ENV=...
        before, sep, after = text.partition("=")
        if sep:
            env, rest = before.strip(), after.strip()
            if not env:
                raise ValueError(f"{text!r}: nothing before '='; write ENV=NAME_OR_PATH (e.g. slack=acme)")
    stored, from_step = rest.startswith(STORE_PREFIX), rest.startswith(STEP_PREFIX)
    value = rest[len(STORE_PREFIX if stored else STEP_PREFIX) :].strip() if stored or from_step else rest
    if not value:
        what = (
            "an object key after 'store:'"
            if stored
            else "a step id after 'step:'"
            if from_step
            else "an artifact name or path after '='"
        )
        raise ValueError(f"{text!r}: give {what}")
    return Spec(text, env, value, stored, from_step)


def parse_spec_or_none(text: str) -> Spec | None:
    try:
        return parse_spec(text)
    except ValueError:
        return None


def spec_problems(field: str, specs: list[str], envs: list[str] | None = None) -> list[tuple[str, str]]:
    """Preflight problems of a list of specs (`envs`: the world's envs when known)."""
    problems = []
    for index, text in enumerate(specs):
        try:
            spec = parse_spec(text)
        except ValueError as exc:
            problems.append((f"{field}[{index}]", str(exc)))
            continue
        if envs is not None and spec.env is not None and spec.env not in envs:
            problems.append(
                (
                    f"{field}[{index}]",
                    f"{text!r} names env {spec.env!r}, which this world does not deploy (envs: {', '.join(envs)})",
                )
            )
    return problems


def _remember(cache: OrderedDict[Any, Artifact], key: Any, artifact: Artifact) -> Artifact:
    cache[key] = artifact
    cache.move_to_end(key)
    while len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)
    return artifact


def packaged(cls: type[Env]) -> dict[str, Path]:
    """`cls.artifact_paths()`, listed again only when the artifact folder changes."""
    try:
        stamp = os.stat(cls.artifact_dir()).st_mtime_ns
    except OSError:
        return {}
    cached = _packaged.get(cls)
    if cached is None or cached[0] != stamp:
        cached = _packaged[cls] = (stamp, cls.artifact_paths())
    return cached[1]


def read_file(path: Path) -> Artifact:
    """An artifact file, parsed once per (path, mtime, size)."""
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read artifact ({exc.strerror})") from exc
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    found = _files.get(key)
    if found is not None:
        _files.move_to_end(key)
        return found
    return _remember(_files, key, Artifact.from_file(path))


def read_stored(objects: Any, key: str) -> Artifact:
    """An artifact JSON from the object store, parsed once per content."""
    try:
        raw = objects.get(key)
    except KeyError:
        raise StepFailed(
            f"no object {key!r} in the object store; write it first (a snapshot_env step "
            f"saves artifacts/<name>/<env>.json) or fix the key"
        ) from None
    return parse_stored(raw, key)


def parse_stored(raw: bytes, key: str) -> Artifact:
    digest = hashlib.sha256(raw).hexdigest()
    found = _objects.get(digest)
    if found is not None:
        _objects.move_to_end(digest)
        return found
    return _remember(_objects, digest, Artifact.from_bytes(raw, source=f"store:{key}"))


def resolve(spec_text: str, env_classes: Mapping[str, type[Env]], ctx: StepContext) -> list[tuple[str, Artifact]]:
    """(env name, artifact) pairs that `spec_text` loads into a world of `env_classes`; StepFailed otherwise."""
    try:
        spec = parse_spec(spec_text)
    except ValueError as exc:
        raise StepFailed(str(exc)) from None
    if spec.env is not None and spec.env not in env_classes:
        raise StepFailed(f"{spec.text!r}: the world has no env {spec.env!r} (envs: {', '.join(env_classes)})")
    try:
        if spec.stored or spec.from_step:
            if spec.stored:
                found = [read_stored(ctx.objects, spec.value)]
            else:
                step_id, name = split_step_ref(spec.value)
                items = choose(produced(ctx, step_id, "artifacts"), step_id, name, "artifacts")
                found = [parse_stored(fetch(ctx, item, "artifacts"), item.key) for item in items]
            pairs = []
            for artifact in found:
                target = spec.env or artifact.env
                if target not in env_classes:
                    raise StepFailed(
                        f"{spec.text!r}: the stored artifact is for env {artifact.env!r}, which this world "
                        f"does not have (envs: {', '.join(env_classes)})"
                    )
                pairs.append((target, artifact))
            return pairs
        if spec.env is not None:
            cls = env_classes[spec.env]
            shipped = packaged(cls)
            if spec.value in shipped:
                return [(spec.env, read_file(shipped[spec.value]))]
            path = ctx.resolve_path(spec.value)
            if not path.exists():
                raise StepFailed(
                    f"{spec.text!r}: {spec.env} ships no artifact {spec.value!r} "
                    f"(packaged: {', '.join(shipped) or 'none'}) and no file {path} exists"
                )
            return [(spec.env, read_file(path))]
        pairs = [
            (name, read_file(packaged(cls)[spec.value]))
            for name, cls in env_classes.items()
            if spec.value in packaged(cls)
        ]
    except ArtifactError as exc:
        raise StepFailed(f"{spec.text!r}: {exc}") from None
    if not pairs:
        listing = {name: sorted(packaged(cls)) for name, cls in env_classes.items()}
        raise StepFailed(
            f"{spec.text!r}: no env in the world ships an artifact {spec.value!r} (shipped: {listing}); "
            "use ENV=PATH for a file or store:KEY for a stored one"
        )
    return pairs


def resolve_all(specs: list[str], env_classes: Mapping[str, type[Env]], ctx: StepContext) -> list[tuple[str, Artifact]]:
    """Every spec resolved in order, each artifact checked against the task's pins."""
    pairs = [pair for text in specs for pair in resolve(text, env_classes, ctx)]
    for _, artifact in pairs:
        ctx.check_pin(artifact.env, artifact.name, artifact.sha256)
    return pairs
