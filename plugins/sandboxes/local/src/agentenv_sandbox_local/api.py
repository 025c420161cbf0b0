"""The public API of agentenv-sandbox-local for other plugins: import from here, not from the other modules.

agentenv-docker declares it: it records the process that creates a container (pid and start time) and asks,
before pruning, whether that process still runs, as the inline and process sandboxes do with their state files.
"""

from agentenv_sandbox_local.procs import process_alive, start_time

__all__ = ["process_alive", "start_time"]
