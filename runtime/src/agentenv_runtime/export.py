"""`agentenv bundle export`: a self-contained copy of a bundle that runs on any install with its plugins.

The bundle folder's shippable files are copied (`agentenv_runtime.bundle_files`: no `.env`, no secrets, no
symlink out of the bundle); every packaged artifact its tasks load is copied in under
`artifacts/<env>/<file>` and the `deploy_env`/`load_artifact` steps are pointed at those files (`ENV=artifacts/...`), so
the export no longer depends on which version of an env plugin ships which data. Each copied artifact's
full SHA-256 is pinned in its task's `pins.artifacts` (a run refuses other data), and `bundle.toml` keeps
the plugin ranges and records the exact versions the export was made with. Task files are written as
JSON (the task format's other syntax), since the standard library reads TOML but does not write it.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from agentenv import PluginHost
from agentenv.contracts import kinds

from agentenv_runtime.bundle_files import UnsafeFile, shipped_files
from agentenv_runtime.engine.bundle import Bundle
from agentenv_runtime.engine.task import TaskError
from agentenv_runtime.env.artifact import Artifact
from agentenv_runtime.registry import cache_root, digest_of, pack, unpack

_STORE = "store:"


def export_bundle(bundle: Bundle, out: Path, host: PluginHost) -> dict[str, Any]:
    """Write the export to `out` (a new folder, or a `.tar.gz`); a summary of what was pinned."""
    gzipped = out.name.endswith((".tar.gz", ".tgz"))
    if out.exists() and (gzipped or any(out.iterdir())):
        raise TaskError(f"{out} already exists; export into a new folder or file (--out)")
    with tempfile.TemporaryDirectory(prefix="agentenv-export-") as scratch:
        folder = Path(scratch) / bundle.name if gzipped else out
        _copy_shipped(bundle.path, folder)
        envs = {name: entry.obj for name, entry in host.registry(kinds.ENVS).items()}
        pinned: dict[str, str] = {}
        for task_path in sorted((folder / "tasks").glob("*")):
            if task_path.suffix in (".toml", ".json"):
                pinned |= _export_task(task_path, folder, envs)
        _write_manifest(bundle, folder)
        if gzipped:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(pack(folder))
    return {"bundle": bundle.name, "out": str(out), "artifacts": pinned, "requires": bundle.requires}


def _copy_shipped(source: Path, folder: Path) -> None:
    """Copy the files of the bundle that may leave the machine (no secrets, no caches), modes kept."""
    try:
        files = shipped_files(source)
    except UnsafeFile as exc:
        raise TaskError(f"bundle export: {exc}") from None
    for file, relative in files:
        target = folder.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)


def _read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    try:
        data: dict[str, Any] = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise TaskError(f"{path}: cannot read the task file ({exc})") from exc
    return data


def _export_task(path: Path, folder: Path, envs: dict[str, Any]) -> dict[str, str]:
    """Copy the artifacts the task loads into the export, point its steps at them, pin their hashes."""
    task = _read(path)
    steps = task.get("steps", [])
    deployed = {s.get("id"): list(s.get("envs", [])) for s in steps if s.get("type") == "deploy_env"}
    pins = task.setdefault("pins", {}).setdefault("artifacts", {})
    pinned: dict[str, str] = {}
    for step in steps:
        if step.get("type") not in ("load_artifact", "deploy_env") or "artifacts" not in step:
            continue
        world = deployed.get(step.get("id")) if step["type"] == "deploy_env" else deployed.get(step.get("env"))
        specs: list[str] = []
        for spec in step["artifacts"]:
            rewritten = _localise(spec, world or [], envs, folder, path)
            for env_name, relative, artifact in rewritten:
                pins[f"{env_name}/{artifact.name}"] = artifact.sha256
                pinned[f"{env_name}/{artifact.name}"] = artifact.sha256
                specs.append(f"{env_name}={relative}")
            if not rewritten:
                specs.append(spec)  # a stored artifact (store:KEY) or a file already inside the bundle
        step["artifacts"] = specs
    path.unlink()
    path.with_suffix(".json").write_text(json.dumps(task, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return pinned


def _localise(
    spec: str, world_envs: list[str], envs: dict[str, Any], folder: Path, task_path: Path
) -> list[tuple[str, str, Artifact]]:
    """(env, path inside the export, artifact) for each packaged or outside file the spec loads."""
    env_name, sep, value = spec.partition("=")
    if not sep:
        env_name, value = "", spec
    if value.startswith(_STORE) or spec.startswith(_STORE):
        return []
    targets = [env_name] if env_name else world_envs
    found = []
    for name in targets:
        cls = envs.get(name)
        packaged = cls.artifact_paths() if cls is not None and hasattr(cls, "artifact_paths") else {}
        source = packaged.get(value)
        if source is None and env_name:
            candidate = Path(value) if Path(value).is_absolute() else (folder / value)
            if candidate.is_file() and folder in candidate.resolve().parents:
                continue  # already inside the bundle: copied with it
            source = candidate if candidate.is_file() else None
        if source is None:
            continue
        relative = f"artifacts/{name}/{source.name}"
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / relative)
        found.append((name, relative, Artifact.from_file(folder / relative)))
    if env_name and not found and not (folder / value).is_file():
        raise TaskError(f"{task_path}: artifact {spec!r} is neither packaged with {env_name} nor a file to copy")
    return found


def _write_manifest(bundle: Bundle, folder: Path) -> None:
    """bundle.toml with the plugin ranges kept and the exact versions the export was made with."""
    manifest = folder / "bundle.toml"
    data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    lines = [f"# Exported by `agentenv bundle export` from {bundle.path.name}: artifacts inside, hashes pinned."]
    for key in ("name", "version", "description"):
        if key in data:
            lines.append(f"{key} = {json.dumps(str(data[key]), ensure_ascii=False)}")
    if "tasks" in data:
        lines.append(f"tasks = {json.dumps([str(t) for t in data['tasks']])}")
    lines += ["", "[requires]"] + [f"{json.dumps(d)} = {json.dumps(s)}" for d, s in sorted(bundle.requires.items())]
    lines += ["", "[exported_with]  # the versions installed when this was exported (informational)"]
    for dist in sorted(bundle.requires):
        try:
            lines.append(f"{json.dumps(dist)} = {json.dumps(version(dist))}")
        except PackageNotFoundError:
            continue
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")


def exported_folder(archive: Path) -> Path:
    """The bundle folder of an exported `.tar.gz`, unpacked once into the cache by its content hash."""
    data = archive.read_bytes()
    folder = cache_root() / "exports" / digest_of(data).removeprefix("sha256:")
    if not folder.is_dir():
        try:
            unpack(data, folder)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise TaskError(f"{archive}: not a readable exported bundle ({exc}); export it again") from exc
    manifests = sorted(folder.glob("*/bundle.toml")) or sorted(folder.glob("bundle.toml"))
    if not manifests:
        raise TaskError(f"{archive}: not an exported bundle (no bundle.toml inside)")
    return manifests[0].parent
