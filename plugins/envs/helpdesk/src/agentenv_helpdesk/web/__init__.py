"""The support desk's web front end (`agentenv_helpdesk.web:app`, a WSGI application): tickets, customers, orders
and refunds as server-rendered pages that read and write the world through the helpdesk's tools. See `app`."""

from agentenv_helpdesk.web.app import app

__all__ = ["app"]
