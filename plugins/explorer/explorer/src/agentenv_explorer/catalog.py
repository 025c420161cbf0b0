"""What is installed, as the API shows it: bundles and their tasks (with the task schema), envs with their
cards and tools, plugins with the result of `agentenv plugin check`, and registry entries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentenv.contracts import kinds

from agentenv_explorer.errors import ApiError, not_found


class Catalog:
    def __init__(self, host: Any) -> None:
        self.host = host

    # -- bundles and tasks --------------------------------------------------------------------------------
    def bundles(self) -> list[dict[str, Any]]:
        from agentenv_runtime import TaskError

        out = []
        for name, entry in sorted(self.host.registry(kinds.BUNDLES).items()):
            row: dict[str, Any] = {"name": name, "distribution": entry.dist}
            try:
                bundle = self.bundle(name)
                problems = bundle.requirement_problems(self.host)
                tasks = [self._task_summary(name, path) for path in bundle.task_files().values()]
            except (TaskError, LookupError, OSError) as exc:
                out.append(row | {"status": "broken", "problems": [str(exc)], "tasks": [], "description": ""})
                continue
            row |= {
                "description": entry.obj.description,
                "status": "needs plugins" if problems else "ready",
                "problems": problems,
                "default_tasks": bundle.default_tasks,
                "tasks": tasks,
                "agents": sorted(p.stem for p in (bundle.path / "agents").glob("*.to*l") if p.is_file())
                if (bundle.path / "agents").is_dir()
                else [],
            }
            out.append(row)
        return out

    def bundle(self, name: str) -> Any:
        from agentenv_runtime import find_bundle

        if name not in self.host.registry(kinds.BUNDLES):
            known = ", ".join(sorted(self.host.registry(kinds.BUNDLES))) or "none installed"
            raise not_found(f"no installed bundle {name!r}", f"installed bundles: {known}")
        return find_bundle(name, self.host)

    @staticmethod
    def _task_summary(bundle: str, path: Any) -> dict[str, Any]:
        from agentenv_runtime import TaskError, read_task

        try:
            task = read_task(path)
        except TaskError as exc:
            return {"bundle": bundle, "file": path.stem, "problem": str(exc)}
        return {
            "bundle": bundle,
            "file": path.stem,
            "name": task.name,
            "description": task.description,
            "seed": task.seed,
            "graded": any(s.type.endswith("verifier") for s in task.steps),
        }

    def task(self, bundle_name: str, task_name: str) -> dict[str, Any]:
        from agentenv_runtime import TaskError, read_task

        bundle = self.bundle(bundle_name)
        files = bundle.task_files()
        path = files.get(task_name)
        if path is None:
            matches = [p for p in files.values() if _task_name(p) == task_name]
            if not matches:
                raise not_found(f"bundle {bundle_name!r} has no task {task_name!r}", f"tasks: {', '.join(files)}")
            path = matches[0]
        try:
            task = read_task(path)
        except TaskError as exc:
            raise ApiError(422, str(exc)) from None
        deps = task.deps()
        return {
            "bundle": bundle_name,
            "name": task.name,
            "description": task.description,
            "seed": task.seed,
            "pass_threshold": task.pass_threshold,
            "pins": task.pins.model_dump(),
            "steps": [{"id": s.id, "type": s.type, "depends_on": deps[s.id], "fields": s.fields} for s in task.steps],
        }

    def task_schema(self) -> dict[str, Any]:
        from agentenv_runtime import task_json_schema

        models = {name: entry.obj.Settings for name, entry in self.host.usable(kinds.STEPS).items()}
        schema: dict[str, Any] = task_json_schema(models)
        return schema

    # -- envs -------------------------------------------------------------------------------------------
    def envs(self) -> list[dict[str, Any]]:
        from agentenv_runtime import broken_reason

        rows = []
        for name, entry in sorted(self.host.registry(kinds.ENVS).items()):
            info = self.host.find(entry.plugin)
            row = {"name": name, "distribution": entry.dist, "version": info.version if info else ""}
            broken = broken_reason(self.host, kinds.ENVS, name)
            if broken is not None:
                rows.append(row | {"status": "broken", "problem": broken, "tools": [], "artifacts": []})
                continue
            tools, artifacts = sorted(entry.obj.tool_specs()), sorted(entry.obj.artifact_paths())
            rows.append(row | {"status": "ok", "tools": tools, "artifacts": artifacts})
        return rows

    def env_card(self, names: str, role: str) -> dict[str, Any]:
        from agentenv_runtime import ArtifactError, WorldError, build_card, build_world

        try:
            world = build_world(names)
        except (WorldError, ArtifactError) as exc:
            raise not_found(str(exc), "list the installed envs at GET /api/envs") from None
        card: dict[str, Any] = build_card(world, role=role)
        return {"card": card, "tools": world.list_tools(role)}

    # -- plugins ----------------------------------------------------------------------------------------
    def plugins(self) -> dict[str, Any]:
        """Every plugin and the problems `agentenv plugin check` reports, each with its one-line fix."""
        problems = self.host.problems() + self.host.install_problems()
        return {
            "ok": not problems,
            "plugins": [
                {
                    "name": i.name,
                    "distribution": i.dist,
                    "version": i.version,
                    "status": i.status,
                    "contributes": i.contributes,
                }
                for i in sorted(self.host.infos, key=lambda i: i.dist)
            ],
            "problems": [p.to_dict() for p in problems],
        }

    def registry(self, config: Any, guard: Callable[..., Any]) -> list[dict[str, Any]]:
        from dataclasses import asdict

        from agentenv_runtime import Registry

        entries = guard(lambda: Registry(config, self.host).list())
        return [asdict(e) | {"ref": e.ref} for e in entries]


def _task_name(path: Any) -> str | None:
    from agentenv_runtime import TaskError, read_task

    try:
        return read_task(path).name
    except TaskError:
        return None
