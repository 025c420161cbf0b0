"""build_mcp_cli and run_code inside real tasks (the CLI runs against a world served by agentenv-gateway)."""
# ruff: noqa: F811 - the fixtures imported from steps_morekit are parameters of the tests

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv_runtime import TaskError
from steps_morekit import inline_config, sandbox  # noqa: F401 - pytest fixtures
from steps_taskkit import deploy, prompt, scripted, task


# ---- build_mcp_cli ----------------------------------------------------------------------------------
@pytest.fixture
def served_slack():
    """Slack with Acme's data, served by the gateway on loopback: (world, base URL)."""
    pytest.importorskip("agentenv_gateway")
    from agentenv_gateway.app import build_app
    from agentenv_gateway.server import serve_in_thread
    from agentenv_runtime import build_world

    world = build_world("slack", artifacts=["acme"])
    with serve_in_thread(build_app(world), "127.0.0.1", 0) as url:
        yield world, url


def run_cli(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", str(script), *args], capture_output=True, text=True, timeout=60)


def test_generated_cli_calls_the_served_tools(runs, step, tmp_path, served_slack):
    world, url = served_slack
    record = runs(task(deploy(), {"id": "cli", "type": "build_mcp_cli", "env": "world", "url": url}))
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "cli")["output"]
    assert output["name"] == "world-tools" and output["key"] == "cli/world-tools.py"
    assert "post_message" in output["tools"] and len(output["tools"]) == 19
    source = runs.object(output["key"])
    imports = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert imports <= set(sys.stdlib_module_names)  # standard library only
    script = tmp_path / "world-tools.py"
    script.write_bytes(source)

    posted = run_cli(script, "post_message", "--channel", "#general", "--text", "hello from the CLI")
    assert posted.returncode == 0, posted.stderr
    result = json.loads(posted.stdout)
    assert result["text"] == "hello from the CLI"
    assert world.call("list_messages", {"channel": "#general", "limit": 1}).result["messages"][-1]["text"] == (
        "hello from the CLI"
    )
    listed = run_cli(script, "--url", url, "list_channels", "--include-archived")
    assert listed.returncode == 0 and isinstance(json.loads(listed.stdout), list)
    helped = run_cli(script, "list_messages", "--help")
    assert helped.returncode == 0 and "--channel" in helped.stdout and "--limit" in helped.stdout
    refused = run_cli(script, "post_message", "--channel", "#nowhere", "--text", "x")
    assert refused.returncode == 1 and json.loads(refused.stderr)["code"]
    wrong = run_cli(script, "list_messages", "--limit", "many", "--channel", "#general")
    assert wrong.returncode == 2 and "invalid int value" in wrong.stderr
    missing = run_cli(script, "post_message", "--channel", "#general")
    assert missing.returncode == 2 and "--text" in missing.stderr
    assert run_cli(script).stdout.split() == sorted(output["tools"])


def test_cli_without_url_and_unreachable_gateway(runs, step, tmp_path):
    record = runs(task(deploy(), {"id": "cli", "type": "build_mcp_cli", "env": "world", "name": "slack"}))
    script = tmp_path / "slack.py"
    script.write_bytes(runs.object("cli/slack.py"))
    no_url = run_cli(script, "list_channels")
    assert no_url.returncode == 2 and "--url or AGENTENV_URL" in no_url.stderr
    down = run_cli(script, "--url", "http://127.0.0.1:9", "list_channels")
    assert down.returncode == 3 and "cannot reach" in down.stderr
    assert step(record, "cli")["output"]["usage"].startswith("`slack.py` calls the world's tools")


def test_build_mcp_cli_preflight_and_role(runs, step):
    with pytest.raises(TaskError) as err:
        runs(task(deploy(), {"id": "cli", "type": "build_mcp_cli", "env": "ghost"}))
    assert "step 'cli' (build_mcp_cli): field `env`: no step 'ghost'" in str(err.value)
    record = runs(task(deploy(), {"id": "cli", "type": "build_mcp_cli", "env": "world", "role": "admin"}))
    assert "field `role`: world 'slack' has no role 'admin'" in step(record, "cli")["error"]


# ---- run_code ---------------------------------------------------------------------------------------
SCRIPT = """
def run(input):
    print("working on", input["text"])
    return {"sum": input["a"] + input["b"], "text": input["text"].upper(), "seed": input["seed"]}
"""


def code(**fields):
    return {"id": "code", "type": "run_code", "script": "scripts/calc.py", **fields}


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "calc.py").write_text(SCRIPT)
    (folder / "scripts" / "broken.py").write_text("def run(input):\n    raise ValueError('bad input: ' + str(input))\n")
    return folder


def test_run_code_templates_input_and_keeps_the_result(runs, step, inline_config, bundle):
    steps = (
        deploy(),
        scripted("agent", "world", [{"say": "refund approved"}]),
        prompt("ask", "agent"),
        code(input={"a": 2, "b": 40, "text": "agent said: {{ ask.response }}", "seed": "{{ seed }}"}),
    )
    record = runs(task(*steps), config=inline_config, bundle_dir=bundle, seed=5)
    assert record["status"] == "succeeded", record["steps"]
    output = step(record, "code")["output"]
    assert output["result"] == {"sum": 42, "text": "AGENT SAID: REFUND APPROVED", "seed": 5}
    assert output["stdout"] == "working on agent said: refund approved\n" and output["provider"] == "inline"
    boxes = bundle.parent / "boxes"
    assert not boxes.exists() or not any(boxes.iterdir())  # the fresh sandbox was torn down


def test_run_code_in_an_existing_sandbox_and_from_the_store(runs, step, inline_config, bundle):
    runs.root.joinpath("objects", "scripts").mkdir(parents=True)
    runs.root.joinpath("objects", "scripts", "calc.py").write_text(SCRIPT)
    calc = code(script="store:scripts/calc.py", sandbox="box", input={"a": 1, "b": 1, "text": "x", "seed": 0})
    steps = (sandbox(), calc)
    record = runs(task(*steps), config=inline_config, bundle_dir=bundle)
    assert record["status"] == "succeeded", record["steps"]
    assert step(record, "code")["output"]["result"]["sum"] == 2
    assert step(record, "code")["output"]["provider"] is None


def test_run_code_failures_name_the_field(runs, step, inline_config, bundle):
    record = runs(task(code(script="scripts/broken.py", input=[1])), config=inline_config, bundle_dir=bundle)
    error = step(record, "code")["error"]
    assert "field `script`: run(input) failed: ValueError: bad input: [1]" in error
    record = runs(task(code(script="scripts/none.py")), config=inline_config, bundle_dir=bundle)
    assert "field `script`: cannot read" in step(record, "code")["error"]
    steps = (deploy(), code(input={"a": "{{ world.nothing }}"}))
    record = runs(task(*steps), config=inline_config, bundle_dir=bundle)
    assert "field `input.a`: template '{{ world.nothing }}': world has no 'nothing'" in step(record, "code")["error"]


def test_run_code_preflight(runs):
    with pytest.raises(TaskError) as err:
        runs(task(code(input={"a": "{{ ghost.value }}"}, sandbox="nobox")))
    text = str(err.value)
    assert "field `input`: no step 'ghost'" in text and "field `sandbox`: no step 'nobox'" in text
