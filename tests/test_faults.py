"""kill -9 of the one-shot command at three moments (during the floor, during inference, during
scoring), each followed by the documented recovery (the same command again): no record is ever
left by a killed run, and the recovered records are byte for byte those of an uninterrupted run.

One work folder goes through the whole sequence; the uninterrupted run is the reference.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOMENTS = ("] audit", "] floor", "] inference: best")  # stderr lines after which the run is killed


def command(folder: Path) -> list[str]:
    return [sys.executable, "benchmark.py", "--data", "data", "--checkpoint", "artifacts/best.pt", "--device", "cpu",
            "--dataset-manifest", "data_manifest.json", "--emit-submission", str(folder / "out" / "submission.json"),
            "--work-dir", str(folder / "work")]


def killed_after(folder: Path, moment: str) -> str:
    process = subprocess.Popen(command(folder), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if moment in line:
            process.send_signal(signal.SIGKILL)
            break
    process.wait(timeout=300)
    assert process.returncode == -signal.SIGKILL, "".join(seen)  # killed, not finished first
    return "".join(seen)


def test_kill_9_at_three_moments_then_the_same_command_recovers(tmp_path):
    reference = tmp_path / "reference"
    done = subprocess.run(command(reference), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    faulted = tmp_path / "faulted"
    for moment in MOMENTS:
        killed_after(faulted, moment)
        assert not (faulted / "out").exists() or not any((faulted / "out").iterdir()), f"a record after {moment!r}"
    done = subprocess.run(command(faulted), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (faulted / "out" / "submission.json").read_bytes() == (reference / "out" / "submission.json").read_bytes()
    assert not list(faulted.rglob("*.partial"))  # what the killed runs left half-written was re-made
