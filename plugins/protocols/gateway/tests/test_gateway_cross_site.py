"""A token-less world refuses what a browser page on another site can send it: a `text/plain` POST that would
make a refund, a form POST to the clock, any state-changing request carrying a foreign Origin, on every route
(REST, JSON-RPC, a child's data plane, the extensions, MCP). Non-browser clients, which send JSON and no Origin,
are answered as before; so is a page of the server's own origin."""

from __future__ import annotations

import httpx
import pytest
from agentenv_gateway.app import build_app
from agentenv_gateway.server import serve_in_thread
from agentenv_runtime.world.build import build_world

REFUND = b'{"order_id":"ORD-5001","amount":1,"reason":"x"}'


@pytest.fixture(scope="module")
def url():
    with serve_in_thread(build_app(build_world("helpdesk", artifacts=["acme"]))) as base:
        yield base


ROUTES = [
    ("POST", "/rest/tools/issue_refund", REFUND),
    ("POST", "/agentenv", b'{"jsonrpc":"2.0","id":1,"method":"data/reset","params":{}}'),
    ("POST", "/envs/helpdesk/agentenv", b'{"jsonrpc":"2.0","id":1,"method":"data/reset","params":{}}'),
    ("PUT", "/clock/set-time", b'{"virtual_time":"2030-01-01T00:00:00Z"}'),
    ("POST", "/triggers/clear", b"{}"),
    ("POST", "/step", b'{"action":"list_tools"}'),
    ("POST", "/mcp", b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_a_browser_text_plain_post_is_refused(url, method, path, body):
    reply = httpx.request(method, url + path, content=body, headers={"content-type": "text/plain"})
    assert reply.status_code == 415, reply.text
    assert "application/json" in reply.text


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
def test_a_foreign_origin_is_refused_even_with_json(url, method, path, body):
    headers = {"content-type": "application/json", "origin": "https://evil.example"}
    reply = httpx.request(method, url + path, content=body, headers=headers)
    assert reply.status_code == 403, reply.text
    assert "evil.example" in reply.text
    bodiless = httpx.post(url + "/clock/clear", headers={"origin": "null"})
    assert bodiless.status_code == 403
    fetch = httpx.post(url + "/clock/clear", headers={"sec-fetch-site": "cross-site"})
    assert fetch.status_code == 403


def test_the_refund_is_not_made_and_json_clients_still_work(url):
    httpx.post(url + "/rest/tools/issue_refund", content=REFUND, headers={"content-type": "text/plain"})
    trajectory = httpx.get(url + "/trajectory").text
    assert "issue_refund" not in trajectory
    own = url.removesuffix("/")
    reply = httpx.post(url + "/rest/tools/issue_refund", content=REFUND,
                       headers={"content-type": "application/json; charset=utf-8", "origin": own})
    assert reply.status_code != 415 and reply.status_code != 403, reply.text
    assert httpx.get(url + "/health", headers={"origin": "https://evil.example"}).status_code == 200


def test_two_authorization_headers_are_refused(url):
    headers = [("authorization", "Bearer a"), ("authorization", "Bearer b"), ("content-type", "application/json")]
    reply = httpx.post(url + "/rest/tools/list_tickets", content=b"{}", headers=headers)
    assert reply.status_code == 400 and "more than one Authorization" in reply.text


def test_an_upper_case_loopback_host_is_answered(url):
    port = url.rsplit(":", 1)[1]
    assert httpx.get(url + "/health", headers={"host": f"LOCALHOST:{port}"}).status_code == 200
