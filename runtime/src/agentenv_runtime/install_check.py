"""What a run needs beyond plugin version ranges, answered for the kernel's `agentenv_check_install` hook.

Ranges between distributions are the kernel's business; but an install can satisfy every range and still
not run anything: a bundle needs plugins nobody declared, `[store] document` names a backend no plugin
provides, the configured sandbox chain has no installed provider. `agentenv plugin check` reports these,
`agentenv plugin remove X` refuses while they would appear without X, and `agentenv run` (no argument) marks
bundles that cannot run yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentenv import ContributionError, PluginHost, Problem, cached, canonical
from agentenv.config import ConfigError, load_config
from agentenv.contracts import kinds

from agentenv_runtime.engine.bundle import Bundle, read_bundle
from agentenv_runtime.engine.task import TaskError
from agentenv_runtime.env.artifact import ArtifactError

BUNDLE_REQUIREMENT = "bundle-requirement"
BUNDLE_UNREADABLE = "bundle-unreadable"
STORE_MISSING = "store-missing"
SANDBOX_MISSING = "sandbox-missing"
TOOL_SCHEMA = "tool-schema"
ARTIFACT_INVALID = "artifact-invalid"
STORE_KINDS = ("document", "object", "secret", "image")


def install_problems(host: PluginHost, without: str | None = None) -> list[Problem]:
    """Every problem a run would meet here; with `without`, only those that uninstalling it would cause."""
    gone = canonical(without) if without else None
    problems = bundle_problems(host, gone)
    if gone is None:  # what is wrong now, not what a removal would break
        problems += foreign_package_problems() + tool_schema_problems(host) + artifact_problems(host)
    try:
        config = load_config()
    except ConfigError as exc:  # `config show` explains it in full; a check must still answer
        return [*problems, Problem("runtime", "config-invalid", str(exc), "fix the file and field named")]
    for kind in STORE_KINDS:
        name = config.raw(f"store.{kind}")
        entry = host.registry(kinds.STORES).get(f"{kind}:{name}")
        if entry is None and gone is None:
            problems.append(_store_missing(host, kind, name, config.sources.get(f"store.{kind}", "default")))
        elif entry is not None and gone is not None and canonical(entry.dist) == gone:
            message = f"[store] {kind} = {name!r} is provided by {entry.dist}"
            problems.append(Problem("runtime", STORE_MISSING, message, f"change [store] {kind} first, or keep it"))
    for key in ("default", "agent_default"):
        if config.sources.get(f"sandbox.{key}", "default") != "default":  # only a chain the user chose
            problems += _chain_problems(host, key, str(config.raw(f"sandbox.{key}")), gone)
    return problems


def tool_schema_problems(host: PluginHost) -> list[Problem]:
    """Tools whose arguments have no JSON Schema: they would fail the card, `list_tools` and every call."""
    from agentenv_runtime.env.env import Env

    problems = []
    for _, entry in sorted(host.usable(kinds.ENVS).items()):
        if not (isinstance(entry.obj, type) and issubclass(entry.obj, Env)):
            continue
        for problem in entry.obj.schema_problems():
            fix = "give each such parameter a type with a JSON Schema (docs/authoring.md: the type hints tools may use)"
            problems.append(Problem(entry.plugin, TOOL_SCHEMA, f"{entry.dist}: {problem}", fix))
    return problems


def artifact_problems(host: PluginHost) -> list[Problem]:
    """Packaged artifacts that do not load into their env (a table or column it lacks, a broken constraint, bad
    JSON), which a run would meet at its load step. Each is loaded into a fresh env of its own; the verdicts are
    kept (`agentenv.cached`) until an artifact file or anything installed changes: loading globex takes seconds."""
    import json
    import os

    from agentenv_runtime.env.env import Env

    envs = {name: entry for name, entry in host.usable(kinds.ENVS).items() if _is_env(entry.obj, Env)}
    files = {(name, art): path for name, entry in envs.items() for art, path in entry.obj.artifact_paths().items()}
    stamps = json.dumps(sorted([str(path), *_stamp(path)] for path in files.values()))
    found = cached("artifacts", lambda: _artifact_verdicts(envs, list(files)), os.environ, stamps)
    fix = "fix the file (docs/authoring.md: the artifact file format), then `agentenv plugin check` again"
    problems = []
    for env_name, artifact, why in found:
        entry = envs[env_name]
        message = f"{entry.dist}: env {env_name!r}, artifact {artifact!r}: {why}"
        problems.append(Problem(entry.plugin, ARTIFACT_INVALID, message, fix))
    return problems


def _is_env(obj: object, base: type) -> bool:
    return isinstance(obj, type) and issubclass(obj, base)


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def _artifact_verdicts(envs: dict[str, Any], artifacts: list[tuple[str, str]]) -> list[list[str]]:
    """[env, artifact, why it does not load] for each packaged artifact that does not load (JSON, for the cache)."""
    found = []
    for env_name, artifact in sorted(artifacts):
        cls = envs[env_name].obj
        try:
            env = cls()
        except Exception:  # an env that needs settings: its artifacts are checked where a task deploys it
            continue
        try:
            env.load(cls.find_artifact(artifact))
        except ArtifactError as exc:  # names the file and the field
            found.append([env_name, artifact, " ".join(str(exc).split())])
        except Exception as exc:  # the env's own load (a constraint, an override of `_load_rows`)
            found.append([env_name, artifact, f"{type(exc).__name__}: {exc}"])
    return found


def bundle_problems(host: PluginHost, gone: str | None = None) -> list[Problem]:
    return [problem for found in problems_by_bundle(host, gone).values() for problem in found]


def problems_by_bundle(host: PluginHost, gone: str | None = None) -> dict[str, list[Problem]]:
    """Each installed bundle's problems (none: it can run), leaving out the bundles `gone` would take away."""
    found: dict[str, list[Problem]] = {}
    for name, entry in sorted(host.registry(kinds.BUNDLES).items()):
        if gone is not None and canonical(entry.dist) == gone:
            continue  # the bundle leaves with its distribution
        try:
            bundle = read_bundle(Path(entry.obj.path))
        except (TaskError, ContributionError) as exc:
            fix = f"reinstall or upgrade {entry.dist}: agentenv plugin add --upgrade {entry.dist}"
            found[name] = [Problem(entry.plugin, BUNDLE_UNREADABLE, f"bundle {name!r}: {exc}", fix)]
            continue
        needs = unmet_needs(bundle, host, gone)
        found[name] = [Problem(entry.plugin, BUNDLE_REQUIREMENT, message, fix) for message, fix in needs]
    return found


