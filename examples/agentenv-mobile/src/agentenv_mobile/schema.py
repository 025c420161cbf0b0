"""The phone's tables. Everything a tool can change is a row here, so snapshot, restore and fork are memory copies."""

SCHEMA = """
CREATE TABLE owner (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    number TEXT NOT NULL
);
CREATE TABLE store_apps (
    app_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE apps (
    app_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    system INTEGER NOT NULL DEFAULT 0,
    position INTEGER NOT NULL
);
CREATE TABLE contacts (
    contact_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    number TEXT NOT NULL UNIQUE
);
CREATE TABLE sms (
    id INTEGER PRIMARY KEY,
    number TEXT NOT NULL,
    direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
    body TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY,
    app_id TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    at TEXT NOT NULL,
    silenced INTEGER NOT NULL DEFAULT 0,
    dismissed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE events (
    event_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    start TEXT NOT NULL,
    end TEXT NOT NULL,
    location TEXT NOT NULL DEFAULT ''
);
CREATE TABLE settings (
    key TEXT PRIMARY KEY CHECK (key IN ('wifi', 'do_not_disturb')),
    value TEXT NOT NULL CHECK (value IN ('on', 'off'))
);
CREATE TABLE screen (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    view TEXT NOT NULL,
    target TEXT,
    focus TEXT,
    draft TEXT NOT NULL DEFAULT '{}'
);
"""
