"""`browser`: a real Chromium page as an app of the world, with tools for text-based and screen-based agents.

Each env instance (one per deployed world, fork or episode) has its own browser context on the process's shared
Chromium (see `driver`), made on the first tool call: `reset()` and `fork()` drop it, so the next episode starts
with no cookies, storage or history, at `start_url`; so does a restore (an RL episode's reset). `start_url` may
name a sibling env's site (`{website}/tickets`), found through the world the env joined. What the world keeps as
the browser's state is the visit log and the screenshots (SQLite, like every env), so a world snapshot carries
them; the page itself is not state (a restore does not bring a page back).

`snapshot` lists the page one element a line with ids (`[7] button "Refund"`); `click`, `type` and `select`
take those ids. `mouse_click(x, y)` and `key` act on the screen as a pixel-based agent would; `screenshot`
returns the PNG (base64) and records it, so the run's trajectory holds every screenshot taken. `find` gives ids by
name for agents that do not read snapshots (scripted policies). `devtools` says where an outside client can attach
over CDP (`debugging_port`); `cdp_url` drives a browser that runs elsewhere instead of launching one.
"""

from __future__ import annotations

import base64
import hashlib
import re
import weakref
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, ClassVar, Literal, Self, TypeVar

from agentenv_runtime import Env, ToolError, tool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentenv_browser.driver import BrowserHost, BrowserUnavailable, find_chromium, shared_host
from agentenv_browser.tree import ID_ATTRIBUTE, MAX_LINES, SCRIPT

T = TypeVar("T")
ElementId = Annotated[int, Field(ge=1, description="An element id from the last `snapshot`, e.g. 7 for `[7] button`.")]
LINE = re.compile(r'^ *\[(\d+)\] (\S+) "(.*?)"', re.MULTILINE)
"""One element line of a snapshot: id, role, name."""
CONTROLS = frozenset(
    {"link", "button", "combobox", "textbox", "checkbox", "radio", "slider", "spinbutton", "searchbox", "tab"}
    | {"menuitem", "option", "switch"}
)
Url = Annotated[str, Field(min_length=1, max_length=4000, pattern=r"^(https?://|about:blank$)")]


class BrowserSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    executable_path: str | None = Field(
        None, description="Chromium binary (default: $AGENTENV_CHROMIUM, then Debian's /usr/lib/chromium)."
    )
    headless: bool = Field(True, description="Run without a window (a headed browser needs a display: Xvfb).")
    width: int = Field(1280, ge=200, le=3840, description="Viewport width in CSS pixels.")
    height: int = Field(720, ge=200, le=2160, description="Viewport height in CSS pixels.")
    start_url: str | None = Field(
        None,
        description="Where each fresh context starts (default: about:blank). `{NAME}` is the address of env NAME of "
        "the same world (a `website` env's site): `{website}/tickets`.",
    )
    action_timeout_ms: int = Field(5000, ge=100, le=120_000, description="How long an action waits for its element.")
    debugging_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="Open Chromium's DevTools (CDP) endpoint on this loopback port (0: a free one), so an outside "
        "client can attach with connect_over_cdp; the `devtools` tool says where.",
    )
    cdp_url: str | None = Field(
        None,
        pattern=r"^(https?|wss?)://",
        description="Drive a Chromium that runs elsewhere (the agent's sandbox, another process) through its "
        "DevTools endpoint, e.g. http://127.0.0.1:9222, instead of launching one.",
    )

    @model_validator(mode="after")
    def _one_browser(self) -> Self:
        if self.cdp_url is not None and (self.executable_path is not None or self.debugging_port is not None):
            raise ValueError(
                "cdp_url drives a browser that runs elsewhere; leave executable_path and debugging_port out "
                "(that browser's own flags decide them)"
            )
        return self


