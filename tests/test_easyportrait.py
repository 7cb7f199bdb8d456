"""EasyPortrait: the reader, the audit (users as groups, mask values), the card's mIoU recipe
beside the reference's NaN-skipping mean, and the FP-8 / PS-2 reductions of the same counts."""

from __future__ import annotations

import numpy as np
import pytest
from ep_fixtures import CLEAN, FACE, make_ep, write_files
from PIL import Image

from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate
from segbench.datasets import read_dataset
from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.stages.audit import audit_dataset

HEADER = "image_name,user_id,height,width,set,brightness"


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("easyportrait")


def test_reader(ep_data, benchmark):
    frames = read_dataset(benchmark, ep_data)
    assert [f.frame_id for f in frames] == ["a1", "a2", "b1", "c1", "d1"]
    assert frames[3] == Frame("c1", "u3", "test", ep_data / "images/test/c1.jpg", ep_data / "annotations/test/c1.png",
                              meta={"data_hash": "ab12", "width": "6", "height": "6", "brightness": "0.5"})
    assert frames[3].prediction == "c1.png"


def test_reader_accepts_any_column_order_extra_columns_and_a_jpg_suffix(tmp_path, benchmark):
    header = ",set,brightness,width,height,user_id,image_name"  # a pandas index column first
    data = tmp_path / "ep"
    data.mkdir()
    (data / "meta.csv").write_text(f"{header}\n0,test,0.4,6,6,u9,x1.jpg\n")
    [frame] = read_dataset(benchmark, data)
    assert (frame.frame_id, frame.group_id, frame.split) == ("x1", "u9", "test")


@pytest.mark.parametrize(
    "text, message",
    [
        ("image_name,user_id,height\n", "line 1: header is 'image_name,user_id,height', expected the 2.0 columns "
                                        "image_name,user_id,height,width,set,brightness (missing: set)"),
        (f"{HEADER}\nx,,6,6,test,1\n", "line 2: user_id is empty (frame 'x')"),
        (f"{HEADER}\nx,u,6,6,dev,1\n", "line 2: set 'dev' is not one of ['train', 'val', 'test'] (frame 'x')"),
        (f"{HEADER}\nx,u,6,6,test,1\nx.jpg,v,6,6,val,1\n", "line 3: duplicate image_name 'x' (first listed at line 2)"),
        (f"{HEADER}\na/b,u,6,6,test,1\n", "line 2: image_name 'a/b' contains a path separator"),
    ],
)
def test_meta_errors_name_file_and_line(tmp_path, benchmark, text, message):
    data = tmp_path / "ep"
    data.mkdir()
    (data / "meta.csv").write_text(text)
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value).startswith(f"{data / 'meta.csv'}: {message}")


def test_missing_meta(tmp_path, benchmark):
    write_files(tmp_path / "ep", "test", "c1")
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, tmp_path / "ep")
    assert str(exc.value) == (
        f"{tmp_path / 'ep'}: no meta file; expected one of annotations/meta.zip, annotations/meta.csv, meta.zip, "
        "meta.csv (every EasyPortrait dataset needs the meta file that lists its frames)"
    )


def test_clean_dataset_passes_the_audit(ep_data, benchmark):
    report = audit_dataset(ep_data, benchmark, ["test"])
    assert report.findings == [], report.to_text()
    assert report.counts["test"] == {"frames": 2, "users": 2}


def test_user_crossing_splits(tmp_path, benchmark):
    report = audit_dataset(make_ep(tmp_path, CLEAN + [("e1", "u2", "test")]), benchmark, ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("group-crosses-splits", "user 'u2' is in more than one split: test (e1); val (b1)")
    ]
    assert report.to_json()["findings"][0]["users"] == ["u2"]


def test_mask_value_nine_is_refused_and_255_allowed(tmp_path, benchmark):
    bad = FACE.copy()
    bad[0, 0], bad[0, 1] = 9, 255
    report = audit_dataset(make_ep(tmp_path, CLEAN, masks={"c1": bad}), benchmark, ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("label-values", "frame 'c1' (user 'u3', split test): label annotations/test/c1.png holds values outside the "
                         "ground truth 'easyportrait-9' (allowed: 0-8, 255): 9 (1 px)")
    ]


def test_unlisted_files(ep_data, benchmark):
    Image.fromarray(FACE).save(ep_data / "annotations" / "test" / "zz.png")
    (ep_data / "images" / "extra").mkdir()
    report = audit_dataset(ep_data, benchmark, ["test"])
    assert [f.message for f in report.errors] == [
        "annotations/test/zz.png: file not listed in the meta file",
        "images/extra: folder not listed in the meta file",
    ]


