"""Scores a connect-four match for red: 1.0 for a win, 0.5 for a draw, 0 for a loss or an unfinished game."""

from __future__ import annotations

from typing import Any

SCORES = {"red_won": 1.0, "draw": 0.5, "yellow_won": 0.0}


def verify(world: Any) -> list[dict[str, Any]]:
    rows = world.query("connect4", "SELECT status, last_seq FROM outcome")
    status = rows[0]["status"] if rows else "playing"
    moves = world.query("connect4", "SELECT COUNT(*) AS n FROM moves WHERE player = 'red'")[0]["n"]
    return [
        {
            "criterion": "red won the match",
            "passed": status == "red_won",
            "score": SCORES.get(status, 0.0),
            "detail": f"status {status} after {moves} red moves",
        }
    ]