class BrowserEnv(Env):
    """A real Chromium browser page: navigate, read the page as a tree of elements, click, type, screenshot."""

    name = "browser"
    Settings: ClassVar[type[BaseModel]] = BrowserSettings
    schema = """
    CREATE TABLE visits (seq INTEGER PRIMARY KEY, url TEXT NOT NULL, title TEXT NOT NULL);
    CREATE TABLE screenshots (
        id INTEGER PRIMARY KEY, url TEXT NOT NULL, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL, png BLOB NOT NULL
    );
    """

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._page: Any = None
        self._context: Any = None
        self._release: weakref.finalize[Any, Any] | None = None
        """Closes the context (without waiting) when the env drops its page or is collected (a forgotten fork)."""
        self._world: weakref.ReferenceType[Any] | None = None

    @property
    def options(self) -> BrowserSettings:
        assert isinstance(self.settings, BrowserSettings)
        return self.settings

    # ---- the page ----------------------------------------------------------------------------------
    def _host(self) -> BrowserHost:
        options = self.options
        try:
            if options.cdp_url is not None:
                return shared_host(None, connect=options.cdp_url)
            executable = find_chromium(options.executable_path)
            return shared_host(executable, options.headless, debug_port=options.debugging_port)
        except BrowserUnavailable as exc:
            raise ToolError(str(exc), code="browser_unavailable") from None
        except Exception as exc:  # a browser that would not launch, an endpoint nobody answers
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            where = f"cdp_url {options.cdp_url}" if options.cdp_url else "the browser"
            raise ToolError(f"{where}: {message}", code="browser_unavailable") from None

    def joined(self, world: Any) -> None:
        self._world = weakref.ref(world)  # where `{NAME}` in start_url is looked up

    def start_url(self) -> str | None:
        """`start_url` with each `{NAME}` replaced by the address (`base_url`) of env NAME of this env's world."""
        url = self.options.start_url
        if not url or "{" not in url:
            return url
        world = self._world() if self._world is not None else None

        def address(found: re.Match[str]) -> str:
            name = found[1]
            env = world.envs.get(name) if world is not None else None
            if env is None or not has_site(env):
                has = ", ".join(n for n, e in (world.envs.items() if world else []) if has_site(e))
                raise ToolError(
                    f"settings.start_url {url!r}: {{{name}}} names no env with a site in this world "
                    f"(envs with one: {has or 'none'}); add a `website` env or fix the name",
                    code="bad_start_url",
                )
            try:
                return str(env.base_url).rstrip("/")
            except Exception as exc:  # the site did not start: its own message names it
                raise ToolError(f"settings.start_url {url!r}: {exc}", code="site_unavailable") from None

        return re.sub(r"\{(\w+)\}", address, url)

    def _on_page(self, action: Callable[[Any], Awaitable[T]]) -> T:
        """Run `action(page)` on this env's page, making the context first when it has none."""
        host = self._host()
        start = self.start_url() if self._page is None else None  # outside the loop: a site may start first

        async def run() -> T:
            if self._page is None:
                await self._open(host, start)
                try:
                    return await action(self._page)
                finally:  # the next episode's context is made now, not while this one's first call runs
                    host.make_spare(self.options.width, self.options.height)
            return await action(self._page)

        try:
            return host.run(run)
        except ToolError:
            raise
        except Exception as exc:  # playwright's errors (timeouts, a navigation that failed) are failed calls
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ToolError(f"browser: {message}", code="browser_error") from None

    async def _open(self, host: BrowserHost, start: str | None) -> None:
        options = self.options
        self._context, self._page = await host.fresh_page(options.width, options.height)
        self._release = weakref.finalize(self, host.discard, self._context)
        self._context.set_default_timeout(options.action_timeout_ms)
        await self.prepare_page(self._page, start)

    # ---- for subclasses (an env built on this one, such as agentenv-miniwob's) ------------------------
    async def prepare_page(self, page: Any, start: str | None) -> None:
        """Set up each fresh page (a new episode's context) before its first action: here, open `start` (the
        resolved `start_url`, read outside the loop since reading it may start a site). Runs on the browser's
        event loop; a subclass that overrides it loads and sets up its own page."""
        if start:
            await page.goto(start)

    @property
    def page_open(self) -> bool:
        """Whether this env has its page now (False after a reset or a fork, until the next call makes one)."""
        return self._page is not None

    def run_on_page(self, action: Callable[[Any], Awaitable[T]]) -> T:
        """Run `action(page)` on this env's page (made and prepared first when there is none) and return its
        result; playwright's errors come back as a `ToolError`. For tools and steps of a subclass."""
        return self._on_page(action)

    async def find_element(self, page: Any, element: int) -> Any:
        """The locator of snapshot id `element` on `page`; a `ToolError` (`no_element`) when it is not there."""
        return await self._existing(page, element)

    def close(self) -> None:
        """Close this env's context, without waiting for the browser (the shared browser stays for the others)."""
        release, self._release, self._context, self._page = self._release, None, None, None
        if release is not None:
            release()

    def reset(self) -> None:
        self.close()
        super().reset()

    def restore(self, data: bytes) -> None:
        """A restored world (an RL reset puts back its start) begins on a fresh context, as a reset does."""
        self.close()
        super().restore(data)

    def rewind(self, data: bytes) -> bool:
        rewound = super().rewind(data)
        if rewound:
            self.close()
        return rewound

    def fork(self) -> Self:
        clone = super().fork()
        clone._page = clone._context = clone._release = None  # the copy's own context, made on its first call
        return clone

    @tool(read_only=True)
    def devtools(self) -> dict[str, Any]:
        """Where an outside client can attach to this browser over CDP (Chromium's DevTools protocol), and this
        episode's page there (its URL and title), when the browser has an endpoint (`debugging_port`, `cdp_url`)."""
        host = self._host()
        if host.cdp_url is None:
            raise ToolError(
                "this browser has no DevTools endpoint; set the env's `debugging_port` (0: a free one) or `cdp_url`",
                code="no_devtools",
            )
        return self._on_page(self._where) | {"cdp_url": host.cdp_url}

    async def _where(self, page: Any) -> dict[str, Any]:
        return {"url": page.url, "title": await page.title()}

    def _element(self, page: Any, element: int) -> Any:
        return page.locator(f'[{ID_ATTRIBUTE}="{element}"]')

    async def _existing(self, page: Any, element: int) -> Any:
        locator = self._element(page, element)
        if await locator.count() == 0:
            raise ToolError(
                f"no element [{element}] on this page; take a `snapshot` for current ids", code="no_element"
            )
        return locator

    def _visit(self, where: dict[str, Any]) -> dict[str, Any]:
        self.db.execute("INSERT INTO visits (url, title) VALUES (?, ?)", (where["url"], where["title"]))
        return where

    # ---- tools for text-based agents ---------------------------------------------------------------
    @tool
    def goto(self, url: Url) -> dict[str, Any]:
        """Open a URL in the page.

        Args:
            url: An http(s) URL, or about:blank.
        """

        async def go(page: Any) -> dict[str, Any]:
            response = await page.goto(url)
            return await self._where(page) | {"status": response.status if response is not None else None}

        return self._visit(self._on_page(go))

    @tool(name="snapshot", read_only=True)
    def read_page(self) -> dict[str, Any]:
        """The page as a tree of elements, one a line with an id to act on: `[7] button "Refund"`."""

        async def read(page: Any) -> dict[str, Any]:
            tree = await page.evaluate(SCRIPT, [MAX_LINES, ID_ATTRIBUTE])
            return await self._where(page) | {"tree": tree}

        return self._on_page(read)

    @tool(read_only=True)
    def find(
        self,
        text: Annotated[str, Field(min_length=1, max_length=200)],
        role: Annotated[str, Field(pattern=r"^[a-z]+$")] | None = None,
    ) -> dict[str, Any]:
        """Find elements by the name `snapshot` shows for them (and their role); their ids work with click, type
        and select. Exact names come first, controls (buttons, links, fields) before labels and text of the same
        name, then names that contain `text` (case does not matter).

        Args:
            text: The element's name or part of it, e.g. "Issue refund" or "TCK-9001".
            role: Only elements of this role: button, link, textbox, combobox, checkbox, heading, cell, ...
        """

        async def search(page: Any) -> dict[str, Any]:
            tree = await page.evaluate(SCRIPT, [MAX_LINES, ID_ATTRIBUTE])
            wanted = text.casefold()
            found = [
                (int(line[1]), line[2], line[3])
                for line in LINE.finditer(tree)
                if wanted in line[3].casefold() and (role is None or line[2] == role)
            ]
            # Exact names first, controls before the labels and text that carry the same name, else page order.
            found.sort(key=lambda match: (match[2].casefold() != wanted, match[1] not in CONTROLS))
            if not found:
                kind = f" {role}" if role else ""
                raise ToolError(
                    f"no{kind} element named like {text!r} on this page; take a `snapshot` to see what is there",
                    code="no_element",
                )
            matches = [{"element": element, "role": kind, "name": name} for element, kind, name in found[:20]]
            return await self._where(page) | {"element": found[0][0], "matches": matches}

        return self._on_page(search)

    @tool
    def click(self, element: ElementId) -> dict[str, Any]:
        """Click an element of the last snapshot.

        Args:
            element: Its id, e.g. 7 for `[7] button "Refund"`.
        """

        async def act(page: Any) -> dict[str, Any]:
            await (await self._existing(page, element)).click()
            await page.wait_for_load_state()
            return await self._where(page)

        return self._visit(self._on_page(act))

    @tool
    def type(
        self,
        element: ElementId,
        text: Annotated[str, Field(max_length=10_000)],
        submit: bool = False,
    ) -> dict[str, Any]:
        """Replace the text of an input or textarea; optionally press Enter after.

        Args:
            element: The field's id from the last snapshot.
            text: What the field should hold.
            submit: Press Enter afterwards (submits most forms).
        """

        async def act(page: Any) -> dict[str, Any]:
            field = await self._existing(page, element)
            await field.fill(text)
            if submit:
                await field.press("Enter")
                await page.wait_for_load_state()
            return await self._where(page)

        return self._visit(self._on_page(act))

    @tool
    def select(self, element: ElementId, option: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
        """Choose an option of a drop-down by its label or value.

        Args:
            element: The drop-down's id from the last snapshot.
            option: The option's visible label or its value.
        """

        async def act(page: Any) -> dict[str, Any]:
            box = await self._existing(page, element)
            try:
                chosen = await box.select_option(label=option, timeout=1000)
            except Exception:
                chosen = await box.select_option(value=option)
            return await self._where(page) | {"selected": chosen}

        return self._on_page(act)

    @tool
    def scroll(
        self, direction: Literal["up", "down"] = "down", pixels: Annotated[int, Field(ge=1, le=20_000)] = 600
    ) -> dict[str, Any]:
        """Scroll the page.

        Args:
            direction: up or down.
            pixels: How far, in CSS pixels (default 600).
        """

        async def act(page: Any) -> dict[str, Any]:
            await page.mouse.wheel(0, pixels if direction == "down" else -pixels)
            offset = await page.evaluate("() => window.scrollY")
            return await self._where(page) | {"scroll_y": offset}

        return self._on_page(act)

    @tool
    def back(self) -> dict[str, Any]:
        """Go back one page in this tab's history."""

        async def act(page: Any) -> dict[str, Any]:
            await page.go_back()
            return await self._where(page)

        return self._visit(self._on_page(act))

    @tool
    def screenshot(self, full_page: bool = False) -> dict[str, Any]:
        """A PNG of the viewport (or the whole page), recorded with the run.

        Args:
            full_page: The whole scrollable page instead of the viewport.
        """

        async def shoot(page: Any) -> tuple[bytes, dict[str, Any]]:
            return await page.screenshot(full_page=full_page, type="png"), await self._where(page)

        png, where = self._on_page(shoot)
        digest = hashlib.sha256(png).hexdigest()
        cursor = self.db.execute(
            "INSERT INTO screenshots (url, sha256, bytes, png) VALUES (?, ?, ?, ?)",
            (where["url"], digest, len(png), png),
        )
        return where | {
            "screenshot_id": cursor.lastrowid,
            "sha256": digest,
            "bytes": len(png),
            "png_base64": base64.b64encode(png).decode("ascii"),
        }

    # ---- tools for screen-based agents -------------------------------------------------------------
    @tool
    def mouse_click(
        self,
        x: Annotated[float, Field(ge=0, le=10_000)],
        y: Annotated[float, Field(ge=0, le=10_000)],
        button: Literal["left", "right", "middle"] = "left",
    ) -> dict[str, Any]:
        """Click at a point of the viewport, as seen on a screenshot.

        Args:
            x: Pixels from the left edge.
            y: Pixels from the top edge.
            button: left, right or middle.
        """

        async def act(page: Any) -> dict[str, Any]:
            # Through the element under the point: the same mouse events at the same pixel, and playwright then
            # waits for a navigation the click starts (a bare mouse.click would return before it).
            target = (await page.evaluate_handle("([x, y]) => document.elementFromPoint(x, y)", [x, y])).as_element()
            box = await target.bounding_box() if target is not None else None
            if target is None or box is None:
                await page.mouse.click(x, y, button=button)
            else:
                await target.click(position={"x": x - box["x"], "y": y - box["y"]}, button=button, force=True)
            await page.wait_for_load_state()
            return await self._where(page)

        return self._visit(self._on_page(act))

    @tool
    def key(self, key: Annotated[str, Field(min_length=1, max_length=64)]) -> dict[str, Any]:
        """Press a key or a chord on the focused element: Enter, Tab, Escape, ArrowDown, Control+A, a letter.

        Args:
            key: The key in playwright's names (Enter, Tab, Shift+Tab, Control+A, …).
        """

        async def act(page: Any) -> dict[str, Any]:
            focused = page.locator(":focus")
            if await focused.count():
                await focused.press(key)  # waits for a navigation the key starts (Enter in a form)
            else:
                await page.keyboard.press(key)
            await page.wait_for_load_state()
            return await self._where(page)

        return self._visit(self._on_page(act))


def has_site(env: Any) -> bool:
    """Whether an env has a site address (`base_url`), without reading it (reading may start the site)."""
    return hasattr(type(env), "base_url") or "base_url" in vars(env)
