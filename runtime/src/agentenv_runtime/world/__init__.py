"""The world runtime: envs composed into one world with a clock, triggers, roles and a trajectory."""
