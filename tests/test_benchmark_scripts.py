"""Every script in benchmarks/ runs at its smallest settings: it exits 0 and prints its figures.

The figures' lines are checked, not their values (those depend on the machine). The two workflow
benchmarks run the whole workflow, minutes even on a few frames, so they are run in their
--plan-only mode (copy, generate, configure, plan) under the `workflow` marker.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("*.py"))
HELPERS = {"copies.py", "masks.py", "timing.py"}  # imported by the scripts, not run


def run_script(name: str, *args: str, timeout: int = 600) -> str:
    """The script's stdout + stderr; fails the test unless it exits 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(BENCHMARKS / name), *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{name} {' '.join(args)} exited {done.returncode}:\n{output[-4000:]}"
    return output


def assert_lines(output: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, output, re.MULTILINE), f"no line matching {pattern!r} in:\n{output[-4000:]}"


def test_every_script_is_tested():
    tested = {name for name in SCRIPTS if f"test_{name[:-3]}" in globals()}
    assert set(SCRIPTS) - HELPERS == tested


def test_scoring_speed(tmp_path):
    out = run_script("scoring_speed.py", "--pairs", "4", "--rounds", "1", "--cache", str(tmp_path))
    assert_lines(out, r"^segbench scoring +\d+\.\d{3} +\d+\.\d\d +\d+\.\d\d$",
                 r"^segbench scoring, boundary IoU on +\d", r"^fastest decode, all cores +\d",
                 r"every cell of every frame: True$", r"^  segbench <= 1\.05 x fastest decode \(all cores\): \d+\.\d{3}",
                 r"^  segbench with boundary IoU on <= 1\.3 x fastest decode \(all cores\): \d+\.\d{3}")


PEER_LINES = (r"^segbench, \d+ threads +\d+\.\d{3} +\d+\.\d\d +1\.00 +\d+\.\d\d$",
              r"^segbench, 1 thread +\d", r"^torchmetrics MulticlassJaccardIndex +\d", r"^mmseg-style histc +\d",
              r"^  torchmetrics confusion matrix == segbench's K x K, cell for cell: True$",
              r"^  mmseg-style areas == segbench's: True$", r"^  with predicted void: mmseg-style areas == segbench's: True$",
              r"^  torchmetrics MulticlassJaccardIndex: \d+\.\dx$", r"^  mmseg-style histc: \d+\.\dx$")


def test_peers(tmp_path):
    out = run_script("peers.py", "--pairs", "3", "--rounds", "1", "--cache", str(tmp_path))
    assert_lines(out, *PEER_LINES, r"^  HF evaluate mean_iou: skipped: no --evaluate-metric PATH\.")
    assert "HF evaluate mean_iou " not in out  # not timed without the script


def test_peers_with_hf_evaluate(tmp_path):
    """With a local copy of the Hub's mean_iou script (its path in SEGBENCH_MEAN_IOU_SCRIPT: this
    machine has none and nothing may be downloaded, so without it the case is skipped)."""
    script = os.environ.get("SEGBENCH_MEAN_IOU_SCRIPT")
    if not script:
        pytest.skip("SEGBENCH_MEAN_IOU_SCRIPT (a local copy of evaluate-metric/mean_iou's mean_iou.py) is not set")
    out = run_script("peers.py", "--pairs", "3", "--rounds", "1", "--cache", str(tmp_path), "--evaluate-metric", script)
    assert_lines(out, *PEER_LINES, r"^HF evaluate mean_iou +\d", r"^  HF evaluate areas == segbench's: True$",
                 r"^  HF evaluate per-class IoU == segbench's \(NaN for the same classes\): True$",
                 r"^  with predicted void: HF evaluate areas == segbench's: True$", r"^  HF evaluate mean_iou: \d+\.\dx$")


def test_scoring_memory(tmp_path):
    out = run_script("scoring_memory.py", "--frames", "2", "4", "--pool", "2", "--cache", str(tmp_path))
    assert_lines(out, r"^ +2 +\d+ MiB +\d+ MiB +-?\d+ MiB +\d+\.\d +\d+$", r"^ +4 +\d+ MiB +\d+ MiB",
                 r"^target: peak <= 300 MiB at 4 frames: \d+ MiB")
    copies = list(tmp_path.glob("copied-*/*/*.png"))  # per count a folder of pairs: (2 + 4) x 2 files
    assert len(copies) == 12 and all(p.stat().st_nlink == 1 for p in copies)


