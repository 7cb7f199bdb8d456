"""The entry points: the `segbench` command (one subcommand per step) and the one-shot command."""
