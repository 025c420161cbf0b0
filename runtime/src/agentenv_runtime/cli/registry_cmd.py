"""`agentenv registry push|pull|list`: bundles, tasks, artifacts, agents and envs by name and version."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Annotated

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.config import ConfigError, load_config
from agentenv.contracts import kinds

from agentenv_runtime.registry import KINDS, Registry, RegistryError

app = typer.Typer(
    help="Share bundles, tasks, artifacts, agents and envs by name and version on the configured stores.",
    no_args_is_help=True,
    add_completion=False,
)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
Kind = Annotated[str, typer.Argument(help=f"What it is: {', '.join(KINDS)}.")]


def _registry() -> Registry:
    try:
        return Registry(load_config(), get_host())
    except (ConfigError, LookupError) as exc:  # a store setting's reference, or a store nobody provides
        fail(str(exc))


def _source(kind: str, target: str, name: str | None, version: str | None) -> tuple[Path, str, str]:
    """The path to push and its name and version: a path, or (for bundles) an installed bundle's name."""
    path = Path(target)
    default_version = None
    if kind == "bundle" and not path.exists():
        installed = get_host().registry(kinds.BUNDLES)
        if target not in installed:
            fail(f"{target}: no such folder, nor an installed bundle (installed: {', '.join(sorted(installed))})")
        path = Path(installed[target].obj.path)
        try:
            default_version = dist_version(installed[target].dist)
        except PackageNotFoundError:
            default_version = None
    manifest = path / "bundle.toml"
    if kind == "bundle" and manifest.is_file():
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        name = name or str(data.get("name", path.name))
        default_version = str(data["version"]) if "version" in data else default_version
    name = name or path.name.split(".")[0]
    version = version or default_version
    if not version:
        fail(f"{target}: give a version with --version (a bundle may also set `version` in its bundle.toml)")
    return path, name, version


@app.command("push")
def push(
    kind: Kind,
    target: Annotated[str, typer.Argument(help="File or folder to push (or an installed bundle's name).")],
    name: Annotated[str | None, typer.Option(help="Name in the registry (default: from the bundle or file).")] = None,
    version: Annotated[str | None, typer.Option(help="Version (default: bundle.toml's, or the plugin's).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Push an item; the same content again is a no-op, other content under a pushed version is refused."""
    path, name, version = _source(kind, target, name, version)
    try:
        entry, new = _registry().push(kind, path, name, version)
    except RegistryError as exc:
        fail(str(exc))
    if as_json:
        print_json({**vars(entry), "new": new})
        return
    print(f"{'pushed' if new else 'already pushed'} {kind} {entry.ref} {entry.digest}")


@app.command("pull")
def pull(
    kind: Kind,
    ref: Annotated[str, typer.Argument(help="NAME@VERSION or NAME@sha256:HEX.")],
    out: Annotated[Path | None, typer.Option(help="Unpack here (default: the cache, by content hash).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Fetch an item by version or content hash, verify its hash, and unpack it."""
    try:
        entry, path = _registry().pull(kind, ref, out)
    except RegistryError as exc:
        fail(str(exc))
    if as_json:
        print_json({**vars(entry), "path": str(path)})
        return
    print(f"{kind} {entry.ref} {entry.digest} → {path}")


@app.command("list")
def list_items(
    kind: Annotated[str | None, typer.Argument(help=f"Only this kind ({', '.join(KINDS)}).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Every pushed item, by kind, name and version."""
    try:
        entries = _registry().list(kind)
    except RegistryError as exc:
        fail(str(exc))
    if as_json:
        print_json([vars(e) for e in entries])
        return
    print_table(
        ("KIND", "NAME", "VERSION", "DIGEST", "BYTES"),
        [(e.kind, e.name, e.version, e.digest[:19], e.size) for e in entries],
    )
