"""Ctrl-C: exit status 130, one line saying "interrupted", no traceback, no partial file, no record."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from workflow_helpers import default_sigint

from segbench.commands import cli
from segbench.steps import metrics as metrics_step

ROOT = Path(__file__).resolve().parents[1]


def test_ctrl_c_during_inference_of_the_one_shot_command(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "benchmark.py", "--data", "data", "--checkpoint", "artifacts/best.pt", "--device", "cpu",
         "--emit-submission", str(tmp_path / "out" / "submission.json"), "--work-dir", str(tmp_path / "work")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    lines = []
    for line in process.stderr:  # the floor is scored, inference starts: interrupt it there
        lines.append(line)
        if "] floor" in line:
            time.sleep(0.2)
            process.send_signal(signal.SIGINT)
            break
    err = "".join(lines) + process.stderr.read()
    process.wait(timeout=120)
    assert process.returncode == 130, err
    assert "benchmark.py: interrupted; no submission record was written" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.rglob("*.partial"))


def test_ctrl_c_in_a_cli_step(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(metrics_step, "metrics_document", interrupted)
    assert cli.main(["metrics", "--counts", str(tmp_path / "c.parquet"), "--out", str(tmp_path / "m.json")]) == 130
    err = capsys.readouterr().err
    assert err.startswith("segbench: interrupted") and "Traceback" not in err
    assert not list(tmp_path.iterdir())
