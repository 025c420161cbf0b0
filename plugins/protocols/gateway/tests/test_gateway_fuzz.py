"""Fuzz the REST surface from its own OpenAPI document with schemathesis, against a live loopback server.

Runs the schemathesis CLI (examples, coverage and fuzzing phases, positive and negative data, settings in
`schemathesis.toml` beside this file) on every operation, with every check that concerns the gateway: no
5xx, documented status codes, content types and response schemas, unsupported methods, ignored auth.

Two checks are left out because they test the apps rather than the gateway: `positive_data_acceptance`
and `negative_data_rejection` flag places where an app's validator and its published schema disagree
(see the README's findings); the gateway answers those calls correctly with 400/422.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentenv_gateway.app import build_app
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime import build_world

TOKEN = "tok-fuzz"
CONFIG = Path(__file__).with_name("schemathesis.toml")
EXCLUDED = "positive_data_acceptance,negative_data_rejection"


def test_gateway_rest_fuzz(tmp_path):
    world = build_world("slack,email,helpdesk", artifacts=["acme"], roles={"billing_lead": {"tools": ["*"]}})
    app = build_app(world, tokens={"billing_lead": TOKEN})
    with serve_in_thread(app) as url:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "--config-file",
                str(CONFIG),
                "--no-color",
                "run",
                f"{url}/openapi.json",
                "--header",
                f"Authorization: Bearer {TOKEN}",
                "--checks",
                "all",
                "--exclude-checks",
                EXCLUDED,
                "--workers",
                "2",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=os.environ | {"SCHEMATHESIS_HOOKS": ""},
            timeout=600,
        )
        calls = [e for e in world.trajectory.events if e["kind"] == "tool_call"]
    summary = result.stdout[-4000:]
    assert result.returncode == 0, summary
    operations = len(world.tools) + 1  # a POST per tool, and GET /rest/tools
    assert f"Selected: {operations}/{operations}" in result.stdout and f"Tested: {operations}" in result.stdout, summary
    assert "passed" in result.stdout and "failures" not in result.stdout.split("SUMMARY")[-1], summary
    assert len(calls) > 500  # the fuzzer really reached the world, through every world rule
