"""The `phone` env: a simulated smartphone with semantic tools (`send_sms`, `create_event`, …) and screen-level tools
(`read_screen`, `tap`, `type_text`, `go_home`, `open_app`, `go_back`) over the same state.

Sent texts are messages simulated people can answer: `describe_message` tells persona triggers who was texted,
and `deliver_reply` puts their answer into the thread as an incoming text (with a notification).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from typing import Annotated, Any

from agentenv.contracts import Message
from agentenv_runtime import Env, ToolError, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_mobile import screen
from agentenv_mobile.schema import SCHEMA

E164 = re.compile(r"^\+[1-9]\d{6,14}$")
AppId = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$", description="App id, e.g. `messages`.")]
Text = Annotated[str, Field(min_length=1, max_length=2000)]
ElementId = Annotated[str, Field(min_length=1, max_length=120)]


class PhoneSettings(BaseModel):
    """How the phone behaves; a task sets them under `deploy_env` `settings.phone`."""

    model_config = ConfigDict(extra="forbid")

    max_sms_length: int = Field(480, ge=1, le=1600, description="Longest text message the phone sends.")


def iso(moment: datetime) -> str:
    """UTC, second precision, `Z` suffix: how every time is stored (naive times are taken as UTC)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PhoneEnv(Env):
    """A smartphone: home screen of installed apps, contacts, text messages, notifications, a calendar and
    settings (Wi-Fi, do not disturb); apps install and uninstall from the store. Agents use semantic tools or
    read the screen and tap its elements."""

    name = "phone"
    schema = SCHEMA
    Settings = PhoneSettings

    # ---- helpers --------------------------------------------------------------------------------------
    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> dict[str, Any] | None:
        row = self.db.execute(sql, params).fetchone()
        return dict(row) if row else None

    def _owner(self) -> dict[str, Any]:
        return self._one("SELECT name, number FROM owner") or {"name": "Owner", "number": "+10000000000"}

    def _setting(self, key: str) -> str:
        row = self._one("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row["value"]) if row else "off"

    def _set_setting(self, key: str, on: bool) -> dict[str, str]:
        value = "on" if on else "off"
        self.db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, value))
        return {key: value}

    def _stamp(self) -> str:
        return iso(self.now())

    def _number(self, to: str, field: str = "to") -> tuple[str, str | None]:
        """(number, contact name) for a contact name or an E.164 number."""
        if E164.match(to):
            row = self._one("SELECT name FROM contacts WHERE number = ?", (to,))
            return to, row["name"] if row else None
        matches = self.query("SELECT name, number FROM contacts WHERE lower(name) = lower(?)", (to.strip(),))
        if not matches:
            matches = self.query("SELECT name, number FROM contacts WHERE name LIKE ?", (f"%{to.strip()}%",))
        if len(matches) == 1:
            return matches[0]["number"], matches[0]["name"]
        if matches:
            names = ", ".join(m["name"] for m in matches)
            raise ToolError(f"{to!r} matches several contacts ({names}); give one name", code="ambiguous", field=field)
        raise ToolError(
            f"no contact {to!r}; give a contact name or an E.164 number (+15550100)", code="not_found", field=field
        )

    def _send(self, to: str, body: str) -> dict[str, Any]:
        limit = self.settings.max_sms_length  # type: ignore[attr-defined]
        if len(body) > limit:
            raise ToolError(f"the text is {len(body)} characters; the phone sends at most {limit}", field="body")
        if not body.strip():
            raise ToolError("the text is empty", field="body")
        number, name = self._number(to)
        stamp = self._stamp()
        cur = self.db.execute(
            "INSERT INTO sms (number, direction, body, sent_at) VALUES (?, 'out', ?, ?)", (number, body, stamp)
        )
        return {"id": cur.lastrowid, "to": number, "name": name, "body": body, "sent_at": stamp}

    def _notify(self, app_id: str, title: str, body: str) -> None:
        silenced = 1 if self._setting("do_not_disturb") == "on" else 0
        self.db.execute(
            "INSERT INTO notifications (app_id, title, body, at, silenced) VALUES (?, ?, ?, ?, ?)",
            (app_id, title, body, self._stamp(), silenced),
        )

    def _installed(self, app_id: str) -> dict[str, Any]:
        row = self._one("SELECT app_id, name, system FROM apps WHERE app_id = ?", (app_id,))
        if row is None:
            raise ToolError(f"app {app_id!r} is not installed (see list_apps)", code="not_installed", field="app_id")
        return row

    def _event(self, event_id: int) -> dict[str, Any]:
        row = self._one("SELECT * FROM events WHERE event_id = ?", (event_id,))
        if row is None:
            raise ToolError(f"no event {event_id} (see list_events)", code="not_found", field="event_id")
        return row

    def _times(self, start: datetime, end: datetime) -> tuple[str, str]:
        if end <= start:
            raise ToolError("the event must end after it starts", field="end")
        return iso(start), iso(end)

    # ---- apps -----------------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_apps(self) -> dict[str, Any]:
        """Installed apps in home-screen order, and the store's apps that are not installed."""
        installed = self.query("SELECT app_id, name, system FROM apps ORDER BY position")
        available = self.query(
            "SELECT app_id, name, description FROM store_apps WHERE app_id NOT IN (SELECT app_id FROM apps) "
            "ORDER BY app_id"
        )
        return {"installed": installed, "available": available}

    @tool
    def install_app(self, app_id: AppId) -> dict[str, Any]:
        """Install an app from the store; its icon goes last on the home screen.

        Args:
            app_id: The store's app id (see list_apps `available`).
        """
        app = self._one("SELECT app_id, name FROM store_apps WHERE app_id = ?", (app_id,))
        if app is None:
            raise ToolError(f"the store has no app {app_id!r}", code="not_found", field="app_id")
        if self._one("SELECT 1 AS x FROM apps WHERE app_id = ?", (app_id,)):
            raise ToolError(f"{app['name']} is already installed", code="already_installed", field="app_id")
        position = self._one("SELECT COALESCE(MAX(position), 0) + 1 AS p FROM apps")
        assert position is not None
        self.db.execute(
            "INSERT INTO apps (app_id, name, system, position) VALUES (?, ?, 0, ?)",
            (app_id, app["name"], position["p"]),
        )
        return {"installed": app_id}

    @tool
    def uninstall_app(self, app_id: AppId) -> dict[str, Any]:
        """Remove an installed app (system apps such as Messages cannot be removed).

        Args:
            app_id: The installed app's id.
        """
        app = self._installed(app_id)
        if app["system"]:
            raise ToolError(
                f"{app['name']} is a system app and cannot be uninstalled", code="system_app", field="app_id"
            )
        self.db.execute("DELETE FROM apps WHERE app_id = ?", (app_id,))
        return {"uninstalled": app_id}

    # ---- contacts and texts ---------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_contacts(self, query: str = "") -> list[dict[str, Any]]:
        """Contacts by name, optionally those whose name or number contains `query`.

        Args:
            query: Part of a name or number; empty lists everyone.
        """
        like = f"%{query}%"
        return self.query(
            "SELECT contact_id, name, number FROM contacts WHERE name LIKE ? OR number LIKE ? ORDER BY name",
            (like, like),
        )

    @tool
    def add_contact(self, name: Annotated[str, Field(min_length=1, max_length=100)], number: str) -> dict[str, Any]:
        """Save a new contact.

        Args:
            name: The contact's name.
            number: Phone number in E.164 form, e.g. +15550100.
        """
        if not E164.match(number):
            raise ToolError("use E.164, e.g. +15550100", field="number")
        if self._one("SELECT 1 AS x FROM contacts WHERE number = ?", (number,)):
            raise ToolError(f"{number} is already a contact", code="duplicate", field="number")
        cur = self.db.execute("INSERT INTO contacts (name, number) VALUES (?, ?)", (name, number))
        return {"contact_id": cur.lastrowid, "name": name, "number": number}

    @tool
    def send_sms(self, to: Annotated[str, Field(min_length=1, max_length=100)], body: Text) -> dict[str, Any]:
        """Send a text message.

        Args:
            to: A contact's name or an E.164 number (+15550100).
            body: The message text.
        """
        return self._send(to, body)

    @tool
    def read_thread(self, contact: Annotated[str, Field(min_length=1, max_length=100)]) -> dict[str, Any]:
        """The text messages with one contact or number, oldest first; marks incoming ones read.

        Args:
            contact: A contact's name or an E.164 number.
        """
        number, name = self._number(contact, "contact")
        self.db.execute("UPDATE sms SET read = 1 WHERE number = ? AND direction = 'in'", (number,))
        rows = self.query("SELECT id, direction, body, sent_at FROM sms WHERE number = ? ORDER BY id", (number,))
        return {"number": number, "name": name, "messages": rows}

    @tool(read_only=True)
    def search_messages(self, query: Annotated[str, Field(min_length=1, max_length=200)]) -> list[dict[str, Any]]:
        """Text messages whose body contains `query` (case-insensitive), newest first.

        Args:
            query: The words to look for.
        """
        return self.query(
            "SELECT s.id, s.number, c.name, s.direction, s.body, s.sent_at FROM sms s "
            "LEFT JOIN contacts c ON c.number = s.number WHERE s.body LIKE ? ORDER BY s.id DESC",
            (f"%{query}%",),
        )

    # ---- notifications --------------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_notifications(self, include_dismissed: bool = False) -> list[dict[str, Any]]:
        """Notifications, newest first (silenced ones arrived during do not disturb).

        Args:
            include_dismissed: Also list dismissed ones.
        """
        where = "" if include_dismissed else "WHERE dismissed = 0"
        return self.query(f"SELECT * FROM notifications {where} ORDER BY id DESC")

    @tool
    def dismiss_notification(self, notification_id: int) -> dict[str, Any]:
        """Dismiss one notification.

        Args:
            notification_id: Its id (see list_notifications).
        """
        cur = self.db.execute(
            "UPDATE notifications SET dismissed = 1 WHERE id = ? AND dismissed = 0", (notification_id,)
        )
        if cur.rowcount == 0:
            raise ToolError(f"no open notification {notification_id}", code="not_found", field="notification_id")
        return {"dismissed": notification_id}

    # ---- calendar -------------------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_events(self, day: date | None = None, query: str = "") -> list[dict[str, Any]]:
        """Calendar events in start order, optionally on one day (UTC) and/or whose title contains `query`.

        Args:
            day: Only events starting that day, YYYY-MM-DD.
            query: Part of the title.
        """
        prefix = f"{day.isoformat()}%" if day else "%"
        return self.query(
            "SELECT * FROM events WHERE start LIKE ? AND title LIKE ? ORDER BY start, event_id",
            (prefix, f"%{query}%"),
        )

    @tool
    def create_event(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200)],
        start: datetime,
        end: datetime,
        location: str = "",
    ) -> dict[str, Any]:
        """Add an event to the calendar.

        Args:
            title: What it is.
            start: When it starts (ISO 8601; UTC when no offset is given).
            end: When it ends; after `start`.
            location: Where.
        """
        begins, ends = self._times(start, end)
        cur = self.db.execute(
            "INSERT INTO events (title, start, end, location) VALUES (?, ?, ?, ?)", (title, begins, ends, location)
        )
        return {"event_id": cur.lastrowid, "title": title, "start": begins, "end": ends, "location": location}

    @tool
    def move_event(self, event_id: int, start: datetime, end: datetime) -> dict[str, Any]:
        """Reschedule an event.

        Args:
            event_id: The event (see list_events).
            start: The new start (ISO 8601).
            end: The new end; after `start`.
        """
        self._event(event_id)
        begins, ends = self._times(start, end)
        self.db.execute("UPDATE events SET start = ?, end = ? WHERE event_id = ?", (begins, ends, event_id))
        return self._event(event_id)

    @tool
    def delete_event(self, event_id: int) -> dict[str, Any]:
        """Remove an event from the calendar.

        Args:
            event_id: The event (see list_events).
        """
        self._event(event_id)
        self.db.execute("DELETE FROM events WHERE event_id = ?", (event_id,))
        return {"deleted": event_id}

    # ---- settings -------------------------------------------------------------------------------------------
    @tool
    def set_wifi(self, on: bool) -> dict[str, str]:
        """Turn Wi-Fi on or off.

        Args:
            on: True for on.
        """
        return self._set_setting("wifi", on)

    @tool
    def set_do_not_disturb(self, on: bool) -> dict[str, str]:
        """Turn do not disturb on (new notifications arrive silenced) or off.

        Args:
            on: True for on.
        """
        return self._set_setting("do_not_disturb", on)

    # ---- the screen -----------------------------------------------------------------------------------------
    def _screen_row(self) -> dict[str, Any]:
        return self._one("SELECT view, target, focus, draft FROM screen") or {
            "view": "home",
            "target": None,
            "focus": None,
            "draft": "{}",
        }

    def _show(
        self, view: str, target: str | None = None, focus: str | None = None, draft: dict[str, str] | None = None
    ) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO screen (id, view, target, focus, draft) VALUES (1, ?, ?, ?, ?)",
            (view, target, focus, json.dumps(draft or {})),
        )

    def _elements(self, view: str, target: str | None, draft: dict[str, str]) -> tuple[str, list[screen.Element]]:
        """(title, elements) of a view."""
        if view == "messages":
            threads = self.query(
                "SELECT s.number, c.name, s.body FROM sms s LEFT JOIN contacts c ON c.number = s.number "
                "WHERE s.id IN (SELECT MAX(id) FROM sms GROUP BY number) ORDER BY s.id DESC"
            )
            return "Messages", screen.messages(threads)
        if view == "thread":
            rows = self.query("SELECT * FROM sms WHERE number = ? ORDER BY id", (target,))
            name = self._one("SELECT name FROM contacts WHERE number = ?", (target,))
            return (name["name"] if name else str(target)), screen.thread(rows, draft.get("compose", ""))
        if view == "calendar":
            return "Calendar", screen.calendar(self.query("SELECT * FROM events ORDER BY start, event_id"))
        if view == "event":
            row = self._one("SELECT * FROM events WHERE event_id = ?", (int(target or 0),))
            return (row["title"], screen.event(row, draft)) if row else ("Event deleted", [])
        if view == "contacts":
            return "Contacts", screen.contacts(self.query("SELECT * FROM contacts ORDER BY name"))
        if view == "settings":
            values = {r["key"]: r["value"] for r in self.query("SELECT key, value FROM settings")}
            return "Settings", screen.settings(values)
        if view == screen.STORE:
            installed = {r["app_id"]: bool(r["system"]) for r in self.query("SELECT app_id, system FROM apps")}
            return "Store", screen.store(self.query("SELECT * FROM store_apps ORDER BY app_id"), installed)
        if view == "home":
            return "Home", screen.home(self.query("SELECT app_id, name FROM apps ORDER BY position"))
        return view.title(), []

    def _describe_screen(self) -> dict[str, Any]:
        row = self._screen_row()
        draft = json.loads(row["draft"])
        title, elements = self._elements(row["view"], row["target"], draft)
        unread = self._one("SELECT COUNT(*) AS n FROM notifications WHERE dismissed = 0 AND silenced = 0")
        return {
            "view": row["view"],
            "title": title,
            "focus": row["focus"],
            "elements": [e.to_dict() for e in elements],
            "status_bar": {
                "time": self._stamp(),
                "wifi": self._setting("wifi"),
                "do_not_disturb": self._setting("do_not_disturb"),
                "notifications": unread["n"] if unread else 0,
            },
        }

    @tool(read_only=True)
    def read_screen(self) -> dict[str, Any]:
        """What the screen shows: the view, its title, each element (id, type, label, value) and the status bar.
        Tap elements by id; type into the focused text field."""
        return self._describe_screen()

    @tool
    def go_home(self) -> dict[str, Any]:
        """Go to the home screen."""
        self._show("home")
        return self._describe_screen()

    @tool
    def go_back(self) -> dict[str, Any]:
        """Go back one screen (a thread to Messages, an event to Calendar, anything else to home)."""
        self._show(screen.PARENT.get(self._screen_row()["view"], "home"))
        return self._describe_screen()

    @tool
    def open_app(self, app_id: AppId) -> dict[str, Any]:
        """Open an installed app on its main screen.

        Args:
            app_id: The app's id (the home screen's icons are `app:<app_id>`).
        """
        self._installed(app_id)
        self._show(screen.APP_VIEWS.get(app_id, app_id))
        return self._describe_screen()

    @tool
    def type_text(self, text: Text) -> dict[str, Any]:
        """Type into the focused text field (tap a field first; tapping clears it).

        Args:
            text: What to type.
        """
        row = self._screen_row()
        if not row["focus"]:
            raise ToolError("no text field is focused; tap one first (read_screen lists them)", code="no_focus")
        draft = json.loads(row["draft"])
        draft[row["focus"]] = draft.get(row["focus"], "") + text
        self._show(row["view"], row["target"], row["focus"], draft)
        return self._describe_screen()

    @tool
    def tap(self, element_id: ElementId) -> dict[str, Any]:
        """Tap an element of the current screen by its id (see read_screen).

        Args:
            element_id: The element's id, e.g. `app:messages`, `toggle:wifi`, `button:send`.
        """
        row = self._screen_row()
        draft: dict[str, str] = json.loads(row["draft"])
        _, elements = self._elements(row["view"], row["target"], draft)
        if element_id not in {e.id for e in elements}:
            visible = ", ".join(e.id for e in elements) or "none"
            raise ToolError(
                f"no element {element_id!r} on the {row['view']} screen (visible: {visible})",
                code="not_on_screen",
                field="element_id",
            )
        kind, _, value = element_id.partition(":")
        outcome: dict[str, Any] = {}
        if kind == "app":
            return self.open_app(value)
        if kind == "thread":
            self.db.execute("UPDATE sms SET read = 1 WHERE number = ? AND direction = 'in'", (value,))
            self._show("thread", value)
        elif kind == "contact":
            contact = self._one("SELECT number FROM contacts WHERE contact_id = ?", (int(value),))
            assert contact is not None
            self._show("thread", contact["number"])
        elif kind == "event":
            self._show("event", value)
        elif kind == "field":
            self._show(row["view"], row["target"], value, {**draft, value: ""})
        elif kind == "toggle":
            self._set_setting(value, self._setting(value) != "on")
        elif kind == "install":
            self.install_app(value)
        elif kind == "uninstall":
            self.uninstall_app(value)
        elif element_id == "button:send":
            outcome["sent"] = self._send(str(row["target"]), draft.get("compose", ""))
            self._show("thread", row["target"])
        elif element_id == "button:save":
            outcome["saved"] = self._save_event(int(row["target"]), draft)
            self._show("event", row["target"])
        elif element_id == "button:delete":
            outcome["deleted"] = self.delete_event(int(row["target"]))
            self._show("calendar")
        return {**outcome, "screen": self._describe_screen()}

    def _save_event(self, event_id: int, draft: dict[str, str]) -> dict[str, Any]:
        current = self._event(event_id)
        values = {f: draft.get(f, str(current[f])) for f in screen.EVENT_FIELDS}
        try:
            start, end = (datetime.fromisoformat(values[f]) for f in ("start", "end"))
        except ValueError:
            raise ToolError(
                "start and end must be ISO 8601 times, e.g. 2026-06-04T15:00:00Z", field="element_id"
            ) from None
        begins, ends = self._times(start, end)
        title = values["title"].strip() or current["title"]
        self.db.execute(
            "UPDATE events SET title = ?, start = ?, end = ? WHERE event_id = ?", (title, begins, ends, event_id)
        )
        return self._event(event_id)

    # ---- messages people can answer -------------------------------------------------------------------------
    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """A sent text (by `send_sms`, or `tap` on Send) tells its recipient, known by number and contact name."""
        sent = result if tool_name == "send_sms" else (result or {}).get("sent") if tool_name == "tap" else None
        if not isinstance(sent, dict):
            return None
        recipients = (sent["to"], *((sent["name"],) if sent.get("name") else ()))
        return Message(self.name, self._owner()["number"], recipients, sent["body"], {"number": sent["to"]})

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """The recipient texts back: an incoming message in the same thread, and a notification."""
        number = str(message.ref.get("number", ""))
        if not E164.match(number):
            raise ToolError(
                "message.ref.number: not a phone number to reply from", code="wrong_message", field="message"
            )
        cur = self.db.execute(
            "INSERT INTO sms (number, direction, body, sent_at, read) VALUES (?, 'in', ?, ?, 0)",
            (number, text, self._stamp()),
        )
        contact = self._one("SELECT name FROM contacts WHERE number = ?", (number,))
        self._notify("messages", contact["name"] if contact else number, text)
        return {"id": cur.lastrowid, "from": number, "body": text}
