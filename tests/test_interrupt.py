"""Ctrl-C: exit status 130, one line saying "interrupted", no traceback, no partial file, no record."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import tomllib
import types
from pathlib import Path

from workflow_helpers import default_sigint

from segbench import commands
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


class LoadingInterrupted(types.ModuleType):
    """A module whose loading Ctrl-C interrupts: what a job that had just started meets when a workflow's
    Ctrl-C reaches every job at once."""

    def __getattr__(self, name):
        raise KeyboardInterrupt


def test_ctrl_c_while_the_command_is_still_loading(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "segbench.commands.cli", LoadingInterrupted("segbench.commands.cli"))
    assert commands.main() == 130
    assert capsys.readouterr().err == commands.INTERRUPTED + "\n"


def test_the_console_script_is_the_entry_that_reports_an_interrupt_while_loading():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["segbench"] == f"{commands.__name__}:{commands.main.__name__}"
