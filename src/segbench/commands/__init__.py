"""The entry points: the `segbench` command (one subcommand per step) and the one-shot command."""

import sys

INTERRUPTED = "segbench: interrupted (every output is written whole or not at all: none was left half-written)"


def main() -> int:
    """The `segbench` console script. A workflow's Ctrl-C reaches every job at once, some of them still
    loading the command: that is an interrupt like any other, said in one line, never a traceback."""
    try:
        from .cli import main as run_command

        return run_command()
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
