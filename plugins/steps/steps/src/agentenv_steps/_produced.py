"""What earlier steps left in the object store, and bundle files, as the bytes a later step writes somewhere.

`step:ID` in an artifact spec means "what step ID produced": the env artifacts of a snapshot_env (or of a
load_artifact that saved a snapshot), the files collect_artifacts copied out of a sandbox, the files an agent
wrote in prompt_agent, the state snapshot_agent_state saved, the client build_mcp_cli generated. Each comes with
the name it is written under in a sandbox (`<env>.json`, the collected path, the file name) and, where the step
recorded it, the content hash: an object that changed since (another run reused the key) is refused.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass

from agentenv.contracts import StepContext, StepFailed

STEP_PREFIX = "step:"
PRODUCERS = (
    "snapshot_env, load_artifact with snapshot_after_load, collect_artifacts, prompt_agent, snapshot_agent_state "
    "or build_mcp_cli"
)


@dataclass(frozen=True)
class Produced:
    name: str
    """Where it goes under a target folder (relative, `/`-separated)."""
    key: str
    """Its object-store key."""
    sha256: str | None


def produced(ctx: StepContext, step_id: str, field: str) -> list[Produced]:
    """Every object step `step_id` stored, in the order its output lists them; StepFailed when there is none."""
    output = ctx.outputs.get(step_id)
    if not isinstance(output, dict):
        raise StepFailed(
            f"field `{field}`: step {step_id!r} has not run before this one (or failed); add it to `depends_on`"
        )
    found: dict[str, Produced] = {}
    for source in (output, output.get("snapshot")):
        artifacts = source.get("artifacts") if isinstance(source, dict) else None
        if isinstance(artifacts, dict):  # snapshot_env: env → {key, sha256, ref}
            for env, ref in artifacts.items():
                if isinstance(ref, dict) and isinstance(ref.get("key"), str):
                    found[f"{env}.json"] = Produced(f"{env}.json", ref["key"], ref.get("sha256"))
    files = output.get("files")
    if isinstance(files, dict):  # collect_artifacts: path → {key, sha256}; prompt_agent: name → key
        for name, ref in files.items():
            key = ref if isinstance(ref, str) else ref.get("key") if isinstance(ref, dict) else None
            if isinstance(key, str):
                digest = ref.get("sha256") if isinstance(ref, dict) else None
                clean = posixpath.normpath(str(name)).lstrip("/")
                found[clean] = Produced(clean, key, digest)
    if isinstance(output.get("key"), str):  # snapshot_agent_state, build_mcp_cli: one object
        key = output["key"]
        found[posixpath.basename(key)] = Produced(posixpath.basename(key), key, output.get("sha256"))
    if not found:
        raise StepFailed(
            f"field `{field}`: step {step_id!r} stored no artifact or file in the object store; name a step that "
            f"does ({PRODUCERS})"
        )
    return list(found.values())


def choose(items: list[Produced], step_id: str, name: str | None, field: str) -> list[Produced]:
    """All of them, or the one named (`step:ID/NAME`)."""
    if name is None:
        return items
    chosen = [item for item in items if item.name == name]
    if not chosen:
        listing = ", ".join(item.name for item in items)
        raise StepFailed(f"field `{field}`: step {step_id!r} produced no {name!r} (it produced: {listing})")
    return chosen


def fetch(ctx: StepContext, item: Produced, field: str) -> bytes:
    """The object's bytes, checked against the hash its step recorded."""
    try:
        data = bytes(ctx.objects.get(item.key))
    except KeyError:
        raise StepFailed(f"field `{field}`: object {item.key!r} is gone from the object store") from None
    if item.sha256 and hashlib.sha256(data).hexdigest() != item.sha256:
        raise StepFailed(
            f"field `{field}`: object {item.key!r} changed since its step stored it (another run wrote the same "
            "key); give that step a unique name"
        )
    return data


def split_step_ref(value: str) -> tuple[str, str | None]:
    """`ID` or `ID/NAME` (after `step:`) → (step id, name or None)."""
    step_id, _, name = value.partition("/")
    return step_id, name or None


def file_contents(target: str, value: str, ctx: StepContext, field: str | None = None) -> list[tuple[str, bytes]]:
    """(path, bytes) for one file entry: literal text, or `file:REL` for a file or a whole folder of the bundle
    (a folder's files go under `target/`)."""
    if not value.startswith("file:"):
        return [(target, value.encode())]
    source = ctx.resolve_path(value.removeprefix("file:"))
    if source.is_file():
        return [(target, source.read_bytes())]
    if source.is_dir():
        return [
            (f"{target.rstrip('/')}/{path.relative_to(source).as_posix()}", path.read_bytes())
            for path in sorted(source.rglob("*"))
            if path.is_file()
        ]
    raise StepFailed(f"field `{field or f'install.files.{target}'}`: {value!r}: no file or folder {source}")
