"""The access rules: loopback by default, a token for any other bind, and no cross-origin writes."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from agentenv_explorer.access import AccessError, cross_origin, is_loopback, load_or_make_token
from agentenv_testing.services import LoopbackService

if TYPE_CHECKING:
    from conftest import Project


def test_a_cross_origin_post_is_refused(explorer: LoopbackService) -> None:
    before = httpx.get(f"{explorer.url}/api/runs", params={"limit": 500}, timeout=30).json()["runs"]
    refused = httpx.post(
        f"{explorer.url}/api/runs", json={"bundle": "hello"}, headers={"Origin": "http://evil.example"}, timeout=30
    )
    assert refused.status_code == 403 and "cross-origin write refused" in refused.json()["error"]
    fetched = httpx.post(
        f"{explorer.url}/api/runs", json={"bundle": "hello"}, headers={"Sec-Fetch-Site": "cross-site"}, timeout=30
    )
    assert fetched.status_code == 403
    after = httpx.get(f"{explorer.url}/api/runs", params={"limit": 500}, timeout=30).json()["runs"]
    assert after == before
    # the same request from the explorer's own page passes the origin rule (and fails later, on its body)
    own = httpx.post(f"{explorer.url}/api/runs", json={}, headers={"Origin": explorer.url}, timeout=30)
    assert own.status_code == 400


def test_reads_from_another_origin_are_not_writes() -> None:
    assert cross_origin("GET", {"origin": "http://evil.example", "host": "127.0.0.1:1"}) is None
    assert cross_origin("POST", {"host": "127.0.0.1:1"}) is None  # curl and scripts send no Origin
    assert cross_origin("POST", {"origin": "null", "host": "127.0.0.1:1"}) == "the Origin is null"
    assert cross_origin("DELETE", {"origin": "http://127.0.0.1:2", "host": "127.0.0.1:1"}) is not None


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("127.8.0.1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
        ("example.org", False),
    ],
)
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_non_loopback_bind_without_a_token_refuses_to_start(project: Project) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentenv", "up", "--host", "0.0.0.0", "--port", "0"],
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--host 0.0.0.0 is not loopback" in done.stderr and "--token" in done.stderr


def test_a_token_is_made_once_kept_0600_and_required(
    project: Project, tmp_path: Path, make_explorer_service: Any
) -> None:
    token_file = tmp_path / "state" / "token"
    service = make_explorer_service(
        project, "--host", "0.0.0.0", "--token", "--token-file", str(token_file), log_name="up-token.log"
    )
    with service:
        token = token_file.read_text().strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token) >= 32
        printed = service.log.read_text()
        assert printed.count(token) == 1 and f"?token={token}" in printed
        refused = httpx.get(f"{service.url}/api/runs", timeout=30)
        assert refused.status_code == 401 and "needs its token" in refused.json()["error"]
        wrong = httpx.get(f"{service.url}/api/runs", headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401 and "the token given was rejected" in wrong.json()["error"]
        assert "needs its token" not in wrong.json()["error"]  # a wrong token is not a missing one
        by_header = httpx.get(f"{service.url}/api/runs", headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert by_header.status_code == 200
        by_query = httpx.get(f"{service.url}/", params={"token": token}, timeout=30)
        assert by_query.status_code == 200
    again, made = load_or_make_token(token_file)
    assert (again, made) == (token, False)  # the next `agentenv up` uses the same token


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("x" * 40)
    path.chmod(0o644)
    with pytest.raises(AccessError, match=r"readable by others .* chmod 600"):
        load_or_make_token(path)
