"""The workflow's side: the config, the plan of jobs, DVC pins, code dependencies, the results tree's check."""
