"""Scripted solutions of MiniWoB++ tasks, and a deliberately wrong action sequence for each.

A solution reads what any text agent reads, the `goal` and the `snapshot` tree (`[7] button "ok"`), and acts
only with the env's tools; nothing reads the page's script or its answer. Each task's `wrong` sequence is a
plausible mistake (the other button, a typo, the complement of the checkboxes, no drag) that MiniWoB grades as
it grades any attempt. Both are played by the `miniwob-solver` and `miniwob-wrong` agents, by the tests, and
by the agreement test, which plays the very same calls in BrowserGym's own environment.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentenv.contracts import ToolAccess

LINE = re.compile(r'^(?P<indent> *)\[(?P<id>\d+)\] (?P<role>\S+) "(?P<name>[^"]*)"(?P<rest>.*)$')
QUOTED = re.compile(r'"([^"]*)"')
OUTSIDE = (300.0, 100.0)
"""A viewport point right of the 160-pixel task area, where a click does nothing."""


class SolveError(RuntimeError):
    """A solution met a page it cannot act on (a tool failed, an element it needs is missing)."""


@dataclass(frozen=True)
class Node:
    """One line of a snapshot tree."""

    id: int
    depth: int
    role: str
    name: str
    rest: str

    @property
    def checked(self) -> bool:
        return self.rest.startswith(" checked")


def parse_tree(tree: str) -> list[Node]:
    """The snapshot's lines as nodes (lines that are not elements are skipped)."""
    nodes = []
    for line in tree.splitlines():
        found = LINE.match(line)
        if found:
            depth = len(found["indent"]) // 2
            nodes.append(Node(int(found["id"]), depth, found["role"], found["name"], found["rest"]))
    return nodes


class Page:
    """What a solution works with: the episode's goal, snapshots, and the env's tools by name."""

    def __init__(self, tools: ToolAccess) -> None:
        self.tools = tools
        start = self.call("goal")
        self.task: str = start["task"]
        self.goal: str = start["goal"]

    def call(self, tool: str, **arguments: Any) -> Any:
        outcome = self.tools.call_tool(tool, arguments)
        if not outcome.get("ok"):
            raise SolveError(f"{tool}({arguments}) failed: {outcome.get('error')}")
        return outcome["result"]

    def quoted(self) -> list[str]:
        """The goal's quoted strings, in order (`Enter "Kenda" …` → ["Kenda"])."""
        return QUOTED.findall(self.goal)

    def nodes(self) -> list[Node]:
        return parse_tree(self.call("snapshot")["tree"])

    def click(self, node: Node) -> None:
        self.call("click", element=node.id)

    def type(self, node: Node, text: str) -> None:
        self.call("type", element=node.id, text=text)

    def select(self, node: Node, option: str) -> None:
        self.call("select", element=node.id, option=option)

    def drag(self, node: Node, onto: Node) -> None:
        self.call("drag", element=node.id, target=onto.id)

    def click_at(self, x: float, y: float) -> None:
        self.call("mouse_click", x=x, y=y)

    def drag_by(self, x: float, y: float, to_x: float, to_y: float) -> None:
        self.call("mouse_drag", x=x, y=y, to_x=to_x, to_y=to_y)

    def key(self, key: str) -> None:
        self.call("key", key=key)

    def box(self, node: Node) -> Box:
        found = self.call("locate", element=node.id)
        return Box(found["x"], found["y"], found["width"], found["height"])