def test_idd_scoring(tmp_path):
    out = run_script("idd_scoring.py", "--frames", "3", "--pool", "2", "--cache", str(tmp_path))
    assert_lines(out, r"^segbench \(decode, resize, count, all reports\), all cores: \d+\.\d\d s",
                 r"^reference per-pixel loop, one core .*: \d+\.\d{3} s per pair",
                 r"identical to the reference: True$", r"^per-frame matrices identical for every distinct pair: True$",
                 r"^target: >= 50x the reference on one core: \d+x")


def test_inference_speed(tmp_path):
    out = run_script("inference_speed.py", "--frames", "2", "--rounds", "1", "--json", str(tmp_path / "f.json"))
    assert_lines(out, r"^pipeline frames/s: \[[\d.]+\]  median [\d.]+$", r"^bare     frames/s: \[[\d.]+\]",
                 r"^ratio per round: +\[[\d.]+\]  median [\d.]+ \(target >= 0\.9: (met|NOT met)\)$",
                 r"^CPU time per frame \(all threads\): pipeline [\d.]+ ms")
    assert "WARNING" not in out and (tmp_path / "f.json").is_file()


def test_inference_speed_kinds_and_modes():
    out = run_script("inference_speed.py", "--kinds-and-modes", "--frames", "1", "--rounds", "1",
                     "--scales", "0.5", "1.0", "--crop", "128", "128", "--window-stride", "128", "128")
    for name in ("kind checkpoint (PyTorch)", "kind torchscript", "kind onnx (onnxruntime)", "mode whole",
                 "mode slide", "mode multi-scale", "mode multi-scale +flip"):
        assert_lines(out, rf"^  {re.escape(name)} +\d+\.\d\d frames/s$")


@pytest.mark.workflow
def test_workflow_scale(tmp_path):
    out = run_script("workflow_scale.py", "--frames", "16", "--frames-per-wall", "4", "--workdir",
                     str(tmp_path / "w"), "--plan-only")
    assert_lines(out, r"^  infer +\d+$", r"^  total +\d+$", r"^dry run on the fresh state: \d+\.\d\d s")


@pytest.mark.workflow
def test_workflow_changes(tmp_path):
    out = run_script("workflow_changes.py", "--frames", "16", "--workdir", str(tmp_path / "w"), "--plan-only")
    assert_lines(out, r"^  infer +\d+$", r"^  total +\d+$", r"^--plan-only: the full run and the changes are not made$")


MEAN = (r"mean: kept [\d.]+ +public [+-]\d\.\d{4} ± \d\.\d{4} +private [+-]\d\.\d{4} ± \d\.\d{4} +"
        r"gap [+-]\d\.\d{4} ± \d\.\d{4} \(SE \d\.\d{4}: [+-]\d+\.\d\d ± \d+\.\d\d SE\)$")


def test_ladder_attack():
    out = run_script("ladder_attack.py", "--walls", "10", "--frames-per-wall", "2", "--mixes", "20", "--attacks", "2",
                     "--resamples", "50")
    assert_lines(out, r"^10 walls x 2 frames, private fraction [\d.]+, 20 mixes, 2 attacks, 50 resamples$",
                 *(rf"^{board} +{MEAN}" for board in ("naive", "ladder", "ladder, naive rule")),
                 r"^target naive: gap > 3 SE: (met|MISSED)$", r"^target ladder: \|gap\| <= 1 SE: (met|MISSED)$")


def test_ladder_attack_through_the_server(tmp_path):
    # Blum & Hardt's attack on the Ladder through a server's API (uploads, the public board) gives
    # the engine's replay exactly: the same kept mixes, reference and gains from the stored counts
    # (which walls are public, and so what is kept, follows the deployment's random host secret)
    out = run_script("ladder_attack.py", "--walls", "10", "--frames-per-wall", "4", "--mixes", "10", "--attacks", "1",
                     "--resamples", "50", "--server", str(tmp_path / "served"))
    assert_lines(out, rf"^ladder, server +{MEAN}", r"^server and engine: the same kept mixes, reference and gains "
                                                   r"in 1 of 1 attacks$")
    rows = {board: row.split(": ", 1)[1].rsplit("  [", 1)[0] for row in out.splitlines()
            for board in ("ladder, server", "ladder") if re.match(rf"^{board} +attack 0: ", row)}
    assert rows["ladder, server"] == rows["ladder"]


