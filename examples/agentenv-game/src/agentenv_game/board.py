"""Connect-four rules on a plain grid, free of any agentenv type, so the env and its scripted opponent share them.

The grid is a list of columns, each a list of the players' discs from the bottom up. A player wins with
`connect` discs in a row: horizontally, vertically or diagonally.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PLAYERS = ("red", "yellow")
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


@dataclass
class Board:
    rows: int = 6
    columns: int = 7
    connect: int = 4
    grid: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.grid:
            self.grid = [[] for _ in range(self.columns)]

    @property
    def moves(self) -> int:
        return sum(len(column) for column in self.grid)

    @property
    def to_move(self) -> str:
        """Red moves first; then the players alternate."""
        return PLAYERS[self.moves % 2]

    def legal(self) -> list[int]:
        return [c for c in range(self.columns) if len(self.grid[c]) < self.rows]

    def drop(self, column: int, player: str) -> int:
        """Put `player`'s disc into `column`; returns the row it lands on (0 = bottom)."""
        self.grid[column].append(player)
        return len(self.grid[column]) - 1

    def undo(self, column: int) -> None:
        self.grid[column].pop()

    def at(self, column: int, row: int) -> str | None:
        if 0 <= column < self.columns and 0 <= row < len(self.grid[column]):
            return self.grid[column][row]
        return None

    def wins(self, column: int, row: int) -> bool:
        """Whether the disc at (column, row) completes a line of `connect`."""
        player = self.at(column, row)
        if player is None:
            return False
        for dc, dr in DIRECTIONS:
            count = 1
            for sign in (1, -1):
                c, r = column + sign * dc, row + sign * dr
                while self.at(c, r) == player:
                    count, c, r = count + 1, c + sign * dc, r + sign * dr
            if count >= self.connect:
                return True
        return False

    def winning_move(self, player: str) -> int | None:
        """A column where `player` would win at once, if any (lowest column first)."""
        for column in self.legal():
            row = self.drop(column, player)
            won = self.wins(column, row)
            self.undo(column)
            if won:
                return column
        return None

    def picture(self) -> list[str]:
        """The board top row first: `R` red, `Y` yellow, `.` empty."""
        lines = []
        for row in reversed(range(self.rows)):
            lines.append("".join((self.at(c, row) or ".")[0].upper() for c in range(self.columns)))
        return lines


def bot_choice(board: Board) -> int:
    """The scripted opponent: win if it can, block an immediate win, else the most central column that does
    not hand the other side a win on top of it. Deterministic, so a match replays exactly."""
    me = board.to_move
    other = PLAYERS[1 - PLAYERS.index(me)]
    for player in (me, other):
        column = board.winning_move(player)
        if column is not None:
            return column
    centre = board.columns // 2
    preference = sorted(board.legal(), key=lambda c: (abs(c - centre), c))
    for column in preference:
        board.drop(column, me)
        gives_away = board.winning_move(other) is not None
        board.undo(column)
        if not gives_away:
            return column
    return preference[0]
