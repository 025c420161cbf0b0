"""A leaf env written with the reference SDK (`agentenv_protocol`), with the data plane: a table of notes.

Run in the reference venv of `tests/test_reference_interop.py`: `python notes_server.py` (MCP_HOST, MCP_PORT).
"""
from typing import Annotated

from agentenv_protocol import AgentEnvEnvironment, DataPart, add_data, environment_card, get_data, reset_data, tool
from pydantic import Field

NOTES: dict[str, list[dict]] = {"notes": []}


@environment_card(name="notes")
class NotesEnv(AgentEnvEnvironment):
    @tool(name="add_note")
    def add_note(self, text: Annotated[str, Field(description="The note's text.")]) -> str:
        """Add a note."""
        NOTES["notes"].append({"id": len(NOTES["notes"]) + 1, "text": text})
        return "ok"

    @reset_data
    def reset(self) -> None:
        NOTES["notes"].clear()

    @add_data
    def add(self, parts: list) -> None:
        for part in parts:
            for table, rows in part.data.items():
                if table not in NOTES:
                    raise ValueError(f"no table {table!r}")
                NOTES[table].extend(rows)

    @get_data
    def get(self) -> list:
        return [DataPart(data={"notes": list(NOTES["notes"])})]


if __name__ == "__main__":
    NotesEnv().serve()
