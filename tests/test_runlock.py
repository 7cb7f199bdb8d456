"""segbench.workflow.runlock: a killed run's Snakemake lock is removed, a live run's never. Each
party is a process of its own (record locks are per process, and the kernel drops a dead one's)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

CLAIM = "import sys; from pathlib import Path; from segbench.workflow.runlock import claim_folder; "


def claim(state: Path) -> list[str]:
    """claim_folder in a new process that then ends: the names of the lock files it removed."""
    code = CLAIM + "print(*(p.name for p in claim_folder(Path(sys.argv[1]))))"
    done = subprocess.run([sys.executable, "-c", code, str(state)], capture_output=True, text=True, check=True)
    return done.stdout.split()


def live_run(state: Path) -> subprocess.Popen:
    """A process that has claimed the folder and lives on (as a running snakemake does)."""
    code = CLAIM + "claim_folder(Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
    process = subprocess.Popen([sys.executable, "-c", code, str(state)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "held\n"
    return process


def snakemake_lock(state: Path) -> list[str]:
    """Lock files as Snakemake writes them, and what else its folder holds."""
    (state / "locks").mkdir(parents=True, exist_ok=True)
    for name in ("0.input.lock", "0.output.lock"):
        (state / "locks" / name).write_text("results/x\n")
    (state / "incomplete").mkdir(exist_ok=True)
    return sorted(p.name for p in (state / "locks").iterdir())


def test_a_lock_without_a_live_run_is_removed(tmp_path):
    state = tmp_path / ".snakemake"
    assert claim(state) == []  # a new folder: nothing to remove
    snakemake_lock(state)
    assert claim(state) == ["0.input.lock", "0.output.lock"]
    assert list((state / "locks").iterdir()) == [] and (state / "incomplete").is_dir()  # only the lock


def test_a_live_runs_lock_is_kept_and_removed_once_it_is_killed(tmp_path):
    state = tmp_path / ".snakemake"
    run = live_run(state)
    names = snakemake_lock(state)
    second = live_run(state)  # a second run beside it (other targets): both hold the run lock
    assert claim(state) == []
    run.kill()  # kill -9
    run.wait()
    assert claim(state) == [] and sorted(p.name for p in (state / "locks").iterdir()) == names  # the second lives
    second.send_signal(signal.SIGKILL)
    second.wait()
    assert claim(state) == names
