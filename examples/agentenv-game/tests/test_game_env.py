"""The connect4 env: the conformance kit, the rules, and one move tool per player through RBAC."""

from __future__ import annotations

from agentenv_game.board import Board, bot_choice
from agentenv_game.env import ConnectFourEnv
from agentenv_runtime import World
from agentenv_testing.envs import EnvConformance

ROLES = {
    "red": {"tools": ["view_board", "legal_moves", "drop_red"]},
    "yellow": {"tools": ["view_board", "legal_moves", "drop_yellow"]},
}


class TestConnectFourConformance(EnvConformance):
    env_class = ConnectFourEnv


def play(env: ConnectFourEnv, *columns: int) -> list[dict[str, object]]:
    """Alternate red and yellow moves; every one must be accepted."""
    results = []
    for index, column in enumerate(columns):
        result, error = env.call("drop_red" if index % 2 == 0 else "drop_yellow", {"column": column})
        assert error is None, error
        results.append(result)
    return results


def test_four_in_a_row_wins_and_ends_the_game() -> None:
    env = ConnectFourEnv()
    *_, last = play(env, 0, 6, 1, 6, 2, 6, 3)
    assert last["status"] == "red_won"
    assert env.query("SELECT status, last_seq FROM outcome") == [{"status": "red_won", "last_seq": 7}]
    _, error = env.call("drop_yellow", {"column": 5})
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
    _, full = env.call("drop_red", {"column": 0})
    assert full is not None and (full["code"], full["field"]) == ("illegal_move", "column")
    _, outside = env.call("drop_red", {"column": 5})
    assert outside is not None and outside["code"] == "illegal_move" and "0..4" in outside["message"]
    _, turn = env.call("drop_yellow", {"column": 1})
    assert turn is not None and turn["code"] == "not_your_turn"
    _, bad = env.call("drop_red", {"column": -1})
    assert bad is not None and bad["code"] == "invalid_arguments"
    assert env.export() == before


def test_each_player_sees_and_may_call_only_its_own_move_tool() -> None:
    world = World([ConnectFourEnv()], roles=ROLES)
    assert set(world.tool_names("red")) == {"view_board", "legal_moves", "drop_red"}
    assert set(world.tool_names("yellow")) == {"view_board", "legal_moves", "drop_yellow"}
    refused = world.call("drop_yellow", {"column": 3}, role="red")
    assert refused.error is not None and refused.error["code"] == "forbidden"
    assert world.call("bot_move", {}, role="red").error is not None
    assert world.call("drop_red", {"column": 3}, role="red").ok


def test_a_trigger_makes_the_bot_answer_every_red_move() -> None:
    world = World([ConnectFourEnv()], roles=ROLES)
    world.add_trigger(
        {
            "id": "bot",
            "kind": "tool_call",
            "when": {"tool": "drop_red", "role": "red"},
            "repeat": True,
            "actions": [{"call_tool": {"tool": "bot_move", "role": "system"}}],
        }
    )
    world.call("drop_red", {"column": 0}, role="red")
    world.call("drop_red", {"column": 1}, role="red")
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
