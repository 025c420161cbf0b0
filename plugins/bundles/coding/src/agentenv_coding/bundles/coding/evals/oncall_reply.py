"""The on-call reply: the fix is committed, and the thread under the page names that commit."""

import subprocess

PAGE = "1767261600.000100"


def verify(world):
    workspace, slack = world.env("workspace"), world.env("slack")
    git = ["git", "-C", str(workspace.root)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    commits = subprocess.run([*git, "rev-list", "--count", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run([*git, "show", "--stat", "--format=", "HEAD"], capture_output=True, text=True).stdout
    replies = [row[0] for row in slack.db.execute("SELECT text FROM messages WHERE thread_ts = ?", (PAGE,))]
    named = bool(head) and any(head[:7] in text for text in replies)
    return {
        "the fix is committed": commits not in ("", "1") and "pricing.py" in changed,
        "the thread reply names the commit": named,
    }
