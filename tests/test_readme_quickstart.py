"""The root README's quick start keeps working once its configuration block is in place: the block is copied
verbatim into a fresh project and the quick-start commands run there, as a newcomer would run them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agentenv_harness.testkit import script
from agentenv_model_standin.api import StandInModel

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_config() -> str:
    """The README's one `toml` block under "## Configuration", unchanged."""
    section = README.read_text(encoding="utf-8").split("## Configuration", 1)[1]
    found = re.search(r"```toml\n(.*?)```", section, re.S)
    assert found is not None, "README.md: the Configuration section has no ```toml block"
    return found.group(1)


def agentenv(
    project: Path, *args: str, key: str | None, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTENV_", "OPENAI_"))} | (extra or {})
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "agentenv", *args], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )


def project_with_readme_config(tmp_path: Path) -> Path:
    (tmp_path / ".agentenv").mkdir()
    (tmp_path / ".agentenv" / "config.toml").write_text(readme_config(), encoding="utf-8")
    assert 'api_key = "env:OPENAI_API_KEY"' in readme_config()  # the case this test is about
    return tmp_path


def test_an_unset_key_in_an_unused_model_table_does_not_fail_hello(tmp_path: Path) -> None:
    project = project_with_readme_config(tmp_path)
    done = agentenv(project, "run", "hello", "--json", key=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OPENAI_API_KEY" not in done.stderr


def test_a_configured_model_does_not_replace_the_bundles_own_agent(tmp_path: Path) -> None:
    project = project_with_readme_config(tmp_path)
    done = agentenv(project, "run", "support-refund", "--json", key="sk-unused")
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = json.loads(done.stdout)["tasks"]
    assert result["score"] == 1.0
    asked = agentenv(project, "run", "support-refund", "--agent", "llm", key="sk-unused")
    assert asked.returncode == 1  # the user asked for `llm`: it calls the (absent) model of the README's block
    assert "localhost:8000" in asked.stdout + asked.stderr


@pytest.mark.parametrize(("api", "suffix"), [("openai-chat", "/v1"), ("openai-responses", "/v1"), ("anthropic", "")])
def test_the_readme_model_table_drives_the_llm_kind_on_each_api(tmp_path: Path, api: str, suffix: str) -> None:
    """The block's [model] with its `api` switched (by the AGENTENV_* layer) and `--model-url` pointing at the stand-in
    model, which answers each API: the llm kind resolves support-refund on each."""
    project = project_with_readme_config(tmp_path)
    assert 'api = "openai-chat"' in readme_config()
    with StandInModel(script("support-refund-solve")) as model:
        done = agentenv(project, "run", "support-refund", "--agent", "llm", "--model-url", model.url + suffix,
                        "--json", key="sk-readme", extra={"AGENTENV_MODEL__API": api})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = json.loads(done.stdout)["tasks"]
    assert result["score"] == 1.0
    assert {r.api for r in model.model_requests} == {api} and model.turns_served == 6


def test_the_readme_says_how_to_install_from_the_repository() -> None:
    """The distributions are not on the index: every `pip install agentenv-…` line of the README must find
    them in wheels built from the checkout, and the README must say how to build those wheels."""
    text = README.read_text(encoding="utf-8")
    assert "uv build --all-packages --out-dir dist" in text
    installs = re.findall(r"pip install [^`\n]*agentenv-kernel[^`\n]*", text)
    assert installs, "README.md: no install line names agentenv-kernel"
    assert [line for line in installs if "--find-links dist" not in line] == []
