"""Code steps: `build_mcp_cli` writes a command-line client for a world's tools, `run_code` runs a stored
script's `run(input)` in a sandbox and keeps its JSON result."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from agentenv.contracts import SandboxSpec, StepContext, StepFailed
from agentenv_runtime import RUN_LABEL, NoSandbox, World, create_in_chain
from pydantic import Field

from agentenv_steps._common import CoreStep, StepSettings, deployed_world, missing_step, plugin_host
from agentenv_steps._refs import render, sandbox_of, template_steps

CLI_TEMPLATE = (Path(__file__).parent / "cli_template.py.txt").read_text
"""The generated client's source, with __NAME__, __WORLD__, __ROLE__, __URL__ and __TOOLS__ to fill in."""


# ---- build_mcp_cli ----------------------------------------------------------------------------------
class BuildMcpCliSettings(StepSettings):
    env: str = Field(description="The deploy_env step whose world's tools the CLI calls.")
    role: str = Field("default", min_length=1, description="The role whose tools the CLI offers.")
    name: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_.-]+$", description="Script name (default `<env>-tools`); stored as cli/<name>.py."
    )
    url: str | None = Field(
        None, description="Default gateway base URL baked into the script (else --url or AGENTENV_URL)."
    )


class BuildMcpCli(CoreStep[BuildMcpCliSettings]):
    name = "build_mcp_cli"
    description = "Generate a stdlib-only command-line client for a world's tools (gateway REST) as an artifact."
    Settings = BuildMcpCliSettings

    def check(self, settings: BuildMcpCliSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        return missing_step("env", settings.env, step_ids, "deploy_env")

    async def execute(self, settings: BuildMcpCliSettings, ctx: StepContext) -> dict[str, Any]:
        world: World = deployed_world(ctx, settings.env)
        if settings.role not in world.rbac.roles:
            raise StepFailed(f"field `role`: world {world.name!r} has no role {settings.role!r}")
        tools = sorted(world.list_tools(settings.role), key=lambda tool: str(tool["name"]))
        name = settings.name or f"{settings.env}-tools"
        source = generate_cli(name, world.name, settings.role, settings.url, tools)
        key = f"cli/{name}.py"
        data = source.encode()
        ctx.objects.put(key, data)
        return {
            "name": name,
            "key": key,
            "sha256": hashlib.sha256(data).hexdigest(),
            "tools": [tool["name"] for tool in tools],
            "usage": usage(name, tools),
        }


def generate_cli(name: str, world: str, role: str, url: str | None, tools: list[dict[str, Any]]) -> str:
    """The client's source: the tool list (names, descriptions, input schemas) is embedded as JSON."""
    slim = [
        {"name": t["name"], "description": t.get("description") or "", "inputSchema": t.get("inputSchema") or {}}
        for t in tools
    ]
    return (
        CLI_TEMPLATE()
        .replace("__NAME__", json.dumps(name))
        .replace("__WORLD__", json.dumps(world))
        .replace("__ROLE__", json.dumps(role))
        .replace("__URL__", json.dumps(url or ""))
        .replace("__TOOLS__", repr(json.dumps(slim, sort_keys=True)))
    )


def usage(name: str, tools: list[dict[str, Any]]) -> str:
    """How to use the client, for a person or an agent's skills (add_skills `cli`)."""
    lines = [
        f"`{name}.py` calls the world's tools from the command line (Python 3, standard library only):",
        f"    python3 {name}.py --url URL [--token TOKEN] TOOL [--option VALUE ...]",
        f"`python3 {name}.py TOOL --help` lists a tool's options (argument `ticket_id` is `--ticket-id`). "
        "It prints the result as JSON and exits 0, or prints the error and exits 1. Tools:",
    ]
    for tool in tools:
        summary = (tool.get("description") or "").strip().splitlines()
        lines.append(f"- {tool['name']}: {summary[0] if summary else ''}")
    return "\n".join(lines)


# ---- run_code ---------------------------------------------------------------------------------------
WORK = ".agentenv-run-code"
DRIVER = """\
import importlib.util, json, os, sys, traceback

here = os.path.dirname(os.path.abspath(__file__))
out = {"ok": False, "error": "the script did not finish"}
try:
    spec = importlib.util.spec_from_file_location("agentenv_run_code_script", os.path.join(here, "script.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise TypeError("the script defines no function run(input)")
    with open(os.path.join(here, "input.json"), encoding="utf-8") as handle:
        data = json.load(handle)
    out = {"ok": True, "result": json.loads(json.dumps(module.run(data)))}
except BaseException as exc:  # noqa: BLE001 - everything goes back to the step
    out = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
with open(os.path.join(here, "output.json"), "w", encoding="utf-8") as handle:
    json.dump(out, handle)
"""


class RunCodeSettings(StepSettings):
    script: str = Field(description="The Python script: a path relative to the bundle, or `store:KEY`.")
    input: Any = Field(None, description="JSON input of run(input); `{{ step.path }}` templates read earlier outputs.")
    sandbox: str | None = Field(None, description="A step's sandbox to run in; absent = a fresh one (`provider`).")
    provider: str = Field("inline", description="Provider (or chain) of the fresh sandbox when `sandbox` is absent.")
    python: str = Field("python3", min_length=1, description="The Python command inside the sandbox.")
    timeout: float = Field(60.0, gt=0, description="Seconds the script may run.")


class RunCode(CoreStep[RunCodeSettings]):
    name = "run_code"
    description = "Run a stored Python script's run(input) in a sandbox; its JSON result is the step's output."
    Settings = RunCodeSettings

    def check(self, settings: RunCodeSettings, step_ids: list[str]) -> list[tuple[str, str]]:
        problems = missing_step("sandbox", settings.sandbox, step_ids, "deploy_sandbox")
        for step_id in sorted(template_steps(settings.input)):
            problems += missing_step("input", step_id, step_ids, "earlier")
        return problems

    async def execute(self, settings: RunCodeSettings, ctx: StepContext) -> dict[str, Any]:
        source = read_script(settings.script, ctx)
        data = render(settings.input, ctx, "input")
        try:
            payload = json.dumps(data).encode()
        except (TypeError, ValueError) as exc:
            raise StepFailed(f"field `input`: not JSON: {exc}") from None
        own = settings.sandbox is None
        if own:
            spec = SandboxSpec(labels={RUN_LABEL: ctx.run_id})
            host = plugin_host(ctx)
            try:
                box, provider, _ = await asyncio.to_thread(
                    create_in_chain, settings.provider, spec, ctx.config, host, ctx.log
                )
            except NoSandbox as exc:
                raise StepFailed(f"field `provider`: {exc}") from None
        else:
            box, provider = sandbox_of(ctx, str(settings.sandbox), "sandbox"), None
        try:
            for name, content in (("script.py", source), ("input.json", payload), ("driver.py", DRIVER.encode())):
                await asyncio.to_thread(box.put_file, f"{WORK}/{name}", content)
            done = await asyncio.to_thread(box.exec, [settings.python, f"{WORK}/driver.py"], timeout=settings.timeout)
            try:
                out = json.loads(await asyncio.to_thread(box.get_file, f"{WORK}/output.json"))
            except (FileNotFoundError, ValueError):
                detail = "timed out" if done.exit_code == 124 else f"exited with {done.exit_code}"
                raise StepFailed(
                    f"field `script`: the script {detail} before returning (timeout {settings.timeout:g} s); "
                    f"output:\n{(done.stderr or done.stdout).strip()[-800:]}"
                ) from None
        finally:
            if own:
                await asyncio.to_thread(box.teardown)
        if not out.get("ok"):
            raise StepFailed(f"field `script`: run(input) failed: {out.get('error')}\n{out.get('traceback', '')}")
        return {"result": out["result"], "stdout": done.stdout[-2000:], "provider": provider}


def read_script(script: str, ctx: StepContext) -> bytes:
    if script.startswith("store:"):
        key = script.removeprefix("store:")
        try:
            return bytes(ctx.objects.get(key))
        except KeyError:
            raise StepFailed(f"field `script`: no object {key!r} in the object store") from None
    path = ctx.resolve_path(script)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise StepFailed(f"field `script`: cannot read {path}: {exc}") from None
