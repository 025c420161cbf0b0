"""`website`: a web application as part of a world, with its lifecycle tied to the world's.

Four forms (see `settings`): an in-process WSGI `app` that reads and writes the world through its tools (the support
desk's front end is one), a `command` or Docker `image` the world starts and health-checks, or a `url` of a site that
runs elsewhere. The site's address is `base_url`; a browser env in the same world opens it with `start_url =
"{website}/…"`.

Lifecycle. A started site (command, image) starts when its world is deployed (`deploy_env` calls `start()` on the
world it deploys; elsewhere, on the first use of `base_url`) and must become healthy within `start_timeout`, or the
deploy fails with a message naming the env and nothing is left running. Making the env starts nothing, so a task's
preflight and a deploy's cached template hold no process. `close()` (the deploy's teardown) stops it, and a fork
starts a fresh one on its first use: a site's own state cannot be copied. An app site is mounted for each world
that composes the env (`joined`: its build and every fork), so a forked world's site shows the fork's state, at the
cost of a dictionary entry; `close()` unmounts it. A reset or restore changes the world's state, which an app site
reads on every request; a started site keeps running through them.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any, ClassVar, Self

from agentenv.contracts import ClassRef
from agentenv_runtime import Env, tool

from agentenv_website.mounts import MOUNTS, WsgiApp
from agentenv_website.settings import WebsiteSettings
from agentenv_website.started import Started, WebsiteError, start

_RUNNING: set[Started] = set()
_RUNNING_LOCK = threading.Lock()


class WebsiteEnv(Env[WebsiteSettings]):
    """A web application in the world: an in-process app on the world's tools, a command or image the world starts
    and health-checks, or a site elsewhere."""

    name: ClassVar[str] = "website"
    Settings = WebsiteSettings

    def __init__(self, settings: WebsiteSettings | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._app: WsgiApp | None = None
        self._mount: str | None = None
        self._site: Started | None = None
        self._closed = False
        if self.settings.app is not None:
            self._app = load_app(self.name, self.settings.app)

    # ---- where it is -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The site's root URL, without a trailing slash (an app site's is its world's own mount)."""
        if self._app is None:
            return self.start().base_url
        if self._mount is None:
            raise WebsiteError(
                f"env {self.name}: the app {self.settings.app} is served for a world; compose the env into one "
                "(World([...]), deploy_env) before asking for its URL"
            )
        problem = MOUNTS.problem(self._mount)
        if problem is not None:
            raise WebsiteError(f"env {self.name}: {problem}")
        return self._mount

    @tool(read_only=True)
    def site_url(self) -> dict[str, Any]:
        """The address of the world's website (open it in the browser env)."""
        return {"url": self.base_url + "/", "form": self.settings.form}

    # ---- lifecycle ---------------------------------------------------------------------------------
    def joined(self, world: Any) -> None:
        if self._app is None:
            return
        if self._mount is not None:
            MOUNTS.unmount(self._mount)
        self._mount = MOUNTS.mount(self._app, world, self.settings.role)

    def start(self) -> Started:
        """Start the site (command, image) or check it (url) unless that is done: `deploy_env` calls it on the world
        it deploys, and the first use of `base_url` does. A WebsiteError names the env and what went wrong."""
        if self._closed:
            raise WebsiteError(f"env {self.name}: its site ({self.settings.describe()}) was stopped (closed)")
        if self._site is None and self._app is None:
            site = start(self.name, self.settings)
            with _RUNNING_LOCK:
                _RUNNING.add(site)
            self._site = site
        assert self._site is not None or self._app is not None
        return self._site  # type: ignore[return-value]

    def fork(self) -> Self:
        clone = super().fork()
        clone._mount = None  # mounted when the forked world composes it
        clone._site, clone._closed = None, False  # started on first use: a started site's state cannot be copied
        return clone

    def close(self) -> None:
        """Stop the site this env started (or unmount its app site); the world's state stays."""
        if self._mount is not None:
            MOUNTS.unmount(self._mount)
            self._mount = None
        site, self._site = self._site, None
        self._closed = True
        if site is not None:
            site.stop()
            with _RUNNING_LOCK:
                _RUNNING.discard(site)


def load_app(name: str, reference: str) -> WsgiApp:
    """The WSGI application `module:attribute`, or a WebsiteError naming the setting and why."""
    try:
        app = ClassRef("app", reference).load()
    except ImportError as exc:
        raise WebsiteError(f"env {name}: settings.app {reference!r}: cannot import it: {exc}") from None
    except AttributeError:
        app = None
    if not callable(app):
        module_name, _, attribute = reference.partition(":")
        raise WebsiteError(
            f"env {name}: settings.app {reference!r}: {module_name} has no callable {attribute!r} (a WSGI "
            "application: app(environ, start_response))"
        )
    return app  # type: ignore[no-any-return]


@atexit.register
def stop_all() -> None:
    """Stop every site this process started and still runs (no site outlives its process)."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
        _RUNNING.clear()
    for site in running:
        site.stop()
