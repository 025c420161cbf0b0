"""What the phone's screen shows: each view is a list of elements with stable ids that `tap` and `type_text` act on.

A view is a pure function of the phone's state (rows in SQLite) and the `screen` row (which view, its target, the
focused field and the typed draft), so GUI-style agents read exactly what semantic tools would change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

APP_VIEWS = {"messages": "messages", "calendar": "calendar", "contacts": "contacts", "settings": "settings"}
"""Installed app → the view it opens on; other apps open a plain view of their own."""
STORE = "store"
PARENT = {"thread": "messages", "event": "calendar"}
"""Where `go_back` leads from a detail view (everything else goes home)."""
EVENT_FIELDS = ("title", "start", "end")


@dataclass(frozen=True)
class Element:
    id: str
    type: str
    label: str
    value: str | None = None

    def to_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "type": self.type, "label": self.label}
        if self.value is not None:
            shown["value"] = self.value
        return shown


def home(apps: list[dict[str, Any]]) -> list[Element]:
    return [Element(f"app:{a['app_id']}", "icon", a["name"]) for a in apps]


def messages(threads: list[dict[str, Any]]) -> list[Element]:
    return [Element(f"thread:{t['number']}", "list_item", t["name"] or t["number"], t["body"][:60]) for t in threads]


def thread(rows: list[dict[str, Any]], draft: str) -> list[Element]:
    bubbles = [
        Element(f"msg:{r['id']}", "bubble_out" if r["direction"] == "out" else "bubble_in", r["body"], r["sent_at"])
        for r in rows
    ]
    return [
        *bubbles,
        Element("field:compose", "text_field", "Text message", draft),
        Element("button:send", "button", "Send"),
    ]


def calendar(events: list[dict[str, Any]]) -> list[Element]:
    return [Element(f"event:{e['event_id']}", "list_item", e["title"], f"{e['start']} – {e['end']}") for e in events]


def event(row: dict[str, Any], draft: dict[str, str]) -> list[Element]:
    fields = [Element(f"field:{f}", "text_field", f.title(), draft.get(f, str(row[f]))) for f in EVENT_FIELDS]
    return [*fields, Element("button:save", "button", "Save"), Element("button:delete", "button", "Delete")]


def contacts(rows: list[dict[str, Any]]) -> list[Element]:
    return [Element(f"contact:{c['contact_id']}", "list_item", c["name"], c["number"]) for c in rows]


def settings(values: dict[str, str]) -> list[Element]:
    return [
        Element("toggle:wifi", "toggle", "Wi-Fi", values.get("wifi", "off")),
        Element("toggle:do_not_disturb", "toggle", "Do not disturb", values.get("do_not_disturb", "off")),
    ]


def store(catalog: list[dict[str, Any]], installed: dict[str, bool]) -> list[Element]:
    """Install buttons for apps not on the phone; uninstall buttons for installed apps that are not system apps."""
    shown = []
    for app in catalog:
        system = installed.get(app["app_id"])
        if system is None:
            shown.append(Element(f"install:{app['app_id']}", "button", f"Install {app['name']}"))
        elif not system:
            shown.append(Element(f"uninstall:{app['app_id']}", "button", f"Uninstall {app['name']}"))
    return shown
