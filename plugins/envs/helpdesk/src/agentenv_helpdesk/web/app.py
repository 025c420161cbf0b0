"""The support desk's web front end: a WSGI application that reads and writes the world through the helpdesk's tools.

It keeps no state of its own. Every page is rendered from tool results and every form posts to a tool, through the
`agentenv.contracts.ToolAccess` its host puts in `environ["agentenv.tools"]` (the `website` env of agentenv-website
gives it the world's tools as its role; any WSGI host that does the same works). So what a browser agent does on
these pages is what the helpdesk's tools would do, under the world's RBAC, triggers and trajectory, and a task is
graded on the world's own tables.

Links are relative to `SCRIPT_NAME`, so the site can be mounted under any prefix. A form that a tool refuses shows
the tool's message (naming the field) in an alert and changes nothing; one that succeeds redirects (303) to the
page it changed, with a notice.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlencode

from agentenv_helpdesk.web import pages

TOOLS_KEY = "agentenv.tools"
MAX_FORM_BYTES = 65_536
StartResponse = Callable[..., Any]


class Refused(Exception):
    """A tool refused the call: its error becomes the page's alert."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message") or error))
        self.error = error


class Request:
    """One request: its path inside the site, query and form fields, and the world's tools."""

    def __init__(self, environ: dict[str, Any]) -> None:
        self.tools = environ[TOOLS_KEY]
        self.base = environ.get("SCRIPT_NAME", "").rstrip("/")
        self.method = environ.get("REQUEST_METHOD", "GET").upper()
        self.path = environ.get("PATH_INFO", "") or "/"
        self.query = {key: values[-1] for key, values in parse_qs(environ.get("QUERY_STRING", "")).items()}
        self.form: dict[str, str] = {}
        if self.method == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            if length > MAX_FORM_BYTES:
                raise ValueError(f"form too large ({length} bytes; at most {MAX_FORM_BYTES})")
            body = environ["wsgi.input"].read(length).decode("utf-8", "replace") if length else ""
            self.form = {key: values[-1] for key, values in parse_qs(body, keep_blank_values=True).items()}

    def call(self, tool: str, **arguments: Any) -> Any:
        """The tool's result, or `Refused` with its error."""
        outcome = self.tools.call_tool(tool, arguments)
        if not outcome.get("ok"):
            raise Refused(outcome.get("error") or {"message": f"{tool} failed"})
        return outcome["result"]

    def link(self, path: str, **query: str) -> str:
        return f"{self.base}{path}" + (f"?{urlencode(query)}" if query else "")


Response = tuple[str, list[tuple[str, str]], bytes]
Handler = Callable[..., Response]


def html(request: Request, title: str, body: str, status: str = "200 OK") -> Response:
    page = pages.layout(request.base, title, body, notice=request.query.get("notice", ""))
    return status, [("Content-Type", "text/html; charset=utf-8")], page.encode("utf-8")


def redirect(request: Request, path: str, notice: str) -> Response:
    return "303 See Other", [("Location", request.link(path, notice=notice))], b""


# ---- pages ------------------------------------------------------------------------------------------------
def home(request: Request) -> Response:
    return "303 See Other", [("Location", request.link("/tickets"))], b""


def tickets(request: Request) -> Response:
    status = request.query.get("status") or None
    customer = (request.query.get("customer") or "").strip() or None
    alert = ""
    try:
        found = request.call("list_tickets", status=status, customer=customer, limit=200)
    except Refused as refused:
        found, alert = {"tickets": [], "total": 0}, str(refused)
    return html(request, "Tickets", pages.tickets(request.base, found, status or "", customer or "", alert))


def ticket(request: Request, ticket_id: str, alert: str = "", status: str = "200 OK") -> Response:
    found = request.call("get_ticket", ticket_id=ticket_id)
    staff = request.call("list_staff")["staff"]
    return html(request, f"{ticket_id}: {found['subject']}", pages.ticket(request.base, found, staff, alert), status)


def customers(request: Request) -> Response:
    wanted = (request.query.get("q") or "").strip()
    if not wanted:
        return html(request, "Customers", pages.customer_search(request.base, "", ""))
    field = "account_id" if wanted.upper().startswith("ACC-") else "email"
    try:
        account = request.call("lookup_account", **{field: wanted.upper() if field == "account_id" else wanted})
    except Refused as refused:
        return html(request, "Customers", pages.customer_search(request.base, wanted, str(refused)), "404 Not Found")
    return "303 See Other", [("Location", request.link(f"/customers/{account['account_id']}"))], b""


def customer(request: Request, account_id: str) -> Response:
    account = request.call("lookup_account", account_id=account_id)
    orders = request.call("list_orders", account_id=account_id)["orders"]
    opened = request.call("list_tickets", customer=account_id, limit=200)["tickets"]
    return html(request, account["name"], pages.customer(request.base, account, orders, opened))


def address(request: Request, account_id: str, alert: str = "", status: str = "200 OK") -> Response:
    account = request.call("lookup_account", account_id=account_id)
    values = request.form or account
    return html(request, f"Address of {account['name']}", pages.address(request.base, account, values, alert), status)


def order(request: Request, order_id: str, alert: str = "", status: str = "200 OK") -> Response:
    found = request.call("get_order", order_id=order_id)
    return html(request, f"Order {order_id}", pages.order(request.base, found, request.form, alert), status)


