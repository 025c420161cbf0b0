"""Tasks and runs: task files, bundles, the DAG engine and run records."""
