"""`agentenv workspace …`: import Harbor and SWE-bench tasks as bundles, prune what killed runs left behind."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Workspaces: import Harbor / SWE-bench tasks as bundles, prune leftovers.", no_args_is_help=True)
importer = typer.Typer(help="Write a bundle folder from another project's task format.", no_args_is_help=True)
app.add_typer(importer, name="import")

Out = Annotated[Path, typer.Option("--out", "-o", help="The bundle folder to write (new or empty).")]


def _report(imported: object, source: Path) -> None:
    from agentenv_workspace.importers import Imported

    assert isinstance(imported, Imported)
    print(f"wrote {imported.out} (tasks: {', '.join(imported.tasks)}; agents: oracle, noop)")
    for line in imported.unmapped:
        print(f"not mapped: {source}: {line}")
    print(f"run it: agentenv run {imported.out}   (or --agent noop)")


def _fail(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(2)


@importer.command("harbor")
def import_harbor(
    folder: Annotated[Path, typer.Argument(help="A Harbor task folder (task.toml, …).")], out: Out
) -> None:
    """A Harbor task folder → a bundle; what cannot be mapped is printed and written to IMPORT.md."""
    from agentenv_workspace.importers import ImportError_
    from agentenv_workspace.importers import import_harbor as run

    try:
        _report(run(folder, out), folder)
    except ImportError_ as exc:
        _fail(str(exc))


@importer.command("swe")
def import_swe(
    file: Annotated[Path, typer.Argument(help="SWE-bench instances, one JSON object a line.")],
    repo: Annotated[Path, typer.Option(help="The instances' repository: a local folder or git repository.")],
    out: Out,
    test_command: Annotated[
        str, typer.Option(help="Runs the tests and writes report.xml (JUnit) in the workspace.")
    ] = "python3 -m pytest -q --junitxml=report.xml",
) -> None:
    """SWE-bench instances → a bundle, one task per instance; the repository comes from --repo."""
    from agentenv_workspace.importers import ImportError_
    from agentenv_workspace.importers import import_swe as run

    try:
        _report(run(file, repo, out, test_command=test_command), file)
    except (ImportError_, OSError) as exc:
        _fail(str(exc))


@app.command("prune")
def prune() -> None:
    """Remove the containers, committed images, mounts and folders of workspaces whose process no longer runs
    (a SIGKILLed run leaves them)."""
    from agentenv_workspace.layers import prune as run

    containers: list[str] = []
    try:
        from agentenv_workspace.container import prune as prune_containers

        containers = prune_containers()
    except Exception as exc:  # no engine, or agentenv-docker not installed: only the host part
        print(f"containers not pruned: {type(exc).__name__}: {exc}", file=sys.stderr)
    removed = run()
    images = [i for i in containers if i.startswith("sha256:")]
    print(
        f"removed {len(containers) - len(images)} container(s), {len(images)} image(s) and "
        f"{len(removed)} workspace folder(s)"
    )