# ---- forms ------------------------------------------------------------------------------------------------
def submit(
    request: Request, tool: str, arguments: dict[str, Any], done: tuple[str, str], again: Callable[..., Response]
) -> Response:
    """Call `tool`; on success redirect to `done` (path, notice), else show `again(alert=…)` with status 422."""
    try:
        request.call(tool, **arguments)
    except Refused as refused:
        return again(alert=str(refused), status="422 Unprocessable Content")
    return redirect(request, *done)


def post_refund(request: Request, order_id: str) -> Response:
    form = request.form
    amount: Any = form.get("amount", "").strip()
    with contextlib.suppress(ValueError):  # text that is no number goes as it is: the tool's schema says why not
        amount = float(amount)
    arguments = {"order_id": order_id, "amount": amount, "reason": form.get("reason", "")}
    again = partial(order, request, order_id)
    return submit(request, "issue_refund", arguments, (f"/orders/{order_id}", f"Refunded {form.get('amount')}"), again)


def post_verify(request: Request, order_id: str) -> Response:
    arguments = {"order_id": order_id, "note": request.form.get("note", "")}
    again = partial(order, request, order_id)
    return submit(request, "verify_order", arguments, (f"/orders/{order_id}", "Order verified"), again)


def post_address(request: Request, account_id: str) -> Response:
    fields = ("street", "city", "postal_code", "country")
    arguments = {"account_id": account_id, **{field: request.form.get(field, "") for field in fields}}
    again = partial(address, request, account_id)
    return submit(request, "update_address", arguments, (f"/customers/{account_id}", "Address saved"), again)


def post_comment(request: Request, ticket_id: str) -> Response:
    public = request.form.get("visibility", "public") == "public"
    arguments = {"ticket_id": ticket_id, "body": request.form.get("body", ""), "public": public}
    again = partial(ticket, request, ticket_id)
    notice = "Reply sent" if public else "Internal note added"
    return submit(request, "add_ticket_comment", arguments, (f"/tickets/{ticket_id}", notice), again)


def post_escalate(request: Request, ticket_id: str) -> Response:
    arguments = {"ticket_id": ticket_id, "to": request.form.get("to", ""), "reason": request.form.get("reason", "")}
    again = partial(ticket, request, ticket_id)
    return submit(request, "escalate_ticket", arguments, (f"/tickets/{ticket_id}", "Ticket escalated"), again)


def post_close(request: Request, ticket_id: str) -> Response:
    arguments = {"ticket_id": ticket_id, "resolution": request.form.get("resolution", "")}
    again = partial(ticket, request, ticket_id)
    return submit(request, "close_ticket", arguments, (f"/tickets/{ticket_id}", "Ticket closed"), again)


ID = r"([A-Z]+-\d+)"
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    ("GET", re.compile(r"/"), home),
    ("GET", re.compile(r"/tickets"), tickets),
    ("GET", re.compile(rf"/tickets/{ID}"), ticket),
    ("POST", re.compile(rf"/tickets/{ID}/comment"), post_comment),
    ("POST", re.compile(rf"/tickets/{ID}/escalate"), post_escalate),
    ("POST", re.compile(rf"/tickets/{ID}/close"), post_close),
    ("GET", re.compile(r"/customers"), customers),
    ("GET", re.compile(rf"/customers/{ID}"), customer),
    ("GET", re.compile(rf"/customers/{ID}/address"), address),
    ("POST", re.compile(rf"/customers/{ID}/address"), post_address),
    ("GET", re.compile(rf"/orders/{ID}"), order),
    ("POST", re.compile(rf"/orders/{ID}/refund"), post_refund),
    ("POST", re.compile(rf"/orders/{ID}/verify"), post_verify),
]


def route(request: Request) -> Response:
    allowed = []
    for method, pattern, handler in ROUTES:
        matched = pattern.fullmatch(request.path)
        if matched is None:
            continue
        if method != request.method:
            allowed.append(method)
            continue
        try:
            return handler(request, *matched.groups())
        except Refused as refused:  # a page whose record does not exist (an unknown id in the URL)
            code = "404 Not Found" if refused.error.get("code") == "not_found" else "422 Unprocessable Content"
            return html(
                request, "Not found" if code.startswith("404") else "Refused", pages.problem(str(refused)), code
            )
    if allowed:
        return "405 Method Not Allowed", [("Allow", ", ".join(allowed)), ("Content-Type", "text/plain")], b"method"
    return html(request, "Not found", pages.problem(f"No page at {request.path}."), "404 Not Found")


def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """The WSGI entry point (`agentenv_helpdesk.web:app`)."""
    if TOOLS_KEY not in environ:
        message = (
            f"environ[{TOOLS_KEY!r}] is missing: serve this app with agentenv-website's `website` env "
            "(settings.app = 'agentenv_helpdesk.web:app'), which hands it the world's tools"
        )
        start_response("500 Internal Server Error", [("Content-Type", "text/plain; charset=utf-8")])
        return [message.encode()]
    try:
        request = Request(environ)
    except ValueError as exc:
        start_response("413 Content Too Large", [("Content-Type", "text/plain; charset=utf-8")])
        return [str(exc).encode()]
    status, headers, body = route(request)
    start_response(status, [*headers, ("Content-Length", str(len(body))), ("Cache-Control", "no-store")])
    return [body]
