"""The `connect4` env: a two-player board game whose state is the list of moves in SQLite.

Both sides play with one tool, `drop`: the call's context says which role is calling, and that role is the
colour it plays. `bot_move` plays the side whose turn it is with a fixed strategy; a task wires it to a trigger
so the scripted opponent answers every move of the agent. Seeded openings are artifacts (rows of `moves`).
"""

from __future__ import annotations

from typing import Annotated, Any

from agentenv_runtime import Env, ToolContext, ToolError, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_game.board import PLAYERS, Board, bot_choice

SCHEMA = """
CREATE TABLE moves (
    seq INTEGER PRIMARY KEY,
    player TEXT NOT NULL CHECK (player IN ('red', 'yellow')),
    col INTEGER NOT NULL,
    row INTEGER NOT NULL,
    played_at TEXT
);
CREATE TABLE outcome (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    status TEXT NOT NULL CHECK (status IN ('red_won', 'yellow_won', 'draw')),
    last_seq INTEGER NOT NULL,
    decided_at TEXT
);
"""
Column = Annotated[int, Field(ge=0, le=19, description="Column index, 0 = leftmost.")]


class ConnectFourSettings(BaseModel):
    """Board size and line length; every task may choose its own (`deploy_env` `settings.connect4`)."""

    model_config = ConfigDict(extra="forbid")

    rows: int = Field(6, ge=4, le=20)
    columns: int = Field(7, ge=4, le=20)
    connect: int = Field(4, ge=3, le=6)


class ConnectFourEnv(Env[ConnectFourSettings]):
    """Connect-four for two players, red and yellow: drop discs into columns, four in a row wins."""

    name = "connect4"
    schema = SCHEMA
    Settings = ConnectFourSettings

    # ---- state ---------------------------------------------------------------------------------------
    def board(self) -> Board:
        options = self.settings
        board = Board(options.rows, options.columns, options.connect)
        for row in self.db.execute("SELECT player, col FROM moves ORDER BY seq"):
            board.drop(row["col"], row["player"])
        return board

    def status(self) -> str:
        row = self.db.execute("SELECT status FROM outcome").fetchone()
        return str(row["status"]) if row else "playing"

    def _play(self, player: str, column: int) -> dict[str, Any]:
        status = self.status()
        if status != "playing":
            raise ToolError(f"the game is over ({status}); no more moves", code="game_over")
        board = self.board()
        if board.to_move != player:
            raise ToolError(f"it is {board.to_move}'s turn, not {player}'s", code="not_your_turn")
        if column >= board.columns:
            raise ToolError(
                f"column {column} does not exist (0..{board.columns - 1})", code="illegal_move", field="column"
            )
        if column not in board.legal():
            raise ToolError(f"column {column} is full; legal: {board.legal()}", code="illegal_move", field="column")
        row = board.drop(column, player)
        now = self.now().isoformat()
        seq = board.moves
        self.db.execute(
            "INSERT INTO moves (seq, player, col, row, played_at) VALUES (?, ?, ?, ?, ?)",
            (seq, player, column, row, now),
        )
        if board.wins(column, row):
            status = f"{player}_won"
        elif not board.legal():
            status = "draw"
        if status != "playing":
            self.db.execute(
                "INSERT INTO outcome (id, status, last_seq, decided_at) VALUES (1, ?, ?, ?)", (status, seq, now)
            )
        return {"player": player, "column": column, "row": row, "move": seq, "status": status}

    # ---- tools -----------------------------------------------------------------------------------------
    @tool(read_only=True)
    def view_board(self) -> dict[str, Any]:
        """The board (top row first: R red, Y yellow, . empty), whose turn it is, and the game's status."""
        board = self.board()
        return {
            "rows": board.picture(),
            "to_move": board.to_move,
            "status": self.status(),
            "moves": board.moves,
            "legal_columns": board.legal(),
        }

    @tool(read_only=True)
    def legal_moves(self) -> list[int]:
        """The columns that still have room (empty when the game is over)."""
        return self.board().legal() if self.status() == "playing" else []

    @tool
    def drop(self, column: Column, context: ToolContext) -> dict[str, Any]:
        """Drop a disc of your colour into a column: red's role plays red, yellow's role plays yellow.

        Args:
            column: Column index, 0 = leftmost.
        """
        if context.role not in PLAYERS:
            sides = " and ".join(PLAYERS)
            raise ToolError(f"role {context.role!r} plays no side; the players' roles are {sides}", code="not_a_player")
        return self._play(context.role, column)

    @tool
    def bot_move(self) -> dict[str, Any]:
        """The scripted opponent plays the side to move: win, block, else the most central safe column."""
        if self.status() != "playing":
            return {"played": False, "status": self.status()}
        board = self.board()
        return {"played": True, **self._play(board.to_move, bot_choice(board))}


__all__ = ["PLAYERS", "ConnectFourEnv", "ConnectFourSettings"]
