"""Interoperability with the reference AgentEnv implementation's own servers, agents, clients and bundles.

The reference servers need `mcp<2` and `a2a-sdk` 0.3 (our workspace has `mcp` 2 and `a2a-sdk` 1), so they
run in a separate venv holding `agentenv-framework-protocol`, `mcp<2`, `uvicorn` and `a2a-sdk[http-server]`
0.3, built once per session. Their example envs and bundles are read from the `agentenv-framework` wheel
(a zip; never installed: it pins SDKs we do not use). Both come from `$AGENTENV_WHEELHOUSE/reference` when
the CI script filled it (offline), else from the package index, as `tests/test_minimal_installs.py` does.

- our `agentenv tools --url` and `agentenv env validate` against their echo and mail envs, against a
  leaf env written with their SDK that has the data plane (`reference/notes_server.py`), and against that env
  behind a front made of their gateway's card and proxy code (`reference/peer_gateway.py`);
- their `hello` bundle (a JSON-array task, no `bundle.toml`) run by `agentenv run` (needs Docker);
- their env validator steps (`verify_env_card`, `verify_env_core_protocol`, `reference/validator_steps.py`)
  against our served slack + email + helpdesk world, with and without tokens;
- A2A 0.3 both ways: their SDK's 0.3 client against our served agent, our `a2a` agent kind against a 0.3
  agent on their SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "reference"
REFERENCE_PACKAGES = [
    "agentenv-framework-protocol==0.1.379",
    "mcp>=1.25,<2",
    "uvicorn>=0.30",
    "a2a-sdk[http-server]==0.3.26",
]
FRAMEWORK = "agentenv-framework==0.9.1364"
STEP_PACKAGES = ["packaging>=22", "pymongo>=4.7", "pyyaml>=6.0", "modal>=1.5.2.dev22", "regex>=2023.12.25"]
"""What importing the framework's validator steps needs (its other SDKs, e2b, litellm, …, are left out)."""
CARD = "/.well-known/agent-env.json"


def _wheelhouse() -> Path | None:
    root = os.environ.get("AGENTENV_WHEELHOUSE", "")
    folder = Path(root) / "reference" if root else None
    return folder if folder is not None and folder.is_dir() else None


def _pip_sources() -> list[str]:
    folder = _wheelhouse()
    return ["--no-index", "--find-links", str(folder)] if folder else []


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENV_", "PYTHON", "VIRTUAL_ENV"))}
    return env | extra


@pytest.fixture(scope="session")
def reference_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("reference") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *_pip_sources(),
         *REFERENCE_PACKAGES],
        capture_output=True, text=True, env=_clean_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return python


