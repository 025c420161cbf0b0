"""The desk's web front end as a WSGI app over a world: pages show the world's records, forms change its state
through the helpdesk's tools (recorded in the trajectory), and refusals show the tool's message and change nothing.
The browser-level tests (real Chromium on the served site) are in agentenv-web-desk."""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlencode

import pytest
from agentenv_helpdesk.env import HelpdeskEnv
from agentenv_helpdesk.web import app
from agentenv_runtime import World


@pytest.fixture
def world() -> World:
    env = HelpdeskEnv()
    env.load(HelpdeskEnv.find_artifact("acme"))
    return World([env], roles={"web": {"tools": ["*"]}})


def request(
    world: World | None, method: str, path: str, form: dict[str, str] | None = None
) -> tuple[str, dict[str, str], str]:
    path, _, query = path.partition("?")
    body = urlencode(form or {}).encode()
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "/w/abc",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "wsgi.input": io.BytesIO(body),
    }
    if world is not None:
        environ["agentenv.tools"] = world.tool_access("web")
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer.update(status=status, headers=dict(headers))

    text = b"".join(app(environ, start_response)).decode()
    return answer["status"], answer["headers"], text


def test_pages_show_the_worlds_records_with_links_under_the_mount_prefix(world: World) -> None:
    status, headers, _ = request(world, "GET", "/")
    assert status.startswith("303") and headers["Location"] == "/w/abc/tickets"
    status, _, page = request(world, "GET", "/tickets?status=open")
    assert status == "200 OK" and "4 ticket(s)" in page
    assert '<a href="/w/abc/tickets/TCK-9001">TCK-9001</a>' in page and "TCK-8989" not in page
    _, _, page = request(world, "GET", "/tickets/TCK-9001")
    assert "Boots arrived damaged" in page and '<a href="/w/abc/orders/ORD-5001">ORD-5001</a>' in page
    assert '<option value="priya@acme.example">Priya Patel (billing_lead)</option>' in page
    _, _, page = request(world, "GET", "/orders/ORD-5001")
    assert "Trailblazer hiking boots" in page and "129.99 USD" in page and '<label for="amount">Amount</label>' in page
    status, headers, _ = request(world, "GET", "/customers?q=dana.kim@example.com")
    assert headers["Location"] == "/w/abc/customers/ACC-1001"
    _, _, page = request(world, "GET", "/customers/ACC-1001")
    assert "412 Cedar Lane, Portland, OR, 97205, US" in page and "/w/abc/orders/ORD-5001" in page
    assert request(world, "GET", "/tickets/TCK-1")[0] == "404 Not Found"
    assert request(world, "GET", "/nowhere")[0] == "404 Not Found"
    assert request(world, "POST", "/tickets")[0] == "405 Method Not Allowed"


def test_forms_change_the_world_through_its_tools(world: World) -> None:
    status, headers, _ = request(
        world, "POST", "/orders/ORD-5001/refund", {"amount": "89.99", "reason": "Damaged boots"}
    )
    assert status.startswith("303") and headers["Location"].startswith("/w/abc/orders/ORD-5001?notice=Refunded")
    assert world.query("helpdesk", "SELECT amount_cents FROM refunds WHERE order_id = 'ORD-5001'") == [
        {"amount_cents": 8999}
    ]
    event = world.trajectory.events[-1]
    assert (event["tool"], event["role"], event["args"]["amount"]) == ("issue_refund", "web", 89.99)
    address = {"street": "88 Harbor Road", "city": "Tacoma, WA", "postal_code": "98402", "country": "us"}
    assert request(world, "POST", "/customers/ACC-1006/address", address)[0].startswith("303")
    (row,) = world.query(
        "helpdesk", "SELECT street, city, postal_code, country FROM accounts WHERE account_id = 'ACC-1006'"
    )
    assert row == address | {"country": "US"}
    escalation = {"to": "priya@acme.example", "reason": "Trip tomorrow"}
    assert request(world, "POST", "/tickets/TCK-8998/escalate", escalation)[0].startswith("303")
    (ticket,) = world.query("helpdesk", "SELECT priority, assignee FROM tickets WHERE ticket_id = 'TCK-8998'")
    assert ticket == {"priority": "urgent", "assignee": "priya@acme.example"}
    assert (
        request(world, "POST", "/tickets/TCK-8998/comment", {"body": "On it", "visibility": "internal"})[0][:3] == "303"
    )
    assert request(world, "POST", "/tickets/TCK-8998/close", {"resolution": "Replaced"})[0][:3] == "303"
    assert request(world, "POST", "/orders/ORD-4996/verify", {"note": "Photo checked"})[0][:3] == "303"


def test_a_refused_form_shows_the_tools_message_and_changes_nothing(world: World) -> None:
    before = world.state_digest()
    status, _, page = request(world, "POST", "/orders/ORD-5001/refund", {"amount": "500", "reason": "All of it"})
    assert status == "422 Unprocessable Content"
    assert '<p role="alert">amount: 500.00 exceeds what can still be refunded on ORD-5001: 129.99' in page
    assert 'value="500"' in page  # what was typed stays in the form
    status, _, page = request(world, "POST", "/orders/ORD-5001/refund", {"amount": "lots", "reason": "x"})
    assert status.startswith("422") and "amount" in page
    status, _, page = request(world, "POST", "/customers/ACC-1006/address", {"street": "x", "city": "y"})
    assert status.startswith("422") and "postal_code" in page
    status, _, page = request(world, "GET", "/customers?q=nobody@example.com")
    assert status == "404 Not Found" and "no customer account uses" in page
    assert world.state_digest() == before


def test_without_the_worlds_tools_the_app_says_how_to_serve_it() -> None:
    status, _, text = request(None, "GET", "/tickets")
    assert status.startswith("500") and "agentenv-website" in text and "agentenv_helpdesk.web:app" in text