def unmet_needs(bundle: Bundle, host: PluginHost, gone: str | None = None) -> list[tuple[str, str]]:
    """(message, fix) per requirement of `bundle` that is unmet — or, with `gone`, that removing it would unmeet."""
    if gone is not None:
        return [
            (f"bundle {bundle.name!r} needs {dist}{spec}", f"keep {dist}, or remove the bundle's distribution first")
            for dist, spec in bundle.requires.items()
            if canonical(dist) == gone
        ]
    try:
        return bundle.unmet(host)
    except TaskError as exc:
        return [(str(exc), "fix the range in the bundle's bundle.toml")]


def _store_missing(host: PluginHost, kind: str, name: object, source: str) -> Problem:
    have = sorted(key.partition(":")[2] for key in host.registry(kinds.STORES) if key.startswith(f"{kind}:"))
    message = f"[store] {kind} = {name!r} (from {source}), but no installed plugin provides that {kind} store"
    fix = (
        f"add the plugin that provides it, or set [store] {kind} to one installed ({', '.join(have)})"
        if have
        else "add a store plugin: agentenv plugin add agentenv-store-local"
    )
    return Problem("runtime", STORE_MISSING, message, fix)


def _chain_problems(host: PluginHost, key: str, chain: str, gone: str | None) -> list[Problem]:
    """A chosen chain with no installed provider left: every run that needs a sandbox would fail."""
    providers = host.registry(kinds.SANDBOX_PROVIDERS)
    names = [part.strip() for part in chain.split(",") if part.strip()]
    left = [n for n in names if n in providers and (gone is None or canonical(providers[n].dist) != gone)]
    if left or (gone is not None and not any(n in providers for n in names)):
        return []
    message = f"[sandbox] {key} = {chain!r}, but no provider of that chain is installed"
    installed = ", ".join(sorted(providers)) or "none"
    fix = f"add the plugin of one of them, or change [sandbox] {key} (installed providers: {installed})"
    return [Problem("runtime", SANDBOX_MISSING, message, fix)]


def foreign_package_problems() -> list[Problem]:
    """The index name `agentenv` is an unrelated project shipping a top-level `agentenv` package: installed
    next to the kernel, it overwrites the kernel's files."""
    from importlib.metadata import packages_distributions

    others = sorted({d for d in packages_distributions().get("agentenv", []) if canonical(d) != "agentenv-kernel"})
    if not others:
        return []
    fix = f"pip uninstall {' '.join(others)} && pip install --force-reinstall agentenv-kernel"
    return [Problem("runtime", "foreign-package", f"{', '.join(others)} also installs a top-level `agentenv`", fix)]
