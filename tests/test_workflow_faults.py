"""Faults of a workflow run: `kill -9` of the whole `snakemake` process group at three moments
and a Ctrl-C, each followed by the documented recovery (the same command again), and the
recovered records byte for byte those of the uninterrupted narrow run (conftest.narrow_run).

One fresh copy of the repository with the narrow configuration (tests/configs/pv-two-models.yaml)
narrowed to its model `best` (workflow_helpers.narrow_copy_for_a_mechanism, as the SLURM run is:
a kill interrupts a job whatever its model; its results table's target plans 17 jobs, 28 with the
baseline), in a folder whose name has a space, a non-ASCII letter and a `;`
(every path in every rule is quoted), goes through the whole sequence, each run redoing only
what the one before left undone, so the module costs about one run of the workflow up to the
results table:

  run 1  killed during an inference shard (some of its masks written); while it is frozen there,
         a second `snakemake` in the folder is refused by Snakemake's lock, which it leaves alone
  run 2  removes the killed run's lock itself (segbench/workflow/runlock.py); killed during a
         metrics job
  run 3  Ctrl-C (SIGINT to the group, as a terminal sends it) during a bootstrap (uncertainty) job
         that has imported its step's code: inside the step, not in the interpreter's start-up,
         where a SIGINT makes Python itself print a fatal error before any of segbench runs
  run 4  killed during the results job (the table, metrics.json)
  run 5  completes

A moment is a job of the named step seen running (its `segbench STEP` process in the group); the
group is then stopped (SIGSTOP) and the job checked again, so the signal lands while it runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from workflow_helpers import copy_env, default_sigint, narrow_copy_for_a_mechanism, pv_records

pytestmark = pytest.mark.workflow
COMMAND = ["snakemake", "--cores", "2", "leaderboard"]  # the results table and the records it reads
STALE = "segbench: removed the lock of a killed run"
ODD_NAME = "check out ü; x"


def group_commands(group: int) -> dict[int, list[str]]:
    """pid -> command line of the live processes in process group `group` (zombies left out: they
    have ended, only their exit status waits to be collected)."""
    commands = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            state, _, pgrp = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:3]
            if int(pgrp) == group and state != "Z":
                commands[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().decode().split("\0")
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended while listed
    return commands


def step_processes(group: int, step: str, cwd: Path) -> dict[Path, int]:
    """The `segbench STEP` processes running in the group: their --out argument -> their pid."""
    return {cwd / argv[argv.index("--out") + 1]: pid
            for pid, argv in group_commands(group).items()
            for i, word in enumerate(argv[:-1]) if Path(word).name == "segbench" and argv[i + 1] == step}


class Run:
    """`COMMAND` in `repo`, in a process group of its own; its output in a log file."""

    def __init__(self, repo: Path, number: int):
        self.repo = repo
        self.log = repo / f"fault-run-{number}.log"
        env = copy_env(repo)
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(COMMAND, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, preexec_fn=default_sigint)

    def output(self) -> str:
        return self.log.read_text()

    def freeze_during(self, step: str, ready: Callable[[dict[Path, int]], bool] = bool) -> None:
        """Stop the whole group while a `segbench STEP` job runs and `ready(its --out -> its pid)`."""
        group = self.process.pid
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the run ended before a '{step}' job was seen:\n{self.output()[-4000:]}")
            if ready(step_processes(group, step, self.repo)):
                os.killpg(group, signal.SIGSTOP)
                if ready(step_processes(group, step, self.repo)):
                    return
                os.killpg(group, signal.SIGCONT)  # it ended between the look and the stop
            time.sleep(0.02)
        raise AssertionError(f"no '{step}' job within 900 s:\n{self.output()[-4000:]}")

    def kill_9(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        assert self.process.wait(timeout=60) == -signal.SIGKILL
        deadline = time.monotonic() + 60
        while group_commands(self.process.pid):  # every job dies with it (a dying one is torn down first)
            assert time.monotonic() < deadline, group_commands(self.process.pid)
            time.sleep(0.05)

    def interrupt(self) -> int:
        """Ctrl-C: SIGINT to every process of the (stopped) group, then let it go on."""
        os.killpg(self.process.pid, signal.SIGINT)
        os.killpg(self.process.pid, signal.SIGCONT)
        return self.process.wait(timeout=300)

    def finish(self) -> str:
        code = self.process.wait(timeout=1800)
        assert code == 0, self.output()[-6000:]
        return self.output()


def lock_files(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / ".snakemake" / "locks").glob("*.lock"))


def refused_beside_a_live_run(repo: Path) -> None:
    """A second `snakemake` while a run lives (here: frozen) fails on the lock and leaves it."""
    before = lock_files(repo)
    env = copy_env(repo)
    second = subprocess.run(COMMAND, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    out = second.stdout + second.stderr
    assert second.returncode == 1, out[-4000:]
    assert "Directory cannot be locked" in out and STALE not in out, out[-4000:]
    assert lock_files(repo) == before and before  # the live run's lock is kept


def inside_the_step(processes: dict[Path, int]) -> bool:
    """A `ready` test: a job of the step has imported the step's own code (pyarrow's library is
    mapped: the command's start-up imports none of it), so it runs inside segbench's handler of an
    interrupt, past the interpreter's start-up, where a SIGINT makes Python itself print a fatal
    error before any of segbench runs."""
    for pid in processes.values():
        try:
            if "libarrow" in Path(f"/proc/{pid}/maps").read_text():
                return True
        except (FileNotFoundError, ProcessLookupError):
            continue
    return False


def shard_has_masks(processes: dict[Path, int]) -> bool:
    return any(any(out.rglob("*.png")) for out in processes)


def test_kill_9_at_three_moments_and_ctrl_c_then_the_same_command_recovers(tmp_path, narrow_run):
    repo = narrow_copy_for_a_mechanism(tmp_path / ODD_NAME)
    first = Run(repo, 1)
    first.freeze_during("infer", shard_has_masks)
    refused_beside_a_live_run(repo)
    first.kill_9()
    assert lock_files(repo)  # what a plain `snakemake` used to fail on
    assert list((repo / ".snakemake" / "incomplete").iterdir())

    second = Run(repo, 2)
    second.freeze_during("metrics")
    assert STALE in second.output()
    second.kill_9()

    third = Run(repo, 3)
    third.freeze_during("uncertainty", inside_the_step)
    assert STALE in third.output()
    code = third.interrupt()
    assert code == 1 and not lock_files(repo), third.output()[-4000:]  # Snakemake released its lock
    assert "Terminating processes on user request" in third.output()
    assert "Traceback" not in third.output()

    fourth = Run(repo, 4)
    fourth.freeze_during("results")
    assert STALE not in fourth.output()  # Ctrl-C left no lock to remove
    fourth.kill_9()

    out = Run(repo, 5).finish()
    assert STALE in out
    for name in pv_records(repo):
        assert (repo / name).read_bytes() == (narrow_run.repo / name).read_bytes(), name
    assert not list((repo / "results").rglob("*.partial")) and not lock_files(repo)
