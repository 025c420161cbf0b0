"""Task import: a Harbor task folder or SWE-bench instances → a bundle folder that `agentenv run` runs.

Each bundle offers the task's own solution as the agent `oracle` (the default) and a `noop` agent. What has no
counterpart here is listed in `Imported.unmapped` and in the bundle's `IMPORT.md`, never dropped silently.

Harbor (a task folder): `instruction.md` is the prompt; `environment/Dockerfile`'s `WORKDIR` is where the
workspace is mounted, and its `COPY` lines (sources inside `environment/`) are the workspace's files; `tests/`
is shown read-only at `/tests` for grading only and `tests/test.sh` writes `/logs/verifier/reward.txt`;
`solution/solve.sh` is what the oracle runs; `task.toml`'s `[environment]` limits, `allow_internet`, and the
agent and verifier timeouts become sandbox settings.

SWE-bench (JSONL, one instance a line): `repo` is taken from a local folder or git repository named by
`--repo` (nothing is cloned here) and checked out at `base_commit`; `test_patch` is applied only in the grading
fork (hidden from the agent), `patch` is the oracle, `FAIL_TO_PASS` / `PASS_TO_PASS` grade it.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

HARBOR_WORKDIR = "/app"
"""Harbor's images mostly work in /app; used when the Dockerfile names no WORKDIR."""
NOOP_POLICY = {
    "description": "No-op: looks at the workspace and answers without changing anything.",
    "turn": [{"actions": [{"call": "list_dir", "args": {"path": "."}}, {"say": "Nothing to do."}]}],
}
REQUIRES = {
    "agentenv-workspace": ">=0.1,<0.2",
    "agentenv-steps": ">=0.1,<0.2",
    "agentenv-agents": ">=0.1,<0.2",
}
MEMORY_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


class ImportError_(ValueError):
    """A source that cannot be imported at all; the message names the file and the field."""


@dataclass
class Imported:
    out: Path
    tasks: list[str]
    unmapped: list[str] = field(default_factory=list)


def _write_toml(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(document, multiline_strings=True))


def _task(
    name: str, description: str, prompt: str, artifact: str, settings: dict[str, Any], grade: dict[str, Any]
) -> dict[str, Any]:
    return {
        "name": name,
        "description": description[:300],
        "steps": [
            {"id": "repo", "type": "deploy_env", "envs": ["workspace"], "artifacts": [f"workspace={artifact}"],
             "settings": {"workspace": settings}},
            {"id": "agent", "type": "deploy_agent", "env": "repo", "settings": {"policy": "agents/oracle.toml"}},
            {"id": "instruction", "type": "prompt_agent", "agent": "agent", "prompt": prompt},
            {"id": "grade", "type": "tests_verifier", "env": "repo", **grade},
        ],
    }  # fmt: skip


def _bundle(out: Path, name: str, description: str, tasks: list[str], unmapped: list[str], source: str) -> None:
    _write_toml(out / "bundle.toml", {"name": name, "description": description, "tasks": tasks, "requires": REQUIRES})
    _write_toml(out / "agents" / "noop.toml", NOOP_POLICY)
    lines = [f"# Imported from {source}", "", "Not mapped (kept here, not dropped):", ""]
    lines += [f"- {item}" for item in unmapped] or ["- nothing"]
    (out / "IMPORT.md").write_text("\n".join(lines) + "\n")


# ---- Harbor -----------------------------------------------------------------------------------------
def _memory_mb(value: Any, where: str, unmapped: list[str]) -> int | None:
    if isinstance(value, int | float):
        return int(value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT])i?B?\s*", str(value), re.IGNORECASE)
    if match is None:
        unmapped.append(f"{where} = {value!r}: not a size such as 4G or 2048M")
        return None
    return max(int(float(match.group(1)) * MEMORY_UNITS[match.group(2).upper()]), 16)


