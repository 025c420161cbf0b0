"""Scripts: TOML and JSON files load; bad ones name the file, the turn and the field."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from agentenv_model_standin.api import ScriptError, StandInModel, load_script


def test_toml_and_json_scripts_load(tmp_path: Path) -> None:
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[[turns]]\ntool_calls = [{ tool = "get_ticket", arguments = { id = 1 } }]\n[[turns]]\ntext = "ok"\n'
    )
    script = load_script(toml)
    assert script.source == str(toml)
    assert script.turns[0].tool_calls[0].arguments == {"id": 1}
    listed = tmp_path / "s.json"
    listed.write_text(json.dumps([{"text": "a"}, {"text": "b", "delay": 0.5}]))
    assert [turn.text for turn in load_script(listed).turns] == ["a", "b"]


@pytest.mark.parametrize(
    ("content", "suffix", "expected"),
    [
        ("[[turns]]\ndelay = 1\n", ".toml", "turn 1: a turn needs `text`, `tool_calls` or both"),
        (
            '[[turns]]\ntext = "a"\n[[turns]]\ntool_calls = [{ arguments = {} }]\n',
            ".toml",
            "turn 2, tool_calls[0].tool",
        ),
        ('[[turns]]\ntext = "a"\ncolour = 1\n', ".toml", "turn 1, colour: Extra inputs"),
        ("{", ".json", "not valid JSON"),
        ("turns = []", ".toml", "turns: List should have at least 1 item"),
        ("text: a", ".yaml", "name it .toml or .json"),
    ],
)
def test_bad_scripts_name_file_turn_and_field(tmp_path: Path, content: str, suffix: str, expected: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def test_missing_file_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read the script"):
        StandInModel(tmp_path / "nope.toml")


def test_command_serves_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "s.toml"
    script.write_text('[[turns]]\ntext = "from the command"\n')
    command = [sys.executable, "-m", "agentenv", "model", "stand-in", "--script", str(script)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = first.split()[3]
        for _ in range(2):
            process.stdout.readline()
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
        request = urllib.request.Request(url + "/v1/chat/completions", body, {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            reply = json.load(answer)
        assert reply["choices"][0]["message"]["content"] == "from the command"
        assert process.stdout.readline().startswith("POST /v1/chat/completions -> 200 turn 1")
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_command_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "s.toml"
    script.write_text("turns = 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "model", "stand-in", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and str(script) in done.stderr
