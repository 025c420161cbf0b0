"""`agentenv plugin …`: what is installed, whether it fits together, and installing or removing plugins."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from agentenv.cli.output import fail, print_json, print_table
from agentenv.contracts import kinds
from agentenv.plugins.host import PluginHost, get_host
from agentenv.plugins.info import PluginInfo
from agentenv.plugins.requirements import InvalidRequirement, canonical, parse

app = typer.Typer(help="List, inspect, check, add and remove plugins.", no_args_is_help=True, add_completion=False)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _contributes(info: PluginInfo) -> str:
    parts = [f"{kind}: {', '.join(names)}" for kind, names in sorted(info.contributes.items()) if names]
    return "; ".join(parts) or "-"


@app.command("list")
def list_plugins(as_json: JsonFlag = False) -> None:
    """Every plugin: distribution, version, declared kernel range, what it contributes, status."""
    host = get_host().load()
    host.usable(kinds.ENVS)  # env classes are light to import: one whose module fails then lists as broken
    if as_json:
        print_json([info.to_dict() for info in host.infos])
        return
    if not host.infos:
        print("No plugins installed. Add one: agentenv plugin add DISTRIBUTION")
        return
    rows = [(i.name, i.dist, i.version, i.kernel_range or "-", i.shown_status, _contributes(i)) for i in host.infos]
    print_table(("PLUGIN", "DISTRIBUTION", "VERSION", "KERNEL", "STATUS", "CONTRIBUTES"), rows)
    if host.problems():
        print(f"\n{len(host.problems())} problem(s): run `agentenv plugin check` for fixes.", file=sys.stderr)


@app.command("show")
def show(name: Annotated[str, typer.Argument(help="Plugin or distribution name.")], as_json: JsonFlag = False) -> None:
    """One plugin in detail, with its requirements and any problems."""
    host = get_host().load().resolve_all()
    info = host.find(name)
    if info is None:
        known = ", ".join(sorted(i.name for i in host.infos)) or "none"
        fail(f"no plugin or distribution named {name!r} (installed: {known})")
    if as_json:
        print_json(info.to_dict())
        return
    rows = {"module": info.module, "status": info.shown_status, "kernel range": info.kernel_range or "-"}
    rows["requires"] = ", ".join(info.requires) or "-"
    print(f"{info.name}  ({info.dist} {info.version})", *(f"  {k + ':':14}{v}" for k, v in rows.items()), sep="\n")
    for kind, names in sorted(info.contributes.items()):
        print(f"  {kind}: {', '.join(names)}")
    for problem in info.problems:
        print(f"  problem [{problem.code}]: {problem.message}\n    fix: {problem.fix}")


@app.command("check")
def check(as_json: JsonFlag = False) -> None:
    """Report every incompatibility with a one-line fix; exit 1 when there is any."""
    host = get_host().load().resolve_all()
    problems = host.problems() + host.install_problems()
    if as_json:
        print_json({"ok": not problems, "problems": [p.to_dict() for p in problems]})
    elif not problems:
        print("All plugins are compatible.")
    else:
        for p in problems:
            print(f"{p.plugin}: [{p.code}] {p.message}\n  fix: {p.fix}")
        print(f"\n{len(problems)} problem(s).")
    raise typer.Exit(1 if problems else 0)


def installer() -> tuple[str, list[str]]:
    """(tool, command prefix) of this environment's own installer: uv when uv made it, else pip."""
    uv, cfg = shutil.which("uv"), Path(sys.prefix) / "pyvenv.cfg"
    if uv and cfg.exists() and "uv =" in cfg.read_text():
        return "uv", [uv, "pip"]
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0:
        return "pip", [sys.executable, "-m", "pip"]
    if uv:
        return "uv", [uv, "pip"]
    fail(f"neither pip nor uv can install into {sys.prefix}: run `{sys.executable} -m ensurepip` or install uv")


