"""The distributions this project publishes. On a name two plugins claim, one of these keeps it against an outside
one: decided by distribution name, which two installed distributions can never share, not by metadata an outside
author can copy (a Homepage URL) nor by the order of names. `kernel/tests/test_kernel_first_party.py` keeps it in step
with the workspace."""

FIRST_PARTY = frozenset(f"agentenv-{name}" for name in (
    "a2a", "agents", "aws", "browser", "claude-code", "codex", "coding", "docker", "e2b", "email", "explorer",
    "gateway", "gcp", "harness", "hello", "helpdesk", "kernel", "mcp", "miniwob", "modal", "model-standin",
    "openenv", "ray", "retail", "rl", "runtime", "sandbox-local", "slack", "steps", "store-local", "store-mongo",
    "support-desk", "tau2", "testing", "validators", "web-desk", "website", "workspace"
))  # fmt: skip
