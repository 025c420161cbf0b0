"""The install matrix: every first-party distribution alone (with only what it declares) in a fresh venv.

For each distribution: `pip check` (uv's), `plugin check --json` says ok, and its own smoke command really
works — a bundle runs its bundle, an env answers a tool call, a sandbox provider or store passes the fast
subset of its own conformance tests, a step distribution runs a task using its steps. Some smokes need a
tool that the distribution does not declare, and name it in `TOOLS`: the conformance kit (`agentenv-testing`)
to run kits, and an outside env plugin (the kit's `fixture_notes` env, installed as a plain folder on
`PYTHONPATH`) where the distribution serves or validates an env but ships none. The table is printed at the end.

Marked `slow` (it builds every wheel and ~20 virtual environments): `pytest -m slow tests/test_install_matrix.py`.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agentenv_testing.installs import install_good_plugin
from wheels import ROOT, Venv, projects, run, uv, uv_venv

Smoke = Callable[[Venv, Path], str]
ROWS: dict[str, tuple[str, str]] = {}
"""distribution → (verdict, what its smoke showed), filled by the tests, printed by `matrix_table`."""


@pytest.fixture(scope="module")
def dist(workspace_wheels: dict[str, Path]) -> dict[str, Path]:
    return workspace_wheels


@pytest.fixture(scope="module", autouse=True)
def matrix_table(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not ROWS:
        return
    width = max(len(name) for name in ROWS) + 2
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():  # past pytest's capture, into the CI log
        reporter.write_line("")
        reporter.write_line(f"install matrix ({len(ROWS)} distributions, each alone with what it declares):")
        for name, (verdict, shown) in sorted(ROWS.items()):
            reporter.write_line(f"  {name.ljust(width)}{verdict:6}{shown}")


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"{proc.args}\n--stdout--\n{proc.stdout}\n--stderr--\n{proc.stderr}"
    return proc.stdout


def fixture_env(tmp: Path) -> dict[str, str]:
    """An outside env plugin (`fixture_notes`, one table, tool `add_note`) on PYTHONPATH."""
    return {"PYTHONPATH": str(install_good_plugin(tmp / "outside-plugin"))}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kit(test_file: str, selection: str) -> Smoke:
    """Run the fast subset `selection` of the distribution's own conformance tests against the installed wheel."""

    def smoke(venv: Venv, tmp: Path) -> str:
        (tmp / "pytest.ini").write_text("[pytest]\n")
        out = ok(venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(tmp / "pytest.ini"),
                          "--rootdir", str(tmp), "--import-mode=importlib", str(ROOT / test_file), "-k", selection,
                          cwd=tmp))  # fmt: skip
        summary = out.strip().splitlines()[-1]
        assert " passed" in summary and "failed" not in summary and "skipped" not in summary, out
        return f"kit: {summary.split(' in ')[0]} ({Path(test_file).name})"

    return smoke


def kernel_alone(venv: Venv, tmp: Path) -> str:
    shown = ok(venv.run("agentenv", "--help"))
    assert "plugin" in shown and " run " not in shown
    missing = venv.run("agentenv", "run")
    assert missing.returncode == 2 and "no such command 'run'" in missing.stderr
    return "--help; `run` is refused: no runtime"


def runtime_alone(venv: Venv, tmp: Path) -> str:
    assert "No envs installed. Add one: agentenv plugin add agentenv-slack" in ok(venv.run("agentenv", "env", "list"))
    assert "No step types installed" in ok(venv.run("agentenv", "steps", "list"))
    serve = venv.run("agentenv", "serve")
    assert serve.returncode == 2
    assert "It comes with agentenv-gateway: agentenv plugin add agentenv-gateway" in serve.stderr
    return "env/steps list say what to add; `serve` names agentenv-gateway"


def pytest_plugin_loads(venv: Venv, tmp: Path) -> str:
    fixtures = ok(venv.run("python", "-m", "pytest", "--fixtures", "-q", "-p", "no:cacheprovider", cwd=tmp))
    assert "agentenv_cli" in fixtures and "plugin_site" in fixtures
    return "pytest plugin: agentenv_cli, plugin_site fixtures"


def env_call(env: str, tool: str, arguments: dict[str, str], expect: str, artifact: str = "acme") -> Smoke:
    def smoke(venv: Venv, tmp: Path) -> str:
        card = json.loads(ok(venv.run("agentenv", "env", "card", env, "--artifact", artifact, "--json")))
        assert card["name"] == env and card["capabilities"]["tools"]
        code = (f"from agentenv_runtime import build_world\nw = build_world({env!r}, artifacts=[{artifact!r}])\n"
                f"print(w.call({tool!r}, {arguments!r}).to_dict())")  # fmt: skip
        answer = ok(venv.run("python", "-c", code))
        assert expect in answer, answer
        return f"card ({len(card['capabilities']['tools'])} tools); {tool} on {artifact}"

    return smoke


