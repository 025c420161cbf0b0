"""The `snapshot` tool's page tree: what a person sees, one element a line, each with an id to act on.

The script walks the rendered DOM (skipping what is hidden), gives each element it lists a stable
`data-agentenv-id` (kept across snapshots of the same page, so ids an agent saw stay valid), and writes lines
such as `[7] button "Refund"` or `[9] textbox "Amount" value="12.50"`, indented by nesting. Interactive
elements, headings and elements with their own text are listed; layout wrappers are not.
"""

from __future__ import annotations

from importlib.resources import files

ID_ATTRIBUTE = "data-agentenv-id"
MAX_LINES = 2000

SCRIPT = files("agentenv_browser").joinpath("page_tree.js").read_text(encoding="utf-8")
"""Called with [max lines, id attribute]; returns the tree as text."""