@dataclass(frozen=True)
class Box:
    """An element's box on the screen (viewport pixels)."""

    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2

    def covers(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.width and self.y <= y <= self.y + self.height

    def uncovered_point(self, over: Box) -> tuple[float, float] | None:
        """A point of this box that `over` does not cover (on a 2-pixel grid, inset by 2), if any."""
        for dy in range(2, int(self.height) - 1, 2):
            for dx in range(2, int(self.width) - 1, 2):
                if not over.covers(self.x + dx, self.y + dy):
                    return self.x + dx, self.y + dy
        return None


def find(nodes: list[Node], role: str, name: str | None = None) -> list[Node]:
    return [n for n in nodes if n.role == role and (name is None or n.name == name)]


def one(nodes: list[Node], role: str, name: str | None = None) -> Node:
    found = find(nodes, role, name)
    if not found:
        raise SolveError(f"no {role} {name!r} on the page" if name is not None else f"no {role} on the page")
    return found[0]


def other(nodes: list[Node], role: str, name: str) -> Node | None:
    """The first `role` element not named `name` (for a wrong choice), if any."""
    return next((n for n in nodes if n.role == role and n.name != name), None)


def submit(page: Page, nodes: list[Node], label: str = "Submit") -> None:
    page.click(one(nodes, "button", label))


# ---- the tasks ---------------------------------------------------------------------------------------
def click_test(page: Page, wrong: bool) -> None:
    if wrong:
        page.click_at(*OUTSIDE)  # beside the task: the button is never pressed
    else:
        page.click(one(page.nodes(), "button"))


def click_test_2(page: Page, wrong: bool) -> None:
    wanted = page.goal.removeprefix("Click button ").rstrip(".")
    nodes = page.nodes()
    chosen = other(nodes, "button", wanted) if wrong else one(nodes, "button", wanted)
    assert chosen is not None
    others = [page.box(n) for n in find(nodes, "button") if n.id > chosen.id]  # the later button is on top
    if not any(box.covers(*page.box(chosen).center) for box in others):
        page.click(chosen)
    else:  # its middle is under the other button: reach it with the keyboard (Tab to it, press Enter)
        for _ in range(find(nodes, "button").index(chosen) + 1):
            page.key("Tab")
        page.key("Enter")


def click_button(page: Page, wrong: bool) -> None:
    (wanted,) = page.quoted()
    nodes = page.nodes()
    chosen = other(nodes, "button", wanted) if wrong else one(nodes, "button", wanted)
    page.click(chosen or one(nodes, "textbox"))  # no other button: click a text field, which ends nothing


def click_link(page: Page, wrong: bool) -> None:
    (wanted,) = page.quoted()
    nodes = page.nodes()
    deepest = max(n.depth for n in nodes)
    links = [n for n in nodes if n.role == "text" and n.depth == deepest]  # the link spans inside the paragraph
    chosen = next((n for n in links if (n.name != wanted) == wrong), None)
    page.click(chosen or nodes[0])  # no other link: click the paragraph's plain words


def click_dialog(page: Page, wrong: bool) -> None:
    nodes = page.nodes()
    page.click(one(nodes, "text") if wrong else one(nodes, "button", "Close"))


def click_option(page: Page, wrong: bool) -> None:
    wanted = page.goal.removeprefix("Select ").removesuffix(" and click Submit.")
    nodes = page.nodes()
    chosen = other(nodes, "radio", wanted) if wrong else one(nodes, "radio", wanted)
    assert chosen is not None  # at least two options
    page.click(chosen)
    submit(page, nodes)


def click_checkboxes(page: Page, wrong: bool) -> None:
    listed = page.goal.removeprefix("Select ").removesuffix(" and click Submit.")
    wanted = set() if listed == "nothing" else set(listed.split(", "))
    nodes = page.nodes()
    for box in find(nodes, "checkbox"):
        if (box.name in wanted) != wrong and not box.checked:  # wrong: exactly the others
            page.click(box)
    submit(page, nodes)


def focus_text(page: Page, wrong: bool) -> None:
    if wrong:
        page.click_at(*OUTSIDE)
    else:
        page.click(one(page.nodes(), "textbox"))


def enter_text(page: Page, wrong: bool) -> None:
    (text,) = page.quoted()
    nodes = page.nodes()
    page.type(one(nodes, "textbox"), text[:-1] if wrong else text)  # wrong: the last letter left out
    submit(page, nodes)


def enter_password(page: Page, wrong: bool) -> None:
    (password,) = page.quoted()
    nodes = page.nodes()
    first, second = find(nodes, "textbox")[:2]
    page.type(first, password)
    page.type(second, password[:-1] if wrong else password)
    submit(page, nodes)


def login_user(page: Page, wrong: bool) -> None:
    user, password = page.quoted()
    nodes = page.nodes()
    name_field, password_field = find(nodes, "textbox")[:2]
    if wrong:
        user, password = password, user  # each in the other's field
    page.type(name_field, user)
    page.type(password_field, password)
    submit(page, nodes, "Login")


def choose_list(page: Page, wrong: bool) -> None:
    wanted = page.goal.removeprefix("Select ").removesuffix(" from the list and click Submit.")
    nodes = page.nodes()
    box = one(nodes, "combobox")
    options = [o.removeprefix("*") for o in box.rest.split("options=[", 1)[1].rstrip("]").split(" | ")]
    page.select(box, next(o for o in options if o != wanted) if wrong else wanted)
    submit(page, nodes)


def drag_box(page: Page, wrong: bool) -> None:
    nodes = page.nodes()
    small, large = one(nodes, "text", "s"), one(nodes, "text", "L")
    small_box, large_box = page.box(small), page.box(large)
    (sx, sy), (lx, ly) = small_box.center, large_box.center
    if wrong:  # the large box dragged away to the right instead (it is on top, so its middle can be gripped)
        page.drag_by(lx, ly, OUTSIDE[0], ly)
    elif not large_box.covers(sx, sy):
        page.drag(small, large)  # its middle onto the large box's middle
    elif (grip := small_box.uncovered_point(large_box)) is not None:  # the large box (on top) hides its middle
        page.drag_by(*grip, grip[0] + lx - sx, grip[1] + ly - sy)
    # else: it is under the large box entirely, so inside it already
    submit(page, nodes)


Solution = Callable[[Page, bool], None]
SOLUTIONS: dict[str, Solution] = {
    "click-test": click_test,
    "click-test-2": click_test_2,
    "click-button": click_button,
    "click-link": click_link,
    "click-dialog": click_dialog,
    "click-option": click_option,
    "click-checkboxes": click_checkboxes,
    "focus-text": focus_text,
    "enter-text": enter_text,
    "enter-password": enter_password,
    "login-user": login_user,
    "choose-list": choose_list,
    "drag-box": drag_box,
}
"""Task → its scripted solution; called with wrong=True it plays the task's deliberate mistake instead."""


def play(tools: ToolAccess, *, wrong: bool = False) -> str:
    """Play the episode's task (its solution, or its mistake); what the agent answers."""
    page = Page(tools)
    solution = SOLUTIONS.get(page.task)
    if solution is None:
        return f"no scripted solution for {page.task}"
    solution(page, wrong)
    return "done"