def gateway_serves(venv: Venv, tmp: Path) -> str:
    venv.extra_env = fixture_env(tmp)
    port = free_port()
    env = {**venv.extra_env, "PATH": str(venv.root / "bin")}
    server = subprocess.Popen([str(venv.agentenv), "serve", "fixture_notes", "--port", str(port)],
                              env={**run_env(), **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                card = json.loads(urllib.request.urlopen(f"{url}/.well-known/agent-env.json", timeout=5).read())
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.communicate()[1].decode()
                time.sleep(0.2)
        called = ok(venv.run("agentenv", "tools", "--url", url, "add_note", "--text", "from the matrix"))
        assert '"id": 1' in called, called
        return f"served {card['name']}; add_note over REST"
    finally:
        server.terminate()
        server.wait(timeout=30)


def run_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENV_", "PYTHON", "VIRTUAL_ENV"))}


STEPS_TASK = """
name = "notes-smoke"
description = "Deploy an outside env, set its clock, grade its end state."

[[steps]]
id = "notes"
type = "deploy_env"
envs = ["fixture_notes"]

[[steps]]
id = "clock"
type = "sync_env_clock"
env = "notes"
start = "2026-01-05T09:00:00Z"

[[steps]]
id = "grade"
type = "env_outcome_verifier"
env = "notes"
checks = [{ name = "no_notes_yet", env = "fixture_notes", sql = "SELECT COUNT(*) FROM notes", equals = 0 }]
"""


def steps_run_a_task(venv: Venv, tmp: Path) -> str:
    venv.extra_env = fixture_env(tmp)
    (tmp / "task.toml").write_text(STEPS_TASK)
    (record,) = json.loads(ok(venv.run("agentenv", "run", str(tmp / "task.toml"), "--json", cwd=tmp)))["tasks"]
    assert (record["status"], record["score"]) == ("succeeded", 1.0), record
    return "deploy_env + sync_env_clock + env_outcome_verifier: score 1.0"


def validators_validate(venv: Venv, tmp: Path) -> str:
    venv.extra_env = fixture_env(tmp)
    notes = {"name": "two-notes", "env": "fixture_notes", "version": "1.0.0",
             "data": {"notes": [{"id": 1, "text": "first"}, {"id": 2, "text": "second"}]}}  # fmt: skip
    (tmp / "two-notes.json").write_text(json.dumps(notes))
    report = venv.run("agentenv", "env", "validate", "fixture_notes", "--artifact",
                      f"fixture_notes={tmp / 'two-notes.json'}", "--json", cwd=tmp)  # fmt: skip
    assert report.returncode == 0, report.stdout + report.stderr
    steps = json.loads(report.stdout)
    steps = steps.get("steps", steps) if isinstance(steps, dict) else steps
    return f"env validate fixture_notes: {len(steps)} validator steps pass"


def registers(kind: str, names: list[str]) -> Smoke:
    """The contributions `names` of `kind` import (their classes, and the SDKs behind them) with only what the
    distribution declares."""

    def smoke(venv: Venv, tmp: Path) -> str:
        code = ("from agentenv.plugins.host import get_host\nfrom agentenv.contracts import kinds\n"
                f"print(sorted(n for n in get_host().usable(kinds.{kind.upper()}) if n in {names!r}))")  # fmt: skip
        assert ok(venv.run("python", "-c", code)).strip() == str(sorted(names))
        return f"{kind.replace('_', ' ')} {', '.join(names)} import with only what is declared"

    return smoke


def command_help(*command: str, expect: str) -> Smoke:
    def smoke(venv: Venv, tmp: Path) -> str:
        assert expect in ok(venv.run("agentenv", *command, "--help"))
        return f"`agentenv {' '.join(command)}` is there"

    return smoke


def imports(module: str, name: str) -> Smoke:
    """A library distribution (no entry point): its public module imports with only what it declares."""

    def smoke(venv: Venv, tmp: Path) -> str:
        ok(venv.run("python", "-c", f"from {module} import {name}"))
        return f"{module}.{name} imports with only what is declared"

    return smoke


def bundle_run(bundle: str, score: float | None, *options: str) -> Smoke:
    def smoke(venv: Venv, tmp: Path) -> str:
        out = ok(venv.run("agentenv", "run", bundle, *options, "--json", cwd=tmp))
        records = json.loads(out)["tasks"]
        assert records and all(r["status"] == "succeeded" for r in records), out
        if score is not None:
            assert [r["score"] for r in records] == [score], out
        shown = ", ".join(f"{r['name']} {r['status']}, score {r['score']}" for r in records)
        return f"run {bundle}: {shown}"

    return smoke


KIT = ["agentenv-testing"]
MATRIX: dict[str, tuple[list[str], Smoke]] = {
    "agentenv-kernel": ([], kernel_alone),
    "agentenv-runtime": ([], runtime_alone),
    "agentenv-testing": ([], pytest_plugin_loads),
    "agentenv-store-local": (KIT, kit("plugins/stores/local/tests/test_store_local_document.py",
                                      "Conformance and (round_trip or query or delete)")),
    "agentenv-sandbox-local": (KIT, kit("plugins/sandboxes/local/tests/test_sandbox_local_conformance.py",
                                        "create_and_status or exec_output or files_round_trip")),
    "agentenv-docker": (KIT, kit("plugins/sandboxes/docker/tests/test_docker_conformance.py",
                                 "create_and_status or exec_output")),
    "agentenv-modal": (KIT, kit("plugins/sandboxes/modal/tests/test_modal_conformance.py",
                                "TestModalConformance and (create_and_status or exec_output)")),
    "agentenv-e2b": (KIT, kit("plugins/sandboxes/e2b/tests/test_e2b_conformance.py",
                              "create_and_status or exec_output")),
    "agentenv-slack": ([], env_call("slack", "list_channels", {}, "C_SUPPORT")),
    "agentenv-email": ([], env_call("email", "list_mailboxes", {}, "@")),
    "agentenv-helpdesk": ([], env_call("helpdesk", "get_order", {"order_id": "ORD-5001"}, "ORD-5001")),
    "agentenv-gateway": ([], gateway_serves),
    "agentenv-a2a": ([], registers("agent_kinds", ["a2a"])),
    "agentenv-agents": ([], registers("agent_kinds", ["llm", "scripted"])),
    "agentenv-model-standin": ([], command_help("model", "stand-in", expect="--script")),
    "agentenv-harness": ([], imports("agentenv_harness.api", "HarnessAgent")),
    "agentenv-claude-code": ([], registers("agent_kinds", ["claude-code"])),
    "agentenv-codex": ([], registers("agent_kinds", ["codex"])),
    "agentenv-store-mongo": ([], registers("stores", ["document:mongodb"])),
    "agentenv-aws": ([], registers("stores", ["document:dynamodb", "object:s3", "secret:secretsmanager", "image:ecr"])),
    "agentenv-gcp": ([], registers("stores", ["document:firestore", "object:gcs", "secret:secretmanager",
                                              "image:artifactregistry"])),
    "agentenv-rl": ([], command_help("runs", "export", expect="chat-jsonl")),
    "agentenv-openenv": ([], command_help("openenv", "serve", expect="--max-sessions")),
    "agentenv-ray": ([], registers("runners", ["ray"])),
    "agentenv-explorer": ([], command_help("up", expect="--token")),
    "agentenv-steps": ([], steps_run_a_task),
    "agentenv-validators": ([], validators_validate),
    "agentenv-hello": ([], bundle_run("hello", None)),
    "agentenv-support-desk": ([], bundle_run("support-refund", 1.0)),
    "agentenv-retail": ([], env_call("retail", "get_order_details", {"order_id": "#W5918442"}, "sofia_rossi_8776",
                                     artifact="tau2")),
    "agentenv-tau2": ([], bundle_run("tau2-retail", 1.0, "--task", "0", "--agent", "tau2-gold")),
    "agentenv-workspace": ([], command_help("workspace", "import", "harbor", expect="--out")),
    "agentenv-coding": ([], bundle_run("coding", None)),
    "agentenv-mcp": ([], command_help("mcp", "probe", expect="NAME=COMMAND")),
    "agentenv-browser": ([], registers("envs", ["browser"])),
    "agentenv-miniwob": ([], bundle_run("miniwob", 1.0, "--task", "click-test", "--agent", "miniwob-solver")),
    "agentenv-website": ([], registers("envs", ["website"])),
    "agentenv-web-desk": ([], bundle_run("web-desk", None)),
}  # fmt: skip


def test_the_matrix_covers_every_distribution() -> None:
    assert sorted(MATRIX) == sorted(projects()), "give every workspace distribution a row (and a smoke)"


@pytest.mark.slow
@pytest.mark.skipif(uv() is None, reason="uv builds the matrix's environments (./dev installs it)")
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_alone_with_what_it_declares(name: str, dist: dict[str, Path], tmp_path: Path) -> None:
    tools, smoke = MATRIX[name]
    wheels = [dist[name], *(dist[t] for t in tools)]
    venv = uv_venv(tmp_path / "venv", wheels, find_links=next(iter(dist.values())).parent)
    have = venv.installed()
    expected = {name, *tools}
    assert expected <= have
    checked = run([str(uv()), "pip", "check", "--python", str(venv.python)])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    if name != "agentenv-testing" and not tools:  # alone: nothing of ours it did not declare
        declared = declared_closure(name)
        assert {d for d in have if d.startswith("agentenv-")} <= declared, have
    report = venv.run("agentenv", "plugin", "check", "--json", cwd=tmp_path)
    assert (report.returncode, json.loads(report.stdout)) == (0, {"ok": True, "problems": []}), report.stderr
    try:
        shown = smoke(venv, tmp_path)
    except BaseException:
        ROWS[name] = ("FAIL", "")
        raise
    ROWS[name] = ("ok", f"pip check, plugin check ok; {shown}" + (f" [+{', '.join(tools)}]" if tools else ""))


def declared_closure(name: str) -> set[str]:
    """`name` and every first-party distribution it requires, directly or not (not under extras)."""
    import tomllib

    from packaging.requirements import Requirement

    folders = projects()
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            deps = tomllib.loads((folders[current] / "pyproject.toml").read_text())["project"].get("dependencies", [])
            todo += [req.name for req in map(Requirement, deps) if req.name.startswith("agentenv-")]
    return seen
