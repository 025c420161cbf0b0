"""MongoDB document store for agentenv: run and step records in one MongoDB collection, queried by MongoDB.

Kept light on purpose: pymongo is imported by the backend when it is built, not here.
"""

__version__ = "0.1.0"
