"""The bundle's repositories carry their own tests (some fail on purpose: they are the bugs to fix); they are
task data, run inside workspaces by the tasks, never collected by the project's pytest."""

collect_ignore_glob = ["src/*"]