# ---------------------------------------------------------------- metrics


def scores(benchmark, pairs, space="easyportrait-9"):
    counts = FrameCounts.from_histograms([str(i) for i in range(len(pairs))], [joint_histogram(g, p) for g, p in pairs])
    return evaluate(benchmark, counts, benchmark.space(space))


def card_recipe(pred, gt, num_classes):
    """The evaluation card's compute_miou, verbatim in spirit: empty union counts 0.0."""
    ious = []
    for c in range(num_classes):
        intersection = np.logical_and(pred == c, gt == c).sum()
        union = np.logical_or(pred == c, gt == c).sum()
        ious.append(0.0 if union == 0 else intersection / union)
    return float(np.mean(ious))


def test_recipe_and_nan_skipping_agree_when_every_class_occurs(benchmark):
    pred = FACE.copy()
    pred[2, 1] = 4  # left brow predicted right brow
    pred[5, 0] = 0
    results = scores(benchmark, [(FACE, pred)])["easyportrait_9"]
    assert results["mIoU"] == results["mIoU_nan_skipping"] == pytest.approx(card_recipe(pred, FACE, 9))
    assert results["iou"]["left brow"] == 0.0 and results["iou"]["right brow"] == 0.5
    # background 6/7 (one person pixel predicted background), person 15/16, five classes exact
    assert results["mIoU"] == pytest.approx((6 / 7 + 15 / 16 + 5 + 0 + 0.5) / 9)


def test_recipe_and_nan_skipping_differ_when_a_class_is_absent(benchmark):
    gt = np.where(FACE == 8, 7, FACE).astype(np.uint8)  # no teeth in the split...
    pred = gt.copy()  # ...and none predicted: an empty union
    results = scores(benchmark, [(gt, pred)])["easyportrait_9"]
    assert results["iou"]["teeth"] is None
    assert results["mIoU"] == pytest.approx(8 / 9) == pytest.approx(card_recipe(pred, gt, 9))  # the card: 0.0 counts
    assert results["mIoU_nan_skipping"] == 1.0  # the reference (mmseg nanmean) skips it


def test_void_pixels_are_ignored(benchmark):
    gt = FACE.copy()
    gt[0, :] = 255
    pred = FACE.copy()
    pred[0, :] = 8  # predictions on ignored pixels count for nothing
    assert scores(benchmark, [(gt, pred)])["easyportrait_9"]["iou"]["teeth"] == 1.0


FP8_OF = np.array([0, 0, 1, 2, 3, 4, 5, 6, 7])  # person merged into background, k -> k-1
PS2_OF = np.array([0, 1, 1, 1, 1, 1, 1, 1, 1])  # background vs. everything else


@pytest.mark.parametrize("seed", [0, 1])
def test_fp8_and_ps2_equal_a_direct_computation(benchmark, seed):
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(3):
        gt = rng.integers(0, 9, (10, 12)).astype(np.uint8)
        gt[0, :3] = 255
        pairs.append((gt, rng.integers(0, 9, (10, 12)).astype(np.uint8)))
    results = scores(benchmark, pairs)
    for key, table, classes in (("easyportrait_fp8", FP8_OF, 8), ("easyportrait_ps2", PS2_OF, 2)):
        gts = np.concatenate([np.where(g == 255, 255, table[np.minimum(g, 8)]).ravel() for g, _ in pairs])
        preds = np.concatenate([table[p].ravel() for _, p in pairs])
        valid = gts != 255
        direct = [
            np.logical_and(preds[valid] == c, gts[valid] == c).sum() / np.logical_or(preds[valid] == c, gts[valid] == c).sum()
            for c in range(classes)
        ]
        assert list(results[key]["iou"].values()) == pytest.approx(direct)
        assert results[key]["mIoU"] == pytest.approx(float(np.mean(direct)))
        assert results[key]["mIoU"] == pytest.approx(card_recipe(preds[valid], gts[valid], classes))


def test_a_portrait_model_gets_the_portrait_report_only(benchmark):
    gt = FACE
    pred = (FACE != 0).astype(np.uint8)
    results = scores(benchmark, [(gt, pred)], "easyportrait-ps2")
    assert results["easyportrait_9"]["mIoU"] is None and results["easyportrait_fp8"]["mIoU"] is None
    assert results["easyportrait_ps2"]["mIoU"] == 1.0
    fp8 = scores(benchmark, [(gt, FP8_OF[gt].astype(np.uint8))], "easyportrait-fp8")
    assert fp8["easyportrait_fp8"]["mIoU"] == 1.0 and fp8["easyportrait_ps2"]["mIoU"] is None