def _run_installer(verb: str, args: list[str]) -> None:
    tool, prefix = installer()
    extra = ["--python", sys.executable] if tool == "uv" else (["-y"] if verb == "uninstall" else [])
    command = [*prefix, verb, *extra, *args]
    print("$ " + " ".join(command), file=sys.stderr)
    result = subprocess.run(command)
    if result.returncode != 0:
        fail(f"{verb} failed (exit {result.returncode}); nothing else was changed", result.returncode)


def _check_after() -> int:
    """Check in a fresh process: this one has the old metadata cached."""
    return subprocess.run([sys.executable, "-m", "agentenv", "plugin", "check"]).returncode


@app.command("add")
def add(
    specs: Annotated[list[str], typer.Argument(help="Requirement specs, e.g. 'agentenv-slack>=0.1,<0.2' or a path.")],
    upgrade: Annotated[bool, typer.Option("--upgrade", "-U", help="Upgrade if already installed.")] = False,
) -> None:
    """Install plugins with this environment's installer, resolved together with every installed agentenv
    distribution so no sibling breaks, then run `plugin check`."""
    named = {spec_name(spec) for spec in specs}
    _run_installer("install", (["--upgrade"] if upgrade else []) + specs + siblings(named, pin=upgrade))
    raise typer.Exit(_check_after())


def spec_name(spec: str) -> str:
    """The distribution a spec names: a requirement, a wheel file or a project folder (a clear error otherwise)."""
    path = Path(spec)
    if path.suffix == ".whl":
        return canonical(path.name.split("-")[0])
    if path.is_dir() and (path / "pyproject.toml").is_file():
        import tomllib

        return canonical(str(tomllib.loads((path / "pyproject.toml").read_text()).get("project", {}).get("name")))
    try:
        return parse(spec).name
    except InvalidRequirement as exc:
        fail(f"{spec!r} is not a requirement spec ({exc}); quote it, e.g. 'agentenv-slack>=0.1,<0.2'")


def siblings(named: set[str], pin: bool) -> list[str]:
    """Every other installed agentenv distribution, named in the same install so the resolver keeps them fitting:
    bare (it may move one so the whole set fits), or pinned to its installed version when upgrading. The kernel
    stays pinned unless named: a fix never changes it."""
    from agentenv import __version__

    installed = {canonical(info.dist): info.version for info in get_host().infos} | {"agentenv-kernel": __version__}
    keep = sorted(set(installed) - named)
    return [f"{d}=={installed[d]}" if pin or d == "agentenv-kernel" else d for d in keep]


def dependents(host: PluginHost, dist: str) -> list[str]:
    """Installed plugin distributions that declare a requirement on `dist` (not ones under an extra)."""
    target = canonical(dist)
    needs = {info.dist for info in host.infos for req in info.requirements() if req.applies and req.name == target}
    return sorted(dist for dist in needs if canonical(dist) != target)


@app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="Plugin or distribution name.")],
    force: Annotated[bool, typer.Option("--force", help="Remove even if other plugins require it.")] = False,
) -> None:
    """Uninstall a plugin distribution; refuses while another installed plugin requires it."""
    if canonical(name) == "agentenv-kernel":
        fail("agentenv-kernel is not a plugin; uninstall it with your installer if you mean to")
    host = get_host()
    info = host.find(name)
    if info is None:
        fail(f"no plugin or distribution named {name!r}; see `agentenv plugin list`")
    needed_by = dependents(host, info.dist)
    if needed_by and not force:
        fail(f"{info.dist} is required by {', '.join(needed_by)}; remove those first or pass --force")
    broken = [p.message for p in host.install_problems(without=info.dist)]
    if broken and not force:
        fail(f"removing {info.dist} would break: {'; '.join(broken)}; pass --force to remove it anyway")
    _run_installer("uninstall", [info.dist])
    raise typer.Exit(_check_after())