@pytest.fixture(scope="session")
def framework(reference_python: Path, tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The agentenv-framework wheel, opened as the zip it is (its examples are read, nothing is imported)."""
    folder = _wheelhouse()
    found = sorted(folder.glob("agentenv_framework-*.whl")) if folder else []
    if not found:
        dest = tmp_path_factory.mktemp("framework")
        done = subprocess.run(
            [str(reference_python), "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(dest), FRAMEWORK],
            capture_output=True, text=True, env=_clean_env(), timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        found = sorted(dest.glob("agentenv_framework-*.whl"))
    return zipfile.ZipFile(found[-1])


def extract(wheel: zipfile.ZipFile, prefix: str, dest: Path) -> Path:
    """Copy every member under `prefix` (a folder in the wheel) into `dest`."""
    members = [m for m in wheel.namelist() if m.startswith(prefix) and not m.endswith("/")]
    assert members, f"the wheel has no {prefix}"
    for member in members:
        target = dest / member.removeprefix(prefix)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(wheel.read(member))
    return dest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(python: Path, script: Path, *args: str, ready: str, **env: str) -> Iterator[str]:
    """Start `script` under `python` on a free loopback port; yield its base URL once `ready` answers; stop it."""
    port = free_port()
    env = _clean_env(MCP_HOST="127.0.0.1", MCP_PORT=str(port), **env)
    proc = subprocess.Popen([str(python), str(script), *args, str(port)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"{script.name} exited: {proc.stdout.read() if proc.stdout else ''}")
            try:
                if httpx.get(url + ready, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{script.name} did not answer {ready} in 60 s")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def agentenv(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.fixture(scope="session")
def example_envs(framework: zipfile.ZipFile, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("examples")
    extract(framework, "agent_env/examples/", dest)
    return dest


# ---- our clients against their servers ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("example", "tool", "args", "expect"),
    [
        ("echo-mcp/envs/echo", "echo", ["--text", "hi there"], "hi there"),
        ("mail-mcp/envs/mail", "search_emails", ["--query", "invoice"], "INV-1042"),
    ],
)
def test_tools_and_validate_against_their_example_envs(
    reference_python: Path, example_envs: Path, example: str, tool: str, args: list[str], expect: str
) -> None:
    server = example_envs / example / "server.py"
    with running(reference_python, server, ready=CARD) as url:
        listed = agentenv("tools", "--url", url, "--json")
        assert listed.returncode == 0, listed.stderr
        assert [t["name"] for t in json.loads(listed.stdout)] == [tool]
        called = agentenv("tools", "--url", url, tool, *args)
        assert called.returncode == 0, called.stderr
        assert expect in called.stdout
        validated = agentenv("env", "validate", url, "--json")
        assert validated.returncode == 0, validated.stdout + validated.stderr
        verdicts = {v["step"]: v for v in json.loads(validated.stdout)["checks"]}
        assert verdicts["verify_env_card"]["passed"] and verdicts["verify_mcp_tool_schema"]["passed"]
        assert "advertises no data-plane" in verdicts["verify_env_core_protocol"]["skipped"]


def test_validate_a_reference_env_with_a_data_plane(reference_python: Path) -> None:
    with running(reference_python, SCRIPTS / "notes_server.py", ready=CARD) as url:
        done = agentenv("env", "validate", url, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        verdicts = {v["step"]: v for v in json.loads(done.stdout)["checks"]}
        core = verdicts["verify_env_core_protocol"]
        assert core["passed"] and not core["skipped"], core
        assert {r["criterion"] for r in core["rows"]} >= {"data/reset answers", "data/get answers"}
        added = agentenv("tools", "--url", url, "add_note", "--text", "from agentenv")
        assert added.returncode == 0, added.stderr
        parts = httpx.post(f"{url}/agentenv", json={"jsonrpc": "2.0", "id": 1, "method": "data/get"}).json()
        assert parts["result"]["parts"][0]["data"]["notes"][-1]["text"] == "from agentenv"


def test_validate_a_reference_env_behind_their_gateway(
    reference_python: Path, framework: zipfile.ZipFile, tmp_path: Path
) -> None:
    """Their gateway's card (no `operations`, the server as its only child) and its forwarded data plane, whose
    parts name no env: `metadata.env` is optional, so the parts are the only child's."""
    extract(framework, "agent_env/env/gateway/", tmp_path / "gateway")
    with (
        running(reference_python, SCRIPTS / "notes_server.py", ready=CARD) as child,
        running(reference_python, SCRIPTS / "peer_gateway.py", str(tmp_path), child, ready=CARD) as url,
    ):
        card = httpx.get(url + CARD).json()
        done = agentenv("env", "validate", url, "--json")
    assert [c["name"] for c in card["children_environments"]] == ["notes"] and "operations" not in card["capabilities"]
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = {v["step"]: v for v in json.loads(done.stdout)["checks"]}
    assert verdicts["verify_env_card"]["passed"] and verdicts["verify_mcp_tool_schema"]["passed"]
    core = verdicts["verify_env_core_protocol"]
    assert core["passed"] and not core["skipped"], core
    rows = {r["criterion"]: r for r in core["rows"]}
    assert rows["data/get answers"]["passed"] and rows["data/get answers"]["detail"] == "1 env(s)"


# ---- their validator steps against our world -------------------------------------------------------------------
@pytest.fixture(scope="session")
def steps_python(reference_python: Path, framework: zipfile.ZipFile) -> Path:
    """The reference venv with agentenv-framework itself (no deps) and what its validator steps import."""
    done = subprocess.run(
        [str(reference_python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *_pip_sources(),
         *STEP_PACKAGES],
        capture_output=True, text=True, env=_clean_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [str(reference_python), "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
         str(framework.filename)],
        capture_output=True, text=True, env=_clean_env(), timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return reference_python


def their_verdicts(python: Path, url: str, home: Path, token: str | None = None) -> dict[str, Any]:
    home.mkdir()
    done = subprocess.run([str(python), str(SCRIPTS / "validator_steps.py"), url, *([token] if token else [])],
                          capture_output=True, text=True, env=_clean_env(HOME=str(home)), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return verdicts


@pytest.mark.parametrize("with_tokens", [False, True])
def test_their_env_validator_steps_pass_on_our_world(steps_python: Path, tmp_path: Path, with_tokens: bool) -> None:
    from agentenv_gateway.api import build_app, serve_in_thread
    from agentenv_runtime import build_world

    tokens = {"support": "tok-s", "control": "tok-c"} if with_tokens else None
    world = build_world("slack,email,helpdesk", artifacts=["acme"], roles={"support": {"deny": ["issue_refund"]}})
    with serve_in_thread(build_app(world, tokens=tokens)) as url:
        verdicts = their_verdicts(steps_python, url, tmp_path / "home", "tok-c" if with_tokens else None)
    card = verdicts["environment_card"]["validated_environment_card"]
    assert card["accessible"] and all(field["present"] for field in card["required_fields"].values())
    assert card["children_count"] == 3
    assert {"urn:agentenv:clock/v1", "urn:agentenv:state/v1"} <= set(card["extensions"])
    # token-less: every caller is `default` and sees every tool; the control token's view lists no agent tools
    assert card["tools"] == [] if with_tokens else "issue_refund" in card["tools"]
    protocol = verdicts["env_core_protocol"]
    assert protocol["data/add"] == {"supported": True} and protocol["data/get"] == {"supported": True}
    assert protocol["data/reset"]["supported"] is not False  # None: their check cannot tell with three children


# ---- their bundle on our runner --------------------------------------------------------------------------------
def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "no docker command on this machine"
    done = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    return None if done.returncode == 0 else f"`docker info` failed: {done.stderr.strip()[-200:]}"


def test_their_hello_bundle_runs_after_import(example_envs: Path, tmp_path: Path) -> None:
    if problem := _docker_problem():
        pytest.skip(problem)
    from agentenv_docker.base_image import ensure_base_image

    ensure_base_image(log=lambda message: print(f"[base image] {message}"))
    bundle = shutil.copytree(example_envs / "hello", tmp_path / "hello")
    imported = agentenv("task", "import", str(bundle / "tasks" / "hello.json"), "--out", str(tmp_path / "hello.toml"))
    assert imported.returncode == 0, imported.stderr  # every field mapped
    assert "note:" in imported.stderr and "no local VM provider" in imported.stderr
    done = agentenv("run", str(bundle), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [t["score"] for t in json.loads(done.stdout)["tasks"]] == [1.0]
    (bundle / "artifacts" / "greeting" / "hello.txt").write_text("goodbye\n")
    broken = agentenv("run", str(bundle), "--json")
    assert broken.returncode == 1 and json.loads(broken.stdout)["tasks"][0]["score"] < 1.0


def test_their_mcp_bundles_name_what_does_not_map(example_envs: Path, tmp_path: Path) -> None:
    """Their echo and mail bundles grade with a verify(mcp_url) script: named, and the run is refused."""
    for example in ("echo-mcp", "mail-mcp"):
        task = example_envs / example / "tasks" / "smoke.json"
        imported = agentenv("task", "import", str(task), "--out", str(tmp_path / f"{example}.toml"))
        assert imported.returncode == 1 and "field `file_artifact_id`" in imported.stderr
        refused = agentenv("run", str(task))
        assert refused.returncode != 0 and "file_artifact_id" in refused.stderr


# ---- A2A 0.3 ---------------------------------------------------------------------------------------------------
@contextmanager
def our_agent() -> Iterator[str]:
    """Our A2A server around an agent kind that answers `echo: PROMPT`."""
    from agentenv.contracts import AgentKind, AgentResponse
    from agentenv_a2a.server import build_a2a_app, serve_a2a

    class Echo(AgentKind[Any]):
        name = "echo-interop"
        description = "echoes"

        async def respond(self, prompt: str, tools: Any) -> AgentResponse:
            return AgentResponse(text=f"echo: {prompt}")

    app = build_a2a_app(Echo(Echo.Settings()), None, name="Echo", description="Echoes.")  # type: ignore[arg-type]
    with serve_a2a(app) as url:
        yield url


def test_their_03_client_talks_to_our_agent(reference_python: Path) -> None:
    with our_agent() as url:
        done = subprocess.run([str(reference_python), str(SCRIPTS / "a2a03_client.py"), url, "hello from 0.3"],
                              capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"card_url": f"{url}/a2a", "protocol": "0.3.0", "state": "completed",
                      "texts": ["echo: hello from 0.3"]}


def test_our_agent_kind_talks_to_their_03_agent(reference_python: Path) -> None:
    import asyncio

    from agentenv_a2a.agent import A2aAgent, A2aSettings

    with running(reference_python, SCRIPTS / "a2a03_agent.py", ready="/.well-known/agent.json") as url:
        card = httpx.get(url + "/.well-known/agent.json").json()
        assert card["protocolVersion"] == "0.3.0"
        agent = A2aAgent(A2aSettings(url=url, timeout=60))
        first = asyncio.run(agent.respond("hello from 1.0", tools=None))  # type: ignore[arg-type]
        second = asyncio.run(agent.respond("and again", tools=None))  # type: ignore[arg-type]
    assert (first.text, second.text) == ("echo: hello from 1.0", "echo: and again")
