"""`agentenv env …`: which envs are installed, and the Environment Card of any composition of them."""

from __future__ import annotations

from typing import Annotated

import typer
from agentenv import fail, get_host, print_json, print_table
from agentenv.contracts import kinds

from agentenv_runtime.env.artifact import ArtifactError
from agentenv_runtime.env.tool import ToolSchemaError
from agentenv_runtime.world.build import build_world
from agentenv_runtime.world.world import WorldError

app = typer.Typer(help="List installed envs and print Environment Cards.", no_args_is_help=True, add_completion=False)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


@app.command("list")
def list_envs(as_json: JsonFlag = False) -> None:
    """Installed envs: name, distribution, version, tools and packaged artifacts; broken ones say why."""
    from agentenv_runtime.world.build import env_problem

    host = get_host()
    rows = []
    for name, entry in sorted(host.registry(kinds.ENVS).items()):
        info = host.find(entry.plugin)
        row = {"name": name, "distribution": entry.dist, "version": info.version if info else ""}
        broken = env_problem(host, name)
        if broken is not None:
            rows.append({**row, "status": "broken", "problem": broken, "tools": [], "artifacts": []})
            continue
        tools, artifacts = sorted(entry.obj.tool_specs()), sorted(entry.obj.artifact_paths())
        rows.append({**row, "status": "ok", "tools": tools, "artifacts": artifacts})
    if as_json:
        print_json(rows)
    elif not rows:
        print("No envs installed. Add one: agentenv plugin add agentenv-slack")
    else:
        print_table(
            ("ENV", "DISTRIBUTION", "VERSION", "STATUS", "TOOLS", "ARTIFACTS"),
            [
                (r["name"], r["distribution"], r["version"], r["status"], len(r["tools"]), ", ".join(r["artifacts"]))
                for r in rows
            ],
        )
        for r in rows:
            if r["status"] == "broken":
                print(f"\n{r['problem']}")


@app.command("card")
def card(
    names: Annotated[str, typer.Argument(help="Env name, or several joined by commas (slack,email).")],
    artifact: Annotated[list[str], typer.Option("--artifact", "-a", help="NAME or ENV=NAME_OR_PATH; repeatable.")] = [],  # noqa: B006
    role: Annotated[str, typer.Option(help="Show the card as this role sees it.")] = "default",
    as_json: JsonFlag = False,
) -> None:
    """The Environment Card a gateway would serve for these envs (children listed, tools with schemas)."""
    from agentenv_runtime.world.card import build_card

    try:
        world = build_world(names, artifacts=artifact)
        document = build_card(world, role=role)
    except (WorldError, ArtifactError, ToolSchemaError) as exc:
        fail(str(exc))
        return
    if as_json:
        print_json(document)
        return
    print(f"{document['name']}  (protocol {document['protocolVersion']})")
    for child in document["children_environments"]:
        loaded = ", ".join(child["artifacts"]) or "no artifact loaded"
        print(f"  {child['name']} {child['version']}: {len(child['capabilities']['tools'])} tools; {loaded}")
    print(f"tools ({len(document['capabilities']['tools'])}):")
    for tool in document["capabilities"]["tools"]:
        print(f"  {tool['name']}: {tool['description']}")
