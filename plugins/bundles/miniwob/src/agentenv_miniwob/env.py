"""`miniwob`: a MiniWoB++ task page in the browser env, one seeded instance of one task per episode.

The env is the `browser` env (agentenv-browser) with the task page set up on every fresh page: the page is
loaded from the local server (`pages`), the episode started as BrowserGym starts it (`episode.js`) with the
page seed of the instance's seed (`seeding`), and the instruction read. Besides the browser's tools it has
`goal` (the instruction, and whether the page says the episode is done), and `drag` / `mouse_drag` for the
drag tasks. The page computes the reward; `status()` reads it for the `miniwob_reward` verifier.

What the world keeps as state is the instance (task, seed) and every call that acted on the page, in order.
The page is a function of that state: a fresh page (after a reset, in a fork, after a restore) is set up
from the instance and the calls are played again on it, so a fork continues from the same page and an RL
reset starts the same instance again. Tasks whose pages depend on wall-clock time may differ on the replay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from typing import Annotated, Any, ClassVar

from agentenv_browser.api import BrowserEnv, BrowserSettings
from agentenv_runtime import ToolError, tool
from pydantic import BaseModel, Field

from agentenv_miniwob.pages import PagesMissing, pages_url, unknown_task
from agentenv_miniwob.seeding import page_seed

EPISODE_SCRIPT = files("agentenv_miniwob").joinpath("episode.js").read_text(encoding="utf-8")
GOAL_SCRIPT = "() => { const u = core.getUtterance(); return (u !== null && typeof u === 'object') ? u.utterance : u; }"
"""MiniWoB's instruction; some tasks return {utterance, fields}, as BrowserGym reads it."""
STATUS_SCRIPT = """() => typeof WOB_DONE_GLOBAL === 'undefined' ? null : {
  reward: WOB_REWARD_GLOBAL, raw_reward: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON,
  done: WOB_DONE_GLOBAL, episode_id: WOB_EPISODE_ID, ready: WOB_TASK_READY}"""
"""The page's reward globals, the ones BrowserGym's MiniWoB tasks read (null on a page that is not a task's)."""
DEFAULT_MAX_TIME_MS = 1_000_000
"""BrowserGym's default MiniWoB episode time limit (the pages' own is 10 s, made for humans)."""
REPLAYED = frozenset(
    {"goto", "snapshot", "click", "type", "select", "scroll", "back", "mouse_click", "key", "drag", "mouse_drag"}
)
"""Calls that change the page (`snapshot` gives elements their ids); played again on a fresh page."""

ElementId = Annotated[int, Field(ge=1, description="An element id from the last `snapshot`, e.g. 7 for `[7] text`.")]
Pixel = Annotated[float, Field(ge=0, le=10_000)]


class MiniwobSettings(BrowserSettings):
    width: int = Field(332, ge=200, le=3840, description="Viewport width (BrowserGym's MiniWoB viewport: 332).")
    height: int = Field(214, ge=200, le=2160, description="Viewport height (BrowserGym's MiniWoB viewport: 214).")
    task: str | None = Field(None, description="The MiniWoB++ task, e.g. click-test (a `miniwob_task` step sets it).")
    seed: int = Field(
        0, ge=0, lt=2**32, description="Seed of the task's random instance (a `miniwob_task` step sets it)."
    )
    episode_max_time_ms: int = Field(
        DEFAULT_MAX_TIME_MS,
        ge=1,
        description="The page's episode time limit in ms; past it the page ends the episode (-1).",
    )
    pages_url: str | None = Field(
        None, description="Base URL of the task pages, ending in /miniwob/ (default: the wheel's, served on loopback)."
    )


@dataclass(frozen=True)
class Instance:
    """One task instance: what the page is set up from."""

    task: str
    seed: int
    page_seed: int
    max_time_ms: int
    url: str


