"""A tiny third-party MCP server (official SDK, stdio) for the upstream tests.

Run as a script: `python upstream_server.py`. Its `get_ticket` deliberately shares a name with the
helpdesk tool, so the gateway has to prefix it.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("weather-desk")
CALLS: list[str] = []


@server.tool()
def get_forecast(city: str, days: int = 1) -> dict:
    """Forecast for a city.

    Args:
        city: City name, e.g. Portland.
        days: How many days ahead (1-7).
    """
    if not 1 <= days <= 7:
        raise ToolError("days must be between 1 and 7")
    CALLS.append(city)
    return {"city": city, "days": days, "summary": f"rain in {city}", "calls": len(CALLS)}


@server.tool()
def get_ticket(ticket_id: str) -> str:
    """The weather desk's own ticket, by id."""
    return f"weather ticket {ticket_id}: umbrella shortage"


if __name__ == "__main__":
    server.run("stdio")