def _dockerfile(environment: Path, files: Path, unmapped: list[str]) -> str:
    """WORKDIR of the Dockerfile; COPY/ADD sources inside `environment/` are copied into `files`."""
    dockerfile = environment / "Dockerfile"
    workdir = HARBOR_WORKDIR
    if not dockerfile.is_file():
        unmapped.append("environment/Dockerfile: missing; the workspace starts empty")
        return workdir
    for number, raw in enumerate(dockerfile.read_text().splitlines(), start=1):
        line = raw.strip()
        word, _, rest = line.partition(" ")
        word = word.upper()
        if not line or line.startswith("#") or word in ("FROM", "ENV", "CMD", "ENTRYPOINT", "LABEL"):
            if word in ("FROM", "ENV"):
                unmapped.append(
                    f"environment/Dockerfile:{number}: {line!r}: the process sandbox uses the host's system"
                )
            continue
        if word == "WORKDIR":
            workdir = rest.strip()
        elif word in ("COPY", "ADD") and not rest.startswith("--from"):
            parts = rest.split()
            target = parts[-1]
            destination = target if target.startswith("/") else f"{workdir.rstrip('/')}/{target}"
            if not (destination == workdir or destination.startswith(workdir.rstrip("/") + "/")):
                unmapped.append(f"environment/Dockerfile:{number}: {line!r}: copies outside WORKDIR {workdir}")
                continue
            inside = files / destination[len(workdir) :].lstrip("/")
            for source in parts[:-1]:
                path = (environment / source).resolve()
                if not path.is_relative_to(environment.resolve()) or not path.exists():
                    unmapped.append(f"environment/Dockerfile:{number}: {line!r}: {source} is not in environment/")
                elif path.is_dir():
                    shutil.copytree(path, inside, dirs_exist_ok=True)
                else:
                    target_file = inside / path.name if target.endswith("/") or len(parts) > 2 else inside
                    target_file.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target_file)
        else:
            unmapped.append(f"environment/Dockerfile:{number}: {line!r}: needs the Docker sandbox (not built yet)")
    return workdir


