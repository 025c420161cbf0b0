"""The browser env behind the RL episode API: `make("web-desk:…")` runs the task's setup once; `reset()` puts the
world back and starts a fresh browser context on it; `fork()` gives an episode whose world is a copy, with its own
site and its own fresh context; each is graded by the task's verifiers on its own world's state."""

from __future__ import annotations

from typing import Any

from agentenv_rl.api import make


def act(episode: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    observation, reward, terminated, truncated, _ = episode.step({"tool": tool, "arguments": arguments})
    assert observation["ok"], observation
    assert (reward, terminated, truncated) == (0.0, False, False)
    return observation["result"]  # type: ignore[no-any-return]


def click(episode: Any, text: str, role: str) -> dict[str, Any]:
    return act(episode, "click", element=act(episode, "find", text=text, role=role)["element"])


def fill(episode: Any, label: str, text: str) -> None:
    act(episode, "type", element=act(episode, "find", text=label, role="textbox")["element"], text=text)


def open_the_order(episode: Any) -> str:
    click(episode, "TCK-9001", "link")
    return click(episode, "ORD-5001", "link")["url"]  # type: ignore[no-any-return]


def refund(episode: Any, amount: str) -> None:
    fill(episode, "Amount", amount)
    fill(episode, "Reason", "Boots arrived damaged")
    click(episode, "Issue refund", "button")


def test_episodes_reset_and_fork_onto_fresh_browser_contexts(chromium: str) -> None:
    episode = make("web-desk:refund-damaged-item")
    try:
        observation, _ = episode.reset()
        assert {t["name"] for t in observation["tools"]} >= {"goto", "find", "click", "type", "screenshot"}
        assert "issue_refund" not in {t["name"] for t in observation["tools"]}  # the browser is the only way in
        start = act(episode, "snapshot")["url"]
        assert start.startswith("http://127.0.0.1:") and start.endswith("/tickets")
        order = open_the_order(episode)

        fork = episode.fork()
        forked_start = act(fork, "snapshot")["url"]
        assert forked_start.endswith("/tickets") and forked_start != start  # a fresh context, on the fork's own site
        assert act(episode, "snapshot")["url"] == order  # the parent's page is where it was
        assert open_the_order(fork) != order
        refund(fork, "89.99")
        result = fork.step({"answer": "Refunded the boots."})
        assert (result.reward, result.terminated, result.info["score"]) == (1.0, True, 1.0)
        assert "No refunds yet." in act(episode, "snapshot")["tree"]  # the fork's refund is the fork's alone

        refund(episode, "129.99")  # the wrong amount, in the parent
        result = episode.step({"answer": "Refunded the order."})
        assert result.terminated and result.reward < 1.0

        episode.reset()  # the start state, and a fresh context on it
        again = act(episode, "snapshot")
        assert again["url"] == start and "TCK-9001" in again["tree"]
        open_the_order(episode)
        assert "No refunds yet." in act(episode, "snapshot")["tree"]  # the wrong refund was undone with the world
        refund(episode, "89.99")
        assert episode.step({"answer": "Refunded the boots."}).reward == 1.0
    finally:
        episode.close()
