"""The connect4 env: the conformance kit, the rules, and one move tool whose call context names the player."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentenv_game.board import Board, bot_choice
from agentenv_game.env import ConnectFourEnv
from agentenv_runtime import CALL_CONTEXT, ToolContext, World
from agentenv_testing.envs import EnvConformance

ROLES = {
    "red": {"tools": ["view_board", "legal_moves", "drop"]},
    "yellow": {"tools": ["view_board", "legal_moves", "drop"]},
}


def drop(env: ConnectFourEnv, role: str | None, column: Any) -> tuple[Any, dict[str, Any] | None]:
    """`drop` as `role` would call it through a world (which sets the call's context)."""
    token = CALL_CONTEXT.set(ToolContext(role=role, now=datetime.now(UTC)))
    try:
        return env.call("drop", {"column": column})
    finally:
        CALL_CONTEXT.reset(token)


class TestConnectFourConformance(EnvConformance):
    env_class = ConnectFourEnv


def play(env: ConnectFourEnv, *columns: int) -> list[dict[str, object]]:
    """Alternate red and yellow moves; every one must be accepted."""
    results = []
    for index, column in enumerate(columns):
        result, error = drop(env, "red" if index % 2 == 0 else "yellow", column)
        assert error is None, error
        results.append(result)
    return results


def test_four_in_a_row_wins_and_ends_the_game() -> None:
    env = ConnectFourEnv()
    *_, last = play(env, 0, 6, 1, 6, 2, 6, 3)
    assert last["status"] == "red_won"
    assert env.query("SELECT status, last_seq FROM outcome") == [{"status": "red_won", "last_seq": 7}]
    _, error = drop(env, "yellow", 5)
    assert error is not None and error["code"] == "game_over"


def test_vertical_and_diagonal_lines_win() -> None:
    vertical = ConnectFourEnv()
    assert play(vertical, 2, 3, 2, 3, 2, 3, 2)[-1]["status"] == "red_won"
    diagonal = ConnectFourEnv()
    # red climbs 0,1,2,3 diagonally; yellow fills below
    assert play(diagonal, 0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3)[-1]["status"] == "red_won"


def test_a_full_board_without_a_line_is_a_draw() -> None:
    env = ConnectFourEnv({"rows": 4, "columns": 4, "connect": 4})
    # found by search: sixteen moves, no line of four
    order = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 3]
    assert play(env, *order)[-1]["status"] == "draw"


def test_illegal_moves_are_refused_and_change_nothing() -> None:
    env = ConnectFourEnv({"rows": 4, "columns": 5, "connect": 4})
    play(env, 0, 0, 0, 0)
    before = env.export()
    _, full = drop(env, "red", 0)
    assert full is not None and (full["code"], full["field"]) == ("illegal_move", "column")
    _, outside = drop(env, "red", 5)
    assert outside is not None and outside["code"] == "illegal_move" and "0..4" in outside["message"]
    _, turn = drop(env, "yellow", 1)
    assert turn is not None and turn["code"] == "not_your_turn"
    _, bad = drop(env, "red", -1)
    assert bad is not None and bad["code"] == "invalid_arguments"
    assert env.export() == before


def test_one_move_tool_plays_the_callers_colour() -> None:
    world = World([ConnectFourEnv()], roles=ROLES)
    assert set(world.tool_names("red")) == set(world.tool_names("yellow")) == {"view_board", "legal_moves", "drop"}
    assert world.call("drop", {"column": 3}, role="red").result["player"] == "red"
    early = world.call("drop", {"column": 3}, role="red")
    assert early.error is not None and early.error["code"] == "not_your_turn"
    assert world.call("drop", {"column": 4}, role="yellow").result["player"] == "yellow"
    assert world.call("bot_move", {}, role="red").error is not None


def test_a_caller_that_plays_no_side_is_refused() -> None:
    env = ConnectFourEnv()
    for role in (None, "system"):
        _, error = drop(env, role, 0)
        assert error is not None and error["code"] == "not_a_player", error
    assert env.query("SELECT COUNT(*) AS n FROM moves") == [{"n": 0}]
    assert "context" not in ConnectFourEnv.tool_specs()["drop"].input_schema["properties"]


def test_a_trigger_makes_the_bot_answer_every_red_move() -> None:
    world = World([ConnectFourEnv()], roles=ROLES)
    world.add_trigger(
        {
            "id": "bot",
            "kind": "tool_call",
            "when": {"tool": "drop", "role": "red"},
            "repeat": True,
            "actions": [{"call_tool": {"tool": "bot_move", "role": "system"}}],
        }
    )
    world.call("drop", {"column": 0}, role="red")
    world.call("drop", {"column": 1}, role="red")
    board = world.call("view_board", {}, role="red").result
    assert board["moves"] == 4 and board["to_move"] == "red"


def test_the_bot_wins_when_it_can_and_blocks_when_it_must() -> None:
    threat = Board()
    for column, player in ((0, "red"), (6, "yellow"), (1, "red"), (6, "yellow"), (2, "red")):
        threat.drop(column, player)
    assert bot_choice(threat) == 3  # blocks red's 0-1-2-3
    both = Board()
    for column, player in ((0, "red"), (6, "yellow"), (1, "red"), (6, "yellow"), (2, "red"), (6, "yellow"), (5, "red")):
        both.drop(column, player)
    assert bot_choice(both) == 6  # yellow's own win comes before blocking


def test_openings_load_as_artifacts() -> None:
    env = ConnectFourEnv()
    env.load(env.find_artifact("edge"))
    assert env.call("view_board", {})[0]["rows"][-1] == "R..Y..."
    assert sorted(ConnectFourEnv.artifact_paths()) == ["center", "edge"]