def test_server_speed():
    out = run_script("server_speed.py", "--uploads", "1", "--resamples", "1", "--intake", "2", "--reads", "4",
                     "--entries", "5", "--copies", "2", "--idd-copies", "1", "--processes", "2")
    worker = (r"\d+\.\d ms per upload \(median of 1; the first after its start \d+\.\d ms\); decoding its masks and "
              r"labels: \d+\.\d\d ms; ratio \d+\.\d\d x \(its masks alone \d+\.\d\d ms: \d+\.\d\d x\); the CLI's scorer on "
              r"it \d+\.\d ms \(\d+\.\d\d x the decode\); CPU: worker \d+ ms, scorer \d+ ms$")
    assert_lines(out, r"^worker, painting-vision, 1 resamples, 16 frames \(4 units\): " + worker,
                 r"^worker, painting-vision, 1 resamples, 32 frames \(8 units\): " + worker,
                 r"^worker, idd20k-icvgip2020, 1 resamples, 4 frames \(2 units\): " + worker,
                 r"^intake: 2 uploads \(\d+ bytes, \d+ masks each\) accepted in \d+\.\d s by 8 clients: \d+\.\d uploads/s$",
                 r"^leaderboard: the first read, which builds the board, \d+ ms$",
                 r"^leaderboard: 6 entries, 2 server process\(es\), 50 readers, 4 reads in \d+\.\d s \(\d+\.\d/s\): p50 \d+ ms, p95 \d+ ms; "
                 r"CPU per read: server \d+\.\d\d ms, client \d+\.\d\d ms; answers not 200: none$",
                 r"^leaderboard, revalidating: 6 entries, 2 server process\(es\), 50 readers, 4 reads in \d+\.\d s \(\d+\.\d/s\): p50 \d+ ms, "
                 r"p95 \d+ ms; CPU per read: server \d+\.\d\d ms, client \d+\.\d\d ms; answers not 304: none$",
                 r"^target worker <= 1\.2 x decode, by upload: (met|MISSED) at painting-vision 16 frames \(\d+\.\d\d x\); "
                 r"(met|MISSED) at painting-vision 32 frames \(\d+\.\d\d x\); (met|MISSED) at idd20k-icvgip2020 4 frames "
                 r"\(\d+\.\d\d x\)$",
                 r"^target leaderboard p95 <= 50 ms, every answer 200 \(304 revalidating\): (met|MISSED)$")


def test_rescore_scale():
    out = run_script("rescore_scale.py", "--submissions", "4", "--frames", "40", "--frames-per-wall", "4",
                     "--distinct", "2", "--whole", "2")
    assert_lines(out, r"^setup: 4 stored submissions of 40 frames \(10 walls\), 4 distinct uploads from 2 bases, "
                      r"made in \d+\.\d s; 2 resamples$",
                 r"^rescore command: 1 label\(s\) changed, 0 frame\(s\) added, 0 removed, 4 re-scores queued in "
                 r"\d+\.\d s$",
                 # a worker reads each label once and keeps it (stages/truth.py): the changed one once per worker
                 r"^incremental, 1 worker\(s\): \d+\.\d s \(\d+ ms per submission\), 4 masks decoded, 1 labels read, "
                 r"peak RSS \d+ MiB, load \d+\.\d$",
                 r"^incremental, 2 worker\(s\): \d+\.\d s \(\d+ ms per submission\), 4 masks decoded, [12] labels read, "
                 r"peak RSS \d+ / \d+ MiB, load \d+\.\d$",
                 r"^everything, 1 worker\(s\): \d+\.\d s for 2 submissions \(\d+ ms each; \d+\.\d s for all 4\), "
                 r"80 masks decoded, 40 labels read, peak RSS \d+ MiB, load \d+\.\d$",
                 r"^everything, 2 worker\(s\): \d+\.\d s for 2 submissions",
                 r"^1 worker\(s\): incremental \d+\.\d s against everything \d+\.\d s: \d+\.\d x faster$",
                 r"^counts of the 2 scored whole: the rows of their incremental re-score in 2$",
                 r"^target masks decoded = 4 \(one per submission\): met$")
