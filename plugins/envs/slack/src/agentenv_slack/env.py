"""`SlackEnv`: a simulated Slack workspace with channels, threads, reactions, DMs and search.

Tools act as the workspace's "me" user (`settings.user_id`, the support agent by default). The world
calls `describe_message` after posts and DMs so simulated people can answer, and `deliver_reply` to
post their answer: a DM back, or a reply in the message's thread.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from agentenv.contracts import Message
from agentenv_runtime import ToolError, tool
from pydantic import BaseModel, ConfigDict, Field

from agentenv_slack.schema import SCHEMA, SEARCH_TABLE
from agentenv_slack.search import fts_match, like_clauses, parse_terms
from agentenv_slack.timestamps import TS_PATTERN, iso
from agentenv_slack.workspace import Workspace

ChannelRef = Annotated[str, Field(min_length=1, max_length=100)]
UserRef = Annotated[str, Field(min_length=1, max_length=254)]
MessageId = Annotated[str, Field(pattern=TS_PATTERN)]
ChannelName = Annotated[str, Field(pattern=r"^#?[A-Za-z0-9][A-Za-z0-9_-]{0,79}$")]
Emoji = Annotated[str, Field(pattern=r"^:?[A-Za-z0-9_+'-]{1,64}:?$")]
PageSize = Annotated[int, Field(ge=1, le=200)]


class SlackSettings(BaseModel):
    """Who the agent is in the workspace."""

    model_config = ConfigDict(extra="forbid")

    # A Field description, not an attribute docstring: reading those makes pydantic parse this file's source.
    user_id: str = Field("U_SUPPORT", description='The acting ("me") user: tools post, react and read as this user.')


class SlackEnv(Workspace):
    """A Slack workspace: public and private channels, threads, reactions, direct messages, search."""

    name: ClassVar[str] = "slack"
    description: ClassVar[str] = (
        "Slack workspace: channels, threaded messages, reactions, direct messages and message search, "
        "acting as one workspace user."
    )
    Settings: ClassVar[type[BaseModel]] = SlackSettings
    schema: ClassVar[str] = SCHEMA

    settings: SlackSettings

    # ---- users -------------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_users(self, query: str | None = None, include_deactivated: bool = False) -> list[dict[str, Any]]:
        """List the workspace's people and bots, optionally filtered by name, handle, email or title.

        Args:
            query: Case-insensitive text to look for in the name, handle, email or title; omit for everyone.
            include_deactivated: Also list deactivated accounts.
        """
        sql = "SELECT * FROM users WHERE (?1 OR deactivated = 0)"
        params: list[Any] = [include_deactivated]
        if query and query.strip():
            haystack = "lower(real_name || ' ' || name || ' ' || coalesce(email, '') || ' ' || title)"
            sql += f" AND instr({haystack}, ?2) > 0"
            params.append(query.strip().lower())
        return [self._user_view(row) for row in self.db.execute(sql + " ORDER BY real_name, id", params)]

    @tool(read_only=True)
    def get_user(self, user: UserRef) -> dict[str, Any]:
        """Get one user's profile.

        Args:
            user: User id (U_SAM), email (sam@acme.example) or handle (@sam).
        """
        return self._user_view(self._user(user, "user"))

    # ---- channels ----------------------------------------------------------------------------------
    @tool(read_only=True)
    def list_channels(self, include_archived: bool = False) -> list[dict[str, Any]]:
        """List public channels and the private channels you belong to.

        Args:
            include_archived: Also list archived (read-only) channels.
        """
        rows = self.db.execute(
            "SELECT c.* FROM conversations c WHERE c.kind != 'dm' AND (?1 OR c.archived = 0) "
            "AND (c.kind = 'public' OR EXISTS "
            "(SELECT 1 FROM members m WHERE m.conversation_id = c.id AND m.user_id = ?2)) ORDER BY c.name",
            (include_archived, self._me()["id"]),
        )
        return [self._channel_view(row) for row in rows]

    @tool(read_only=True)
    def get_channel(self, channel: ChannelRef) -> dict[str, Any]:
        """Get a channel's details and its members.

        Args:
            channel: Channel id (C_SUPPORT) or name (#support).
        """
        conv = self._conversation(channel, "channel")
        self._require_readable(conv, "channel")
        members = self.db.execute(
            "SELECT u.* FROM members m JOIN users u ON u.id = m.user_id WHERE m.conversation_id = ? "
            "ORDER BY u.real_name, u.id",
            (conv["id"],),
        )
        return {
            **self._channel_view(conv),
            "created_by": conv["created_by"],
            "created_at": conv["created_at"],
            "members": [{"id": u["id"], "name": u["name"], "real_name": u["real_name"]} for u in members],
        }

    @tool
    def create_channel(
        self,
        name: ChannelName,
        is_private: bool = False,
        topic: Annotated[str, Field(max_length=250)] = "",
        purpose: Annotated[str, Field(max_length=250)] = "",
        members: Annotated[list[UserRef], Field(max_length=100)] | None = None,
    ) -> dict[str, Any]:
        """Create a channel; you become its first member and may add others right away.

        Args:
            name: Channel name: letters, digits, `-` and `_`, up to 80 characters (stored lowercase,
                a leading `#` is ignored). Must not be taken, even by an archived channel.
            is_private: Make it private: only members can see and post in it.
            topic: Short topic shown at the top of the channel.
            purpose: What the channel is for.
            members: Other users to add (ids, emails or handles).
        """
        me = self._me()
        clean = name.removeprefix("#").lower()
        taken = self.db.execute("SELECT id, archived FROM conversations WHERE name = ?", (clean,)).fetchone()
        if taken is not None:
            state = "an archived channel" if taken["archived"] else "channel"
            raise ToolError(
                f"name: #{clean} is already taken by {state} {taken['id']}; choose another name",
                code="name_taken",
                field="name",
            )
        invited = [me["id"]]
        for index, ref in enumerate(members or []):
            user = self._active_user(ref, f"members.{index}")
            if user["id"] not in invited:
                invited.append(user["id"])
        channel_id = self._new_conversation_id("C")
        self.db.execute(
            "INSERT INTO conversations (id, kind, name, topic, purpose, created_by, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                channel_id,
                "private" if is_private else "public",
                clean,
                topic,
                purpose,
                me["id"],
                iso(self.now()),
            ),
        )
        self.db.executemany(
            "INSERT INTO members (conversation_id, user_id) VALUES (?, ?)", [(channel_id, u) for u in invited]
        )
        return self.get_channel(channel_id)

    @tool
    def join_channel(self, channel: ChannelRef) -> dict[str, Any]:
        """Join a public channel (private channels need an invite from a member).

        Args:
            channel: Channel id or name.
        """
        conv = self._conversation(channel, "channel")
        me = self._me()["id"]
        already = self._is_member(conv["id"], me)
        if not already:
            if conv["kind"] != "public":
                raise ToolError(
                    f"channel: #{conv['name']} is private; ask one of its members to invite you",
                    code="not_member",
                    field="channel",
                )
            if conv["archived"]:
                raise ToolError(
                    f"channel: #{conv['name']} is archived and cannot be joined",
                    code="archived",
                    field="channel",
                )
            self.db.execute("INSERT INTO members (conversation_id, user_id) VALUES (?, ?)", (conv["id"], me))
        return {**self._channel_view(conv), "already_member": already}

    @tool
    def leave_channel(self, channel: ChannelRef) -> dict[str, Any]:
        """Leave a channel you are a member of.

        Args:
            channel: Channel id or name.
        """
        conv = self._conversation(channel, "channel")
        me = self._me()["id"]
        if conv["kind"] == "dm":
            raise ToolError("channel: a direct message cannot be left", code="not_a_channel", field="channel")
        if not self._is_member(conv["id"], me):
            raise ToolError(f"channel: you are not a member of #{conv['name']}", code="not_member", field="channel")
        self.db.execute("DELETE FROM members WHERE conversation_id = ? AND user_id = ?", (conv["id"], me))
        return self._channel_view(conv)

    @tool
    def invite_to_channel(self, channel: ChannelRef, user: UserRef) -> dict[str, Any]:
        """Add someone to a channel you belong to (the way into a private channel).

        Args:
            channel: Channel id or name; you must be a member.
            user: User to add: id, email or handle.
        """
        conv = self._conversation(channel, "channel")
        if conv["kind"] == "dm":
            raise ToolError(
                "channel: people cannot be added to a direct message", code="not_a_channel", field="channel"
            )
        self._require_writable(conv, "channel")
        me = self._me()["id"]
        if not self._is_member(conv["id"], me):
            raise ToolError(f"channel: join #{conv['name']} before inviting others", code="not_member", field="channel")
        invitee = self._active_user(user, "user")
        if self._is_member(conv["id"], invitee["id"]):
            raise ToolError(
                f"user: {invitee['real_name']} ({invitee['id']}) is already in #{conv['name']}",
                code="already_member",
                field="user",
            )
        self.db.execute("INSERT INTO members (conversation_id, user_id) VALUES (?, ?)", (conv["id"], invitee["id"]))
        return {**self._channel_view(conv), "invited": invitee["id"]}

    @tool
    def archive_channel(self, channel: ChannelRef) -> dict[str, Any]:
        """Archive a channel you belong to: it stays readable and searchable but takes no new posts.

        Args:
            channel: Channel id or name.
        """
        conv = self._conversation(channel, "channel")
        if conv["kind"] == "dm":
            raise ToolError("channel: a direct message cannot be archived", code="not_a_channel", field="channel")
        if conv["archived"]:
            raise ToolError(f"channel: #{conv['name']} is already archived", code="archived", field="channel")
        if not self._is_member(conv["id"], self._me()["id"]):
            raise ToolError(
                f"channel: only members can archive #{conv['name']}; join it first",
                code="not_member",
                field="channel",
            )
        self.db.execute("UPDATE conversations SET archived = 1 WHERE id = ?", (conv["id"],))
        return self._channel_view(self._conversation(conv["id"], "channel"))

    # ---- messages ----------------------------------------------------------------------------------
    @tool
    def post_message(self, channel: ChannelRef, text: str, thread_id: MessageId | None = None) -> dict[str, Any]:
        """Post a message in a channel, or a reply in a thread when `thread_id` is given.

        Args:
            channel: Channel id or name. Public channels take posts from anyone; private ones from members.
            text: Message text, 1 to 40,000 characters after trimming whitespace.
            thread_id: Id of a message in the same channel to reply under (a reply's id means its thread).
        """
        conv = self._conversation(channel, "channel")
        me = self._me()["id"]
        self._require_writable(conv, "channel")
        body = self._clean_text(text)
        parent = None
        if thread_id is not None:
            parent_row = self._message(thread_id, "thread_id")
            if parent_row["conversation_id"] != conv["id"]:
                raise ToolError(
                    f"thread_id: message {thread_id} is in {parent_row['conversation_id']}, not in "
                    f"{conv['id']}; reply in the message's own channel",
                    code="wrong_channel",
                    field="thread_id",
                )
            parent = parent_row["thread_ts"] or parent_row["ts"]
        return self._message_view(self._insert_message(conv["id"], me, body, parent))

    @tool(read_only=True)
    def list_messages(
        self, channel: ChannelRef, limit: PageSize = 20, before: MessageId | None = None
    ) -> dict[str, Any]:
        """Read a channel's latest messages (thread replies are counted; read them with get_thread).

        Args:
            channel: Channel id or name.
            limit: How many messages, 1 to 200 (the newest ones before `before`, shown oldest first).
            before: Only messages older than this message id; pass `next_before` to page back.
        """
        conv = self._conversation(channel, "channel")
        self._require_readable(conv, "channel")
        return {"channel": self._channel_view(conv), **self._page(conv["id"], limit, before)}

    @tool(read_only=True)
    def get_thread(self, message_id: MessageId) -> dict[str, Any]:
        """Read a thread: its parent message and every reply, oldest first.

        Args:
            message_id: Id of the thread's parent or of any reply in it.
        """
        row = self._message(message_id, "message_id")
        parent = row["thread_ts"] or row["ts"]
        parent_row = self.db.execute("SELECT * FROM messages WHERE ts = ?", (parent,)).fetchone()
        replies = self.db.execute("SELECT * FROM messages WHERE thread_ts = ? ORDER BY ts", (parent,)).fetchall()
        return {
            "channel": row["conversation_id"],
            "parent": self._messages_view([parent_row])[0],
            "replies": self._messages_view(replies),
        }

    @tool
    def add_reaction(self, message_id: MessageId, emoji: Emoji) -> dict[str, Any]:
        """React to a message with an emoji.

        Args:
            message_id: Id of the message.
            emoji: Emoji name such as `thumbsup`, `eyes` or `white_check_mark` (colons optional).
        """
        row = self._message(message_id, "message_id")
        self._require_writable(self._conversation_row(row["conversation_id"]), "message_id")
        name = emoji.strip(":").lower()
        me = self._me()["id"]
        done = self.db.execute(
            "SELECT 1 FROM reactions WHERE message_ts = ? AND emoji = ? AND user_id = ?",
            (row["ts"], name, me),
        ).fetchone()
        if done:
            raise ToolError(
                f"emoji: you already reacted with :{name}: to message {row['ts']}",
                code="already_reacted",
                field="emoji",
            )
        self.db.execute("INSERT INTO reactions (message_ts, emoji, user_id) VALUES (?, ?, ?)", (row["ts"], name, me))
        return self._message_view(row["ts"])

    @tool
    def remove_reaction(self, message_id: MessageId, emoji: Emoji) -> dict[str, Any]:
        """Take back one of your reactions.

        Args:
            message_id: Id of the message.
            emoji: Emoji name you reacted with (colons optional).
        """
        row = self._message(message_id, "message_id")
        self._require_writable(self._conversation_row(row["conversation_id"]), "message_id")
        name = emoji.strip(":").lower()
        gone = self.db.execute(
            "DELETE FROM reactions WHERE message_ts = ? AND emoji = ? AND user_id = ?",
            (row["ts"], name, self._me()["id"]),
        )
        if gone.rowcount == 0:
            raise ToolError(
                f"emoji: you have not reacted with :{name}: to message {row['ts']}",
                code="no_reaction",
                field="emoji",
            )
        return self._message_view(row["ts"])

    # ---- direct messages ---------------------------------------------------------------------------
    @tool
    def send_dm(self, user: UserRef, text: str) -> dict[str, Any]:
        """Send a direct message to one person (the conversation opens on first use).

        Args:
            user: Recipient: user id, email or handle. Not yourself, not a deactivated account.
            text: Message text, 1 to 40,000 characters after trimming whitespace.
        """
        me = self._me()["id"]
        other = self._active_user(user, "user")
        if other["id"] == me:
            raise ToolError("user: you cannot send a direct message to yourself", code="self_dm", field="user")
        body = self._clean_text(text)
        dm_id = self._open_dm(me, other["id"])
        return self._message_view(self._insert_message(dm_id, me, body, None))

    @tool(read_only=True)
    def list_dms(self) -> list[dict[str, Any]]:
        """List your direct-message conversations, most recently active first."""
        me = self._me()["id"]
        rows = self.db.execute(
            "SELECT c.id, other.user_id AS other, "
            "(SELECT max(ts) FROM messages WHERE conversation_id = c.id) AS last, "
            "(SELECT count(*) FROM messages WHERE conversation_id = c.id) AS n "
            "FROM conversations c JOIN members mine ON mine.conversation_id = c.id AND mine.user_id = ?1 "
            "JOIN members other ON other.conversation_id = c.id AND other.user_id != ?1 "
            "WHERE c.kind = 'dm' ORDER BY last IS NULL, last DESC, c.id",
            (me,),
        ).fetchall()
        result = []
        for row in rows:
            last = self._message_view(row["last"]) if row["last"] else None
            person = self._user_view(self._user(row["other"], "user"))
            result.append({"channel": row["id"], "user": person, "message_count": row["n"], "last_message": last})
        return result

    @tool(read_only=True)
    def read_dm(self, user: UserRef, limit: PageSize = 20, before: MessageId | None = None) -> dict[str, Any]:
        """Read your direct messages with one person.

        Args:
            user: The other person: user id, email or handle.
            limit: How many messages, 1 to 200 (the newest ones before `before`, shown oldest first).
            before: Only messages older than this message id; pass `next_before` to page back.
        """
        other = self._user(user, "user")
        dm = self._dm_between(self._me()["id"], other["id"])
        page: dict[str, Any] = {"messages": [], "has_more": False, "next_before": None}
        if dm is not None:
            page = self._page(dm["id"], limit, before)
        return {"channel": dm["id"] if dm else None, "user": self._user_view(other), **page}

    # ---- search ------------------------------------------------------------------------------------
    @tool(read_only=True)
    def search_messages(
        self,
        query: Annotated[str, Field(min_length=1, max_length=500)],
        channel: ChannelRef | None = None,
        from_user: UserRef | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Search messages you can see (public channels, your private channels and DMs), best match first.

        Args:
            query: Words that must all appear (a word also matches words starting with it);
                wrap several words in double quotes to find them as a phrase.
            channel: Only search this channel (id or name).
            from_user: Only messages by this user (id, email or handle).
            limit: How many matches to return, 1 to 100.
        """
        terms = parse_terms(query)
        if not terms:
            raise ToolError("query: give at least one word with a letter or digit", code="empty_query", field="query")
        me = self._me()["id"]
        where = [
            "(c.kind = 'public' OR EXISTS (SELECT 1 FROM members mm WHERE mm.conversation_id = c.id "
            "AND mm.user_id = ?))"
        ]
        params: list[Any] = [me]
        if channel is not None:
            conv = self._conversation(channel, "channel")
            self._require_readable(conv, "channel")
            where.append("m.conversation_id = ?")
            params.append(conv["id"])
        if from_user is not None:
            where.append("m.user_id = ?")
            params.append(self._user(from_user, "from_user")["id"])
        if self._has_search_index():
            source = f"{SEARCH_TABLE} s JOIN messages m ON m.rowid = s.rowid"
            where.insert(0, f"{SEARCH_TABLE} MATCH ?")
            params.insert(0, fts_match(terms))
            order = f"bm25({SEARCH_TABLE}), m.ts DESC"
        else:
            source = "messages m"
            clause, patterns = like_clauses(terms, "m.text")
            where.insert(0, clause)
            params[:0] = patterns
            order = "m.ts DESC"
        body = f"FROM {source} JOIN conversations c ON c.id = m.conversation_id WHERE {' AND '.join(where)}"
        total = self.db.execute(f"SELECT count(*) {body}", params).fetchone()[0]
        rows = self.db.execute(f"SELECT m.* {body} ORDER BY {order} LIMIT ?", [*params, limit]).fetchall()
        return {"query": query, "total": total, "matches": self._messages_view(rows)}

    # ---- messages people can answer ----------------------------------------------------------------
    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """A DM tells its recipient; a channel post tells the channel's other members.

        `recipients` lists the user ids, then the same people's emails, so a persona trigger keyed by
        either (`U_PRIYA` or `priya@acme.example`) matches; the first recipient is always a user id.
        """
        if tool_name not in ("send_dm", "post_message") or not isinstance(result, dict):
            return None
        conv = self._conversation_row(result["channel"])
        sender = result["user"]
        people = self.db.execute(
            "SELECT u.id, u.email FROM members m JOIN users u ON u.id = m.user_id "
            "WHERE m.conversation_id = ? AND u.id != ? ORDER BY u.id",
            (conv["id"], sender),
        ).fetchall()
        emails = [row["email"] for row in people if row["email"]]
        ref: dict[str, Any] = {
            "kind": "dm" if conv["kind"] == "dm" else "channel",
            "channel": conv["id"],
            "channel_name": conv["name"],
            "message_id": result["id"],
            "thread_id": None if conv["kind"] == "dm" else (result["thread_id"] or result["id"]),
            "sender_email": self._email(sender),
            "recipient_ids": [row["id"] for row in people],
            "recipient_emails": emails,
        }
        recipients = (*ref["recipient_ids"], *emails)
        return Message(env=self.name, sender=sender, recipients=recipients, text=result["text"], ref=ref)

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """Post `sender`'s answer: a DM back to the original sender, or a reply in the channel thread."""
        if message.env != self.name:
            raise ToolError(f"message: it was carried by {message.env!r}, not slack", code="wrong_env", field="message")
        author = self._active_user(sender, "sender")
        body = self._clean_text(text)
        with self._atomic():
            if message.ref.get("kind") == "dm":
                original = self._user(message.sender, "message.sender")
                if original["id"] == author["id"]:
                    raise ToolError("sender: cannot reply to your own direct message", code="self_dm", field="sender")
                ts = self._insert_message(self._open_dm(author["id"], original["id"]), author["id"], body, None)
            else:
                conv = self._conversation_row(str(message.ref.get("channel", "")), "message.ref.channel")
                self._require_writable(conv, "message.ref.channel", author["id"])
                anchor = str(message.ref.get("thread_id") or message.ref.get("message_id") or "")
                parent = self.db.execute(
                    "SELECT * FROM messages WHERE ts = ? AND conversation_id = ?", (anchor, conv["id"])
                ).fetchone()
                if parent is None:
                    raise ToolError(
                        f"message.ref.thread_id: no message {anchor!r} in {conv['id']} to reply to",
                        code="not_found",
                        field="message.ref.thread_id",
                    )
                ts = self._insert_message(conv["id"], author["id"], body, parent["thread_ts"] or parent["ts"])
        return self._message_view(ts)

    # ---- helpers -----------------------------------------------------------------------------------
    def _conversation_row(self, conversation_id: str, field: str = "channel") -> Any:
        """A conversation by exact id, whoever can see it (for the world's own bookkeeping)."""
        row = self.db.execute("SELECT * FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
        if row is None:
            raise ToolError(f"{field}: no conversation {conversation_id!r}", code="not_found", field=field)
        return row

    def _email(self, user_id: str) -> str | None:
        row = self.db.execute("SELECT email FROM users WHERE id = ?", (user_id,)).fetchone()
        return row["email"] if row else None
