"""State capture: an agent's state as a JSON artifact, and deliverable files copied out of sandboxes."""

from __future__ import annotations

import asyncio
import hashlib
import json
import posixpath
import re
from typing import Any

from agentenv.contracts import StepContext, StepFailed
from pydantic import Field, field_validator

from agentenv_steps._common import CoreStep, StepSettings, StrList, missing_step
from agentenv_steps._refs import deployed_agent, jsonable, sandbox_of

STATE_FIELDS = ("conversation", "messages", "saved", "calls", "turn_index", "usage", "skills", "peers", "context_id")
"""Agent attributes that make up its state, when the kind has them (scripted: conversation, saved, calls, …;
llm: messages, calls, usage; a2a: context_id). A kind may instead define `snapshot() -> dict`."""


# ---- snapshot_agent_state ---------------------------------------------------------------------------
class SnapshotAgentStateSettings(StepSettings):
    agent: str = Field(description="The deploy_agent step whose agent's state to save.")
    name: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_.-]+$", description="Artifact name (default: the agent step id)."
    )


class SnapshotAgentState(CoreStep[SnapshotAgentStateSettings]):
    name = "snapshot_agent_state"
    description = "Save an agent's state (conversation, saved values, skills, peers) as a JSON artifact."
    Settings = SnapshotAgentStateSettings

    def check(self, settings: SnapshotAgentStateSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("agent", settings.agent, step_ids, "deploy_agent")

    async def execute(self, settings: SnapshotAgentStateSettings, ctx: StepContext) -> dict[str, Any]:
        deployed = deployed_agent(ctx, settings.agent)
        agent = deployed.agent
        own = getattr(agent, "snapshot", None)
        if callable(own):
            state = own()
        else:
            state = {field: getattr(agent, field) for field in STATE_FIELDS if hasattr(agent, field)}
        document = {
            "agent": settings.agent,
            "kind": deployed.kind,
            "role": deployed.role,
            "env": deployed.env,
            "run": ctx.run_id,
            "task": getattr(ctx, "task_name", None),
            "state": jsonable(state),
        }
        name = settings.name or settings.agent
        blob = json.dumps(document, indent=2, sort_keys=True).encode()
        key = f"agent_states/{name}.json"
        ctx.objects.put(key, blob)
        return {"key": key, "sha256": hashlib.sha256(blob).hexdigest(), "fields": sorted(document["state"])}


# ---- collect_artifacts ------------------------------------------------------------------------------
class CollectArtifactsSettings(StepSettings):
    source: str = Field(
        description="The step whose sandbox holds the files: deploy_sandbox, run_docker_container, or an agent "
        "that install_agent put in a sandbox."
    )
    paths: StrList = Field(
        min_length=1,
        description="Files or globs relative to the sandbox's working folder (`*` within a folder, `**` across).",
    )
    allow_missing: bool = Field(False, description="A path or glob that matches nothing is not an error.")
    max_files: int = Field(1000, ge=1, description="At most this many files are copied.")

    @field_validator("paths")
    @classmethod
    def _inside(cls, value: list[str]) -> list[str]:
        for path in value:
            if ".." in path.split("/"):
                raise ValueError(f"{path!r}: `..` is not allowed; give paths inside the sandbox's working folder")
        return value


class CollectArtifacts(CoreStep[CollectArtifactsSettings]):
    name = "collect_artifacts"
    description = "Copy deliverable files (globs) out of a sandbox into the object store under the run."
    Settings = CollectArtifactsSettings

    def check(self, settings: CollectArtifactsSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("source", settings.source, step_ids, "deploy_sandbox")

    async def execute(self, settings: CollectArtifactsSettings, ctx: StepContext) -> dict[str, Any]:
        box = sandbox_of(ctx, settings.source, "source")
        listing: list[str] | None = None
        chosen: list[str] = []
        missing = []
        for pattern in settings.paths:
            clean = pattern.removeprefix("./").lstrip("/") if not pattern.startswith("/") else pattern
            if not has_glob(clean):
                matches = [clean]
            else:
                if listing is None:
                    listing = await asyncio.to_thread(list_files, box)
                regex = glob_regex(clean)
                matches = [path for path in listing if regex.fullmatch(path)]
            if not matches:
                missing.append(pattern)
            chosen += [path for path in matches if path not in chosen]
        if len(chosen) > settings.max_files:
            raise StepFailed(f"field `paths`: {len(chosen)} files match, more than max_files = {settings.max_files}")
        files: dict[str, dict[str, Any]] = {}
        for path in chosen:
            try:
                data = await asyncio.to_thread(box.get_file, path)
            except (FileNotFoundError, IsADirectoryError):
                missing.append(path)
                continue
            except (OSError, ValueError, RuntimeError) as exc:
                raise StepFailed(f"field `paths`: cannot read {path} from the sandbox: {exc}") from None
            key = f"runs/{ctx.run_id}/collected/{ctx.step_id}/{posixpath.normpath(path).lstrip('/')}"
            ctx.objects.put(key, data)
            files[path] = {"key": key, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        if missing and not settings.allow_missing:
            raise StepFailed(
                f"field `paths`: nothing in the sandbox matches {', '.join(missing)} "
                f"(copied: {', '.join(files) or 'none'}); fix the paths, or set allow_missing = true"
            )
        return {"files": files, "missing": missing}


def has_glob(path: str) -> bool:
    return any(char in path for char in "*?[")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` and `?` stay within one folder, `**/` spans any number of folders, `[...]` is a character class."""
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif char == "*":
            out, i = out + "[^/]*", i + 1
        elif char == "?":
            out, i = out + "[^/]", i + 1
        elif char == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            out, i = out + "[" + re.escape(pattern[i + 1 : end]).replace("\\-", "-") + "]", end + 1
        else:
            out, i = out + re.escape(char), i + 1
    return re.compile(out)


def list_files(box: Any) -> list[str]:
    """Every file under the sandbox's working folder, as relative paths (`find` runs inside the sandbox)."""
    result = box.exec(["find", ".", "-type", "f"], timeout=60)
    if result.exit_code != 0:
        raise StepFailed(
            f"field `paths`: listing the sandbox's files failed ({result.exit_code}): {result.stderr[-300:]}"
        )
    return sorted(line.removeprefix("./") for line in result.stdout.splitlines() if line.strip())