def import_harbor(folder: Path, out: Path) -> Imported:
    """A Harbor task folder as a one-task bundle in `out`."""
    config_path = folder / "task.toml"
    try:
        config = tomllib.loads(config_path.read_text())
    except OSError as exc:
        raise ImportError_(
            f"{config_path}: cannot read it ({exc.strerror}); a Harbor task folder has task.toml"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ImportError_(f"{config_path}: not valid TOML ({exc})") from None
    instruction = folder / "instruction.md"
    if not instruction.is_file():
        raise ImportError_(f"{instruction}: missing; a Harbor task's prompt is its instruction.md")
    if not (folder / "tests" / "test.sh").is_file():
        raise ImportError_(f"{folder / 'tests' / 'test.sh'}: missing; Harbor grades with tests/test.sh")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-") or "task"
    unmapped: list[str] = []
    settings: dict[str, Any] = {}
    grade: dict[str, Any] = {"hidden": ["hidden/tests"], "hidden_mount": "/tests", "command": "bash /tests/test.sh",
                             "results": "reward"}  # fmt: skip
    for section, values in config.items():
        if not isinstance(values, dict):
            if section != "version":
                unmapped.append(f"task.toml: {section} = {values!r}")
            continue
        for key, value in values.items():
            where = f"task.toml: [{section}] {key}"
            if (section, key) == ("environment", "allow_internet"):
                settings["network"] = bool(value)
            elif (section, key) in (("environment", "memory"), ("environment", "memory_mb")):
                memory = _memory_mb(value, where, unmapped)
                if memory is not None:
                    settings["memory_mb"] = memory
            elif (section, key) in (("environment", "storage"), ("environment", "storage_mb")):
                size = _memory_mb(value, where, unmapped)
                if size is not None:
                    settings["file_size_mb"] = size
                    unmapped.append(f"{where} = {value!r}: approximated as the largest file a command may write")
            elif (section, key) == ("agent", "timeout_sec"):
                settings["exec_timeout"] = float(value)
                unmapped.append(f"{where} = {value!r}: applied per command, not to the agent's whole turn")
            elif (section, key) == ("verifier", "timeout_sec"):
                grade["timeout"] = float(value)
            elif (section, key) == ("verifier", "env") and isinstance(value, dict):
                grade["environment"] = {str(k): str(v) for k, v in value.items()}
            else:
                unmapped.append(f"{where} = {value!r}")
    if out.exists() and any(out.iterdir()):
        raise ImportError_(f"--out {out}: the folder is not empty; give a new folder")
    files = out / "artifacts" / name
    files.mkdir(parents=True)
    settings["mount_point"] = _dockerfile(folder / "environment", files, unmapped)
    shutil.copytree(folder / "tests", out / "hidden" / "tests")
    artifact = out / "artifacts" / f"{name}.json"
    document = {"name": name, "env": "workspace", "version": "1.0.0", "description": f"Harbor task {name}"}
    artifact.write_text(json.dumps({**document, "data": {"folder": name}}, indent=2))
    _harbor_oracle(folder / "solution", out, unmapped)
    prompt = instruction.read_text().strip()
    task = _task(name, prompt.splitlines()[0] if prompt else name, prompt, f"artifacts/{name}.json", settings, grade)
    _write_toml(out / "tasks" / f"{name}.toml", task)
    _bundle(out, name, f"Harbor task {name} (imported)", [name], unmapped, str(folder))
    return Imported(out, [name], unmapped)


def _harbor_oracle(solution: Path, out: Path, unmapped: list[str]) -> None:
    solve = solution / "solve.sh"
    if not solve.is_file():
        unmapped.append("solution/solve.sh: missing; the oracle agent only answers")
        actions: list[dict[str, Any]] = [{"say": "No solution shipped with this task."}]
    else:
        script = solve.read_text()
        marker = "AGENTENV_SOLVE_EOF"
        actions = [
            {"call": "exec", "args": {"command": f"bash <<'{marker}'\n{script}\n{marker}"}, "save": "solve"},
            {"say": "Ran the task's solution/solve.sh."},
        ]
        others = sorted(p.relative_to(solution).as_posix() for p in solution.rglob("*") if p.is_file() and p != solve)
        unmapped.extend(f"solution/{other}: only solve.sh is inlined into the oracle" for other in others)
    _write_toml(out / "agents" / "oracle.toml", {"description": "Oracle: the task's own solution.",
                                                  "turn": [{"actions": actions}]})  # fmt: skip


# ---- SWE-bench --------------------------------------------------------------------------------------
SWE_FIELDS = {"instance_id", "repo", "base_commit", "patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS",
              "problem_statement"}  # fmt: skip


def _test_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise ImportError_(f"{where}: not a JSON list of test ids") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ImportError_(f"{where}: must be a list of test ids")
    return value


def import_swe(jsonl: Path, repository: Path, out: Path, *, test_command: str) -> Imported:
    """SWE-bench instances (one JSON object a line) as a bundle: one task per instance, repo from `repository`."""
    if out.exists() and any(out.iterdir()):
        raise ImportError_(f"--out {out}: the folder is not empty; give a new folder")
    if not repository.exists():
        raise ImportError_(f"--repo {repository}: no such folder or git repository (nothing is cloned here)")
    unmapped: list[str] = []
    tasks: list[str] = []
    oracle_turns: list[dict[str, Any]] = []
    for number, line in enumerate(jsonl.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{jsonl}:{number}"
        try:
            instance = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportError_(f"{where}: not valid JSON ({exc})") from None
        missing = [f for f in ("instance_id", "base_commit", "patch", "test_patch") if not instance.get(f)]
        if missing:
            raise ImportError_(f"{where}: missing field(s) {', '.join(missing)}")
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(instance["instance_id"]))
        unmapped += [
            f"{where}: {key} = {str(value)[:80]!r}" for key, value in instance.items() if key not in SWE_FIELDS
        ]
        if instance.get("repo"):
            unmapped.append(f"{where}: repo = {instance['repo']!r}: taken from --repo {repository}, not cloned")
        (out / "artifacts").mkdir(parents=True, exist_ok=True)
        artifact = out / "artifacts" / f"{name}.json"
        data = {"git": str(repository.resolve()), "commit": str(instance["base_commit"])}
        artifact.write_text(json.dumps({"name": name, "env": "workspace", "version": "1.0.0", "data": data}, indent=2))
        hidden = out / "hidden" / name
        hidden.mkdir(parents=True)
        (hidden / "test.patch").write_text(str(instance["test_patch"]))
        grade = {
            "hidden": [f"hidden/{name}"],
            "hidden_mount": "/agentenv-hidden",
            "command": f"git apply /agentenv-hidden/test.patch && {test_command}",
            "results": "junit",
            "fail_to_pass": _test_list(instance.get("FAIL_TO_PASS", []), f"{where}: FAIL_TO_PASS"),
            "pass_to_pass": _test_list(instance.get("PASS_TO_PASS", []), f"{where}: PASS_TO_PASS"),
        }
        prompt = str(instance.get("problem_statement") or f"Resolve {instance['instance_id']}.")
        task = _task(name, prompt.splitlines()[0], prompt, f"artifacts/{name}.json", {}, grade)
        task["steps"][1]["settings"]["policy"] = f"agents/oracle-{name}.toml"
        _write_toml(out / "tasks" / f"{name}.toml", task)
        oracle = {"description": f"Oracle: {instance['instance_id']}'s gold patch.", "turn": [{"actions": [
            {"call": "apply_patch", "expect": "ok", "args": {"patch_text": str(instance["patch"])}},
            {"say": "Applied the gold patch."}]}]}  # fmt: skip
        _write_toml(out / "agents" / f"oracle-{name}.toml", oracle)
        oracle_turns.append(oracle)
        tasks.append(name)
    if not tasks:
        raise ImportError_(f"{jsonl}: no instances")
    if len(tasks) == 1:
        _write_toml(out / "agents" / "oracle.toml", oracle_turns[0])
    _bundle(out, jsonl.stem, f"SWE-bench instances from {jsonl.name} (imported)", tasks, unmapped, str(jsonl))
    return Imported(out, tasks, unmapped)
