"""Config beyond the kernel's file: the `AGENTENV_*` variable layer and `agentenv config explain|sources|debug`."""
