"""`HelpdeskEnv`: the support desk app, joining the ticket tools and the commerce tools.

Public ticket comments are messages to the customer, so persona triggers can have the customer
answer them: `describe_message` reports them and `deliver_reply` posts the answer on the ticket.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentenv.contracts import Message
from agentenv_runtime import ToolError

from agentenv_helpdesk.commerce import CommerceDesk
from agentenv_helpdesk.tickets import TicketDesk


class HelpdeskEnv(TicketDesk, CommerceDesk):
    """A customer support desk: accounts, tickets, orders, payments and refunds."""

    name: ClassVar[str] = "helpdesk"
    description: ClassVar[str] = (
        "Customer support desk: look up customers and their orders, work tickets (status, priority, "
        "assignee, public replies and internal notes), verify orders and issue refunds on captured payments."
    )

    def describe_message(self, tool_name: str, arguments: dict[str, Any], result: Any) -> Message | None:
        """A public comment on a ticket is a message from the desk to the ticket's customer."""
        if tool_name != "add_ticket_comment" or not isinstance(result, dict):
            return None
        comment = result.get("comment") or {}
        if not comment.get("public"):
            return None
        row = self.one(
            "SELECT a.email FROM tickets t JOIN accounts a USING (account_id) WHERE t.ticket_id = ?",
            (result["ticket_id"],),
        )
        if row is None:
            return None
        return Message(
            env=self.name,
            sender=comment["author"],
            recipients=(row["email"],),
            text=comment["body"],
            ref={"ticket_id": result["ticket_id"], "comment_id": comment["comment_id"]},
        )

    def deliver_reply(self, message: Message, sender: str, text: str) -> Any:
        """Post `sender`'s answer as a public comment on the same ticket; a waiting ticket reopens."""
        ticket_id = str(message.ref.get("ticket_id", ""))
        if not text.strip():
            raise ToolError("text: a reply needs some text", code="invalid_arguments", field="text")
        self.db.execute("SAVEPOINT reply")
        try:
            ticket = self._editable(ticket_id)
            now = self.stamp()
            comment = self._insert_comment(ticket_id, sender.strip().lower(), text.strip(), public=True, at=now)
            status = "open" if ticket["status"] in ("pending", "solved") else ticket["status"]
            self.db.execute(
                "UPDATE tickets SET status = ?, updated_at = ? WHERE ticket_id = ?", (status, now, ticket_id)
            )
        except BaseException:
            self.db.execute("ROLLBACK TO reply")
            self.db.execute("RELEASE reply")
            raise
        self.db.execute("RELEASE reply")
        return {"ticket_id": ticket_id, "comment": comment}