class MiniwobEnv(BrowserEnv):
    """A MiniWoB++ task in a real browser: read `goal`, act with the browser's tools; the page grades itself."""

    name = "miniwob"
    Settings: ClassVar[type[BaseModel]] = MiniwobSettings
    schema = (
        BrowserEnv.schema
        + """
    CREATE TABLE instance (
        id INTEGER PRIMARY KEY CHECK (id = 1), task TEXT NOT NULL, seed INTEGER NOT NULL, max_time_ms INTEGER NOT NULL
    );
    CREATE TABLE page_actions (seq INTEGER PRIMARY KEY, tool TEXT NOT NULL, arguments TEXT NOT NULL);
    """
    )

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._fresh: Instance | None = None
        """The instance the next fresh page is set up from (read from the state before the page is made)."""
        self._goal: str | None = None

    @property
    def miniwob(self) -> MiniwobSettings:
        assert isinstance(self.settings, MiniwobSettings)
        return self.settings

    # ---- the instance ------------------------------------------------------------------------------
    def begin(self, task: str, seed: int, max_time_ms: int | None = None) -> Instance:
        """Make `task` with `seed` this env's instance, from its start (what the `miniwob_task` step does)."""
        problem = unknown_task(task)
        if problem is not None:
            raise ValueError(problem)
        page_seed(seed)  # checks the range
        _, error = self.atomic("begin", self._set_instance, task=task, seed=seed, max_time_ms=max_time_ms)
        if error is not None:
            raise ValueError(error["message"])
        self.close()
        return self.instance()

    def _set_instance(self, task: str, seed: int, max_time_ms: int | None) -> None:
        self.db.execute("DELETE FROM page_actions")
        self.db.execute(
            "INSERT OR REPLACE INTO instance (id, task, seed, max_time_ms) VALUES (1, ?, ?, ?)",
            (task, seed, max_time_ms or self.miniwob.episode_max_time_ms),
        )

    def instance(self) -> Instance:
        """The instance in the state, else the one the settings name."""
        row = self.db.execute("SELECT task, seed, max_time_ms FROM instance").fetchone()
        options = self.miniwob
        if row is not None:
            task, seed, max_time = str(row["task"]), int(row["seed"]), int(row["max_time_ms"])
        elif options.task is not None:
            task, seed, max_time = options.task, options.seed, options.episode_max_time_ms
        else:
            raise ToolError(
                "no MiniWoB task in this world: add a `miniwob_task` step, or set the env's `task` setting",
                code="no_task",
            )
        try:
            base = options.pages_url or pages_url()
        except PagesMissing as exc:
            raise ToolError(str(exc), code="pages_missing") from None
        return Instance(task, seed, page_seed(seed), max_time, f"{base.rstrip('/')}/{task}.html")

    # ---- the page ----------------------------------------------------------------------------------
    async def prepare_page(self, page: Any, start: str | None) -> None:
        fresh = self._fresh or self.instance()
        await page.goto(fresh.url)
        await page.evaluate(EPISODE_SCRIPT, [fresh.page_seed, fresh.max_time_ms])
        await page.wait_for_function("() => WOB_TASK_READY")
        self._goal = str(await page.evaluate(GOAL_SCRIPT))

    def _bring_page(self) -> None:
        """Before the page is used: when the env has none, note the instance to set it up from and play the
        state's page calls again on it (their own writes to the state are undone: they are in it already)."""
        if self.page_open:
            return
        self._fresh = self.instance()
        calls = self.db.execute("SELECT tool, arguments FROM page_actions ORDER BY seq").fetchall()
        if not calls:
            return
        self.db.execute("SAVEPOINT miniwob_replay")
        try:
            for call in calls:
                super().call(str(call["tool"]), json.loads(call["arguments"]))
        finally:
            self.db.execute("ROLLBACK TO miniwob_replay")
            self.db.execute("RELEASE miniwob_replay")

    def call(self, tool_name: str, arguments: dict[str, Any]) -> tuple[Any, dict[str, Any] | None]:
        try:
            self._bring_page()
        except ToolError as exc:
            return None, exc.to_dict()
        result, error = super().call(tool_name, arguments)
        if error is None and tool_name in REPLAYED:
            self.atomic("page_actions", self._note, tool=tool_name, arguments=arguments)
        return result, error

    def _note(self, tool: str, arguments: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO page_actions (tool, arguments) VALUES (?, ?)", (tool, json.dumps(arguments, sort_keys=True))
        )

    def restore(self, data: bytes) -> None:
        self.close()  # the page belongs to the state being left; the next call sets one up from the restored one
        super().restore(data)

    def rewind(self, data: bytes) -> bool:
        self.close()
        return super().rewind(data)

    def status(self) -> dict[str, Any]:
        """What the page says of the episode, read as BrowserGym reads it: `reward` is BrowserGym's (1.0 when
        the page's raw reward is above 0, else 0.0), `raw_reward` and `time_reward` the page's own numbers, and
        `done` its done flag. A page that left the task's URL is done with reward 0, as in BrowserGym."""
        self._bring_page()
        fresh = self.instance()

        async def read(page: Any) -> dict[str, Any]:
            return {"url": page.url, "globals": await page.evaluate(STATUS_SCRIPT)}

        seen = self.run_on_page(read)
        found = seen["globals"]
        where = {"task": fresh.task, "seed": fresh.seed, "url": seen["url"]}
        if seen["url"] != fresh.url or found is None:
            left = {"reward": 0.0, "raw_reward": None, "time_reward": None, "reason": "the page left the task"}
            return where | {"on_task": False, "done": True} | left
        raw = found["raw_reward"]
        return where | {
            "on_task": True,
            "done": bool(found["done"]),
            "reward": 1.0 if raw is not None and raw > 0 else 0.0,
            "raw_reward": raw,
            "time_reward": found["reward"],
            "reason": found["reason"],
            "episode_id": found["episode_id"],
        }

    def instruction(self) -> str:
        """The instance's instruction (MiniWoB's utterance), read once when its page was set up."""
        self._bring_page()
        self.run_on_page(_nothing)
        assert self._goal is not None
        return self._goal

    # ---- tools -------------------------------------------------------------------------------------
    @tool(read_only=True)
    def goal(self) -> dict[str, Any]:
        """This episode's instruction (e.g. `Click on the "ok" button.`), and whether the page says the task is
        done, with its reward (1.0 success, 0.0 otherwise)."""
        status = self.status()
        return {"task": status["task"], "goal": self._goal, "done": status["done"], "reward": status["reward"]}

    @tool(read_only=True)
    def locate(self, element: ElementId) -> dict[str, Any]:
        """Where an element is on the screen: its box in viewport pixels, for `mouse_click` and `mouse_drag`.

        Args:
            element: The element's id from the last snapshot.
        """

        async def find(page: Any) -> dict[str, Any]:
            box = await (await self.find_element(page, element)).bounding_box()
            if box is None:
                raise ToolError(f"element [{element}] is not rendered (no box on the screen)", code="not_visible")
            return {key: round(float(box[key]), 2) for key in ("x", "y", "width", "height")}

        return self.run_on_page(find)

    @tool
    def drag(self, element: ElementId, target: ElementId) -> dict[str, Any]:
        """Drag an element onto another: press the mouse on the first, move onto the second, release.

        Args:
            element: The id of the element to drag, from the last snapshot.
            target: The id of the element to drop it on.
        """

        async def act(page: Any) -> dict[str, Any]:
            source, onto = await self.find_element(page, element), await self.find_element(page, target)
            await source.hover()
            await page.mouse.down()
            await onto.hover()
            await page.mouse.up()
            return {"url": page.url, "title": await page.title()}

        return self.run_on_page(act)

    @tool
    def mouse_drag(self, x: Pixel, y: Pixel, to_x: Pixel, to_y: Pixel) -> dict[str, Any]:
        """Drag with the mouse between two points of the viewport, as seen on a screenshot.

        Args:
            x: Where to press: pixels from the left edge.
            y: Where to press: pixels from the top edge.
            to_x: Where to release: pixels from the left edge.
            to_y: Where to release: pixels from the top edge.
        """

        async def act(page: Any) -> dict[str, Any]:
            await page.mouse.move(x, y)
            await page.mouse.down()
            await page.mouse.move(to_x, to_y)
            await page.mouse.up()
            return {"url": page.url, "title": await page.title()}

        return self.run_on_page(act)


async def _nothing(page: Any) -> None:
    """An action that only makes sure the page exists (and is set up)."""
