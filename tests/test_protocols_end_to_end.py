"""The one-shot command (benchmark.py) on the IDD20K and EasyPortrait benchmarks, on their
synthetic datasets in the exact on-disk format, with a small untrained checkpoint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from segbench.commands.oneshot import main
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_benchmark
from segbench.synthetic import easyportrait
from segbench.synthetic.training import IMAGENET

CASES = {
    "idd20k-icvgip2020": ("synthetic_idd", "idd:", ["level3", "level2", "level1_reference", "level1_corrected"]),
    "easyportrait": ("synthetic_ep", "ep:", ["easyportrait_9", "easyportrait_fp8", "easyportrait_ps2"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_shot(tmp_path, capsys, request, name):
    dataset, prefix, reports = CASES[name]
    benchmark = load_benchmark(name)
    data = request.getfixturevalue(dataset)  # the conftest's build, read only: the run writes to tmp_path
    torch.manual_seed(0)
    model = build("tiny-segnet", {"widths": [4, 8, 8]}, num_classes=benchmark.ground_truth.size)
    checkpoint = tmp_path / "model.pt"
    save_checkpoint(checkpoint, model, "tiny-segnet", {"widths": [4, 8, 8]}, benchmark.ground_truth, IMAGENET)
    record_path = tmp_path / "submission.json"
    code = main(["--benchmark", name, "--data", str(data), "--checkpoint", str(checkpoint), "--split", "test",
                 "--device", "cpu", "--work-dir", str(tmp_path / "work"), "--emit-submission", str(record_path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    record = json.loads(record_path.read_text())
    assert record["benchmark"] == name and record["split"] == "test" and record["frames"] == 4
    assert record["dataset_id"].startswith(prefix)
    assert record["inference_size"] == benchmark.inference_size
    assert [k for k in record if k in reports] == reports
    assert record["floor"]["metric"] == ".".join(benchmark.floor_compare_on)
    assert record["floor"]["value"] is not None  # every class of the ground truth is in the synthetic test split
    # the workflow's compact table, one group: this benchmark's test split
    assert re.search(rf"^## {re.escape(name)} v{re.escape(benchmark.benchmark_version)} \(taxonomy .+\), split test$",
                     out.out, re.MULTILINE), out.out


def test_audit_failure_stops_the_one_shot(tmp_path, capsys):
    """A test image moved to a training user: the user crosses splits, nothing is evaluated."""
    data = tmp_path / "data"
    rows = easyportrait.build_dataset(data)
    train_user = next(r["user_id"] for r in rows if r["set"] == "train")
    moved = next(r["image_name"] for r in rows if r["set"] == "test")
    easyportrait.write_meta(data, [{**r, "user_id": train_user} if r["image_name"] == moved else r for r in rows])
    checkpoint = tmp_path / "model.pt"
    benchmark = load_benchmark("easyportrait")
    save_checkpoint(checkpoint, build("tiny-segnet", {"widths": [4, 8, 8]}, 9), "tiny-segnet", {"widths": [4, 8, 8]},
                    benchmark.ground_truth, IMAGENET)
    code = main(["--benchmark", "easyportrait", "--data", str(data), "--checkpoint", str(checkpoint), "--device", "cpu",
                 "--work-dir", str(tmp_path / "work")])
    assert code == 1
    err = capsys.readouterr().err
    assert "audit failed" in err and f"user '{train_user}' is in more than one split" in err


def test_easyportrait_best_with_its_wrong_pixels_void_earns_nothing_for_them(tmp_path, capsys):
    """The embedded easyportrait-best's masks with every wrong pixel set to 255: misses, so recall and
    mAcc stay exactly its own and the mIoU is mmseg's (nanmean of histc areas, forgery_fixtures),
    strictly below 1.0 (dropping them gave 1.0)."""
    from forgery_fixtures import VOID, mmseg_areas, read, void_the_wrong_pixels
    from segbench.commands.oneshot import model_folder
    from segbench.io.fileio import sha256_file
    from segbench.steps.frames import frames_of_split
    from segbench.steps.metrics import metrics_document

    root = Path(__file__).resolve().parents[1]
    benchmark = load_benchmark("easyportrait")
    common = ["--benchmark", "easyportrait", "--data", str(root / "data-easyportrait"), "--split", "test",
              "--dataset-manifest", str(root / "data-easyportrait_manifest.json"), "--device", "cpu"]
    work = tmp_path / "work"
    assert main([*common, "--checkpoint", str(root / "artifacts" / "easyportrait-best.pt"),
                 "--work-dir", str(work)]) == 0, capsys.readouterr().err
    frames = frames_of_split(benchmark, root / "data-easyportrait", "test")
    scored = work / "easyportrait" / "test"
    best_folder = scored / model_folder("easyportrait-best", sha256_file(root / "artifacts" / "easyportrait-best.pt"))
    forged = void_the_wrong_pixels(frames, best_folder / "predictions", tmp_path / "forged")
    assert main([*common, "--checkpoint", str(forged), "--checkpoint-kind", "predictions", "--label-space",
                 "easyportrait-9", "--work-dir", str(work), "--emit-submission", str(tmp_path / "submission.json")]) == 0
    assert "pixels predicted as void in 'easyportrait-9'" in capsys.readouterr().out
    record = json.loads((tmp_path / "submission.json").read_text())
    best = metrics_document(benchmark, [best_folder / "counts.parquet"])["results"]["easyportrait_9"]
    results = metrics_document(benchmark, [scored / model_folder("forged", record["checkpoint_sha256"]) / "counts.parquet"]
                               )["results"]["easyportrait_9"]

    pairs = [(read(f.label), read(forged / f.prediction)) for f in frames]
    assert record["pixels_predicted_void"] == sum(int(((pred == VOID) & (gt != VOID)).sum()) for gt, pred in pairs) > 0
    intersect, union, label = mmseg_areas(pairs, 9)
    with np.errstate(invalid="ignore"):
        mmseg_miou = float(np.nanmean(intersect / union))  # IoUMetric: NaN for an empty union, nanmean
        mmseg_macc = float(np.nanmean(intersect / label))
    assert record["easyportrait_9"]["mIoU_nan_skipping"] == mmseg_miou < 1.0
    assert results["mAcc"] == best["mAcc"] == mmseg_macc
    assert record["easyportrait_9"]["mIoU_nan_skipping"] > best["mIoU_nan_skipping"]  # no false positive left
