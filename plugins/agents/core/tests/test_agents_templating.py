"""The `{{ dotted.path }}` templating shared by the scripted agent and steps."""

from __future__ import annotations

import pytest
from agentenv_agents.templating import TemplateError, as_text, render, resolve, template_paths

CONTEXT = {
    "account": {"account_id": "ACC-1001", "vip": True, "credit": None},
    "orders": [{"order_id": "ORD-5001", "total": 129.99}, {"order_id": "ORD-5002", "total": 20.0}],
    "prompt": "refund please",
    "turn": 0,
}


def test_whole_template_keeps_the_type() -> None:
    assert render("{{ orders.0.total }}", CONTEXT) == 129.99
    assert render("{{orders}}", CONTEXT) == CONTEXT["orders"]
    assert render("  {{ account.vip }} ", CONTEXT) is True
    assert render("{{ turn }}", CONTEXT) == 0
    assert render("{{ orders.-1.order_id }}", CONTEXT) == "ORD-5002"


def test_embedded_templates_become_text() -> None:
    assert render("Order {{ orders.1.order_id }} of {{ account.account_id }}", CONTEXT) == "Order ORD-5002 of ACC-1001"
    assert render("vip={{ account.vip }} credit={{ account.credit }} total={{ orders.0.total }}", CONTEXT) == (
        "vip=true credit=null total=129.99"
    )
    assert render("{{ turn }}{{ turn }}", CONTEXT) == "00"
    assert as_text({"a": [1]}) == '{"a": [1]}'


def test_render_walks_dicts_and_lists_and_leaves_other_values() -> None:
    value = {"ids": ["{{ orders.0.order_id }}", 7, None], "nested": {"who": "{{ account.account_id }}"}, "n": 1.5}
    assert render(value, CONTEXT) == {"ids": ["ORD-5001", 7, None], "nested": {"who": "ACC-1001"}, "n": 1.5}
    assert render("no templates } here {", CONTEXT) == "no templates } here {"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ acount.account_id }}", "unknown name 'acount' (available: account, orders, prompt, turn)"),
        ("{{ account.email }}", "account has no key 'email' (keys: account_id, credit, vip)"),
        ("{{ orders.5.order_id }}", "orders has 2 item(s); index 5 is out of range"),
        ("{{ orders.first }}", "orders is a list; index it with a number, not 'first'"),
        ("{{ turn.x }}", "turn is int 0; it has no part 'x'"),
    ],
)
def test_unknown_paths_name_the_template_and_what_exists(template: str, expected: str) -> None:
    with pytest.raises(TemplateError) as caught:
        render({"args": {"x": template}}, CONTEXT, "call")
    message = str(caught.value)
    assert message.startswith(f"call.args.x: template '{template}': ")
    assert message.endswith(expected)


def test_resolve_directly() -> None:
    assert resolve("orders.1.total", CONTEXT) == 20.0
    with pytest.raises(TemplateError, match="unknown name 'nope'"):
        resolve("nope", {})


def test_template_paths_finds_every_path_with_its_location() -> None:
    value = {"a": "{{ x.y }} and {{ z }}", "b": ["{{ w.0 }}"], "c": 3}
    assert template_paths(value, "args") == [("args.a", "x.y"), ("args.a", "z"), ("args.b[0]", "w.0")]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{{ }}", "is not a dotted path"),
        ("{{ a b }}", "is not a dotted path"),
        ("{{ a..b }}", "is not a dotted path"),
        ("{{ 0.a }}", "is not a dotted path"),
        ("hello {{ name", "without a closing"),
    ],
)
def test_bad_syntax_is_refused(text: str, problem: str) -> None:
    with pytest.raises(TemplateError, match=problem) as caught:
        template_paths({"k": text}, "say")
    assert str(caught.value).startswith("say.k: ")
    with pytest.raises(TemplateError, match=problem):
        render(text, {"a": 1, "name": "x"})
