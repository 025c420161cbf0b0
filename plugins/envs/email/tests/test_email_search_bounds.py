"""Issue 16: very long or many-word searches were SQLite errors (HTTP 500 when served); now clear refusals."""

from __future__ import annotations

from agentenv_runtime import build_world


def test_long_and_many_word_searches_are_refused_with_the_field() -> None:
    world = build_world("email", artifacts=["acme"])
    long = world.call("search_emails", {"query": "x" * 60_000})
    assert long.error is not None and long.error["code"] == "invalid_arguments"
    many = world.call("search_emails", {"query": " ".join(["word"] * 5_000)})
    assert many.error is not None and many.error["code"] == "invalid_arguments"
    words = world.call("search_emails", {"query": " ".join(f"w{i}" for i in range(40))})
    assert words.error is not None and words.error["field"] == "query" and "at most 32" in words.error["message"]
    assert world.call("search_emails", {"query": "refund boots"}).ok
