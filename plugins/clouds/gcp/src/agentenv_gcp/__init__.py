"""Google Cloud store backends for agentenv: Firestore documents, Cloud Storage objects, Secret Manager secrets.

Kept light on purpose: the google-cloud SDKs are imported by the backends when they are built, not here.
"""

__version__ = "0.1.0"
