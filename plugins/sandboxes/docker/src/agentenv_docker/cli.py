"""`agentenv docker …`: build the base image, list sandboxes, prune what crashed runs left behind."""

from __future__ import annotations

import json

import typer

from agentenv_docker.settings import DEFAULT_BASE

app = typer.Typer(help="Docker sandboxes: build the base image, list sandboxes, prune leftovers.", no_args_is_help=True)


def _labels(run: str | None, label: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in label:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--label {item!r}: write it as KEY=VALUE")
        found[key] = value
    if run:
        found["agentenv.run"] = run
    return found


@app.command("base-image")
def base_image(
    tag: str = typer.Option(DEFAULT_BASE, help="Tag of the image."),
    force: bool = typer.Option(False, help="Rebuild even when the tag exists."),
) -> None:
    """Build the base image from this machine's Debian mirror (debootstrap; needs root, no registry)."""
    from agentenv_docker.base_image import BaseImageError, ensure_base_image

    try:
        ensure_base_image(tag, force=force)
    except BaseImageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


@app.command("list")
def list_sandboxes(
    run: str | None = typer.Option(None, help="Only sandboxes of this run id."),
    label: list[str] = typer.Option([], help="Only sandboxes with this KEY=VALUE label (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Docker sandboxes made by agentenv (running or stopped)."""
    from agentenv_docker.provider import DockerProvider, is_expired

    rows = [
        {"id": s.id, "status": s.status(), "run": s.labels.get("agentenv.run", ""), "expired": is_expired(s.labels)}
        for s in DockerProvider().sandboxes(_labels(run, label))
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        typer.echo(f"{row['id']}  {row['status']:<8} run={row['run']}{'  expired' if row['expired'] else ''}")


@app.command()
def prune(
    run: str | None = typer.Option(None, help="Only what this run id made."),
    label: list[str] = typer.Option([], help="Only objects with this KEY=VALUE label (repeatable)."),
    expired: bool = typer.Option(False, help="Only sandboxes whose ttl_seconds deadline has passed."),
    all_: bool = typer.Option(False, "--all", help="Everything agentenv made (needed when no filter is given)."),
) -> None:
    """Remove containers, networks and volumes labelled `agentenv.managed=true` (and matching the filters);
    what a process that still runs made (a live run's world) is kept, and said so."""
    from agentenv_docker.provider import DockerProvider

    labels = _labels(run, label)
    if not labels and not expired and not all_:
        typer.echo("error: name what to prune: --run RUN, --label KEY=VALUE, --expired, or --all", err=True)
        raise typer.Exit(2)
    provider = DockerProvider()
    kept = provider.kept_objects(labels, expired=expired)
    removed = provider.prune_objects(labels, expired=expired)
    for kind, names in removed.items():
        typer.echo(f"removed {len(names)} {kind}" + (f": {', '.join(names)}" if names else ""))
    for name, why in kept.items():
        typer.echo(f"kept {name} (its container and network): {why}")
