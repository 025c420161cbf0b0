"""The simulated customer (τ²'s conventions) and the RL API on simulated-user tasks: `say` gets the user's reply,
the user's stop token (or `answer`) ends and grades the episode, forks keep their own conversation."""

from __future__ import annotations

import asyncio

import pytest
from agentenv_rl.api import EpisodeError, LocalEpisodes, make
from agentenv_tau2.api import retail_task
from agentenv_tau2.usersim import OUT_OF_SCOPE, STOP, TRANSFER, ScriptedSession, opening_message, user_prompt


def test_the_scripted_customer_follows_tau2s_conventions() -> None:
    task = retail_task("0")
    session = ScriptedSession(task)
    opening = asyncio.run(session.opening())
    assert opening == opening_message(task) and "#W2378156" in opening and "Yusuf Rossi" in opening
    assert (
        asyncio.run(session.reply("Could you verify your identity with your email?"))
        == "You are Yusuf Rossi in zip code 19122."
    )
    assert asyncio.run(session.reply("Shall I proceed with the exchange (yes/no)?")) == "Yes, please go ahead."
    assert not session.done
    assert asyncio.run(session.reply("Done. Is there anything else I can help you with?")) == STOP
    assert session.done
    assert asyncio.run(ScriptedSession(task).reply("I am transferring you to a human agent now.")) == TRANSFER
    assert asyncio.run(ScriptedSession(task).reply("What is the weather like?")) == OUT_OF_SCOPE


def test_the_llm_customer_prompt_carries_the_scenario_and_the_tokens() -> None:
    prompt = user_prompt(retail_task("0"))
    for text in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###", "#W2378156", "do not remember your email"):
        assert text in prompt


def test_an_rl_episode_talks_with_the_customer_and_is_graded_when_it_stops() -> None:
    task = retail_task("0")
    episode = make("tau2-retail:0")
    try:
        observation, _ = episode.reset()
        assert observation["prompt"] == opening_message(task)
        result = episode.step({"say": "Can I have your name and zip code?"})
        assert result.observation == {
            "type": "user_message",
            "text": "You are Yusuf Rossi in zip code 19122.",
            "done": False,
        }
        assert (result.reward, result.terminated) == (0.0, False)
        fork = episode.fork()
        for action in task.gold_actions:
            episode.step({"tool": action.name, "arguments": action.arguments})
        result = episode.step({"say": "Both items are exchanged. Is there anything else?"})
        assert result.observation["text"] == STOP and result.terminated and result.reward == 1.0
        assert result.info["verifiers"]["grade"]["tau2"]["components"] == {"DB": 1.0, "NL_ASSERTION": 1.0}
        assert fork.step({"answer": "Goodbye."}).reward == 0.0  # the fork's own conversation, without the writes
        with pytest.raises(EpisodeError, match="exactly one of"):
            episode.reset()
            episode.step({"say": "hi", "answer": "bye"})
    finally:
        episode.close()


def test_vector_episodes_have_a_conversation_each() -> None:
    batch = LocalEpisodes("tau2-retail:0", 3)
    try:
        batch.reset()
        replies = batch.step([{"say": "Your email, please?"}, None, {"say": "Is there anything else?"}])
        assert replies[1] is None
        assert replies[0] is not None and replies[0].observation["text"].startswith("You are Yusuf Rossi")
        assert replies[2] is not None and replies[2].observation["text"] == STOP and replies[2].terminated
    finally:
        batch.close()


def test_say_on_a_task_without_a_simulated_user_is_refused() -> None:
    episode = make("hello")
    try:
        episode.reset()
        with pytest.raises(EpisodeError, match="no simulated user"):
            episode.step({"say": "hi"})
    finally:
        episode.close()
