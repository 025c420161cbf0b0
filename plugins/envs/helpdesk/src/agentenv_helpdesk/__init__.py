"""agentenv-helpdesk: a simulated customer support desk (tickets, orders, payments, refunds).

Kept import-free so plugin discovery stays fast; the env lives in `agentenv_helpdesk.env`.
"""

__version__ = "0.1.0"
