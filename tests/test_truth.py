"""Kept labels (stages/truth.py): a long-lived scorer's ground truth kept decoded with its bands,
giving the counts the decoding reader gives, read again when its file changes, within a budget."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pv_fixtures import make_dataset, write_png
from segbench.core.bandplan import band_plan
from segbench.datasets.painting_vision import read_frames
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.stages.scoring import score_predictions
from segbench.stages.truth import KeptLabels, read_truth

PV = load_benchmark("painting-vision")
TEN = PV.ground_truth


def labelled(rng: np.random.Generator, h: int = 30, w: int = 40) -> np.ndarray:
    label = np.kron(rng.integers(0, 10, (h // 5 + 1, w // 5 + 1)), np.ones((5, 5), int))[:h, :w].astype(np.uint8)
    label[rng.random((h, w)) < 0.03] = 255
    return label


@pytest.fixture
def split(tmp_path):
    """Three frames of a Painting Vision test split, and a prediction of each (the label with noise)."""
    rng = np.random.default_rng(5)
    labels = [labelled(rng) for _ in range(3)]
    data = make_dataset(tmp_path, [(f"f{i}", f"w{i}", "test", label) for i, label in enumerate(labels)])
    for i, label in enumerate(labels):
        pred = np.where(rng.random(label.shape) < 0.8, np.minimum(label, 9), rng.integers(0, 10, label.shape))
        write_png(tmp_path / "preds" / f"f{i}.png", pred.astype(np.uint8))
    return read_frames(data, PV.splits), tmp_path / "preds"


def counts_equal(a, b) -> bool:
    fields = ("frame", "gt", "pred", "count")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields) and all(
        np.array_equal(getattr(a.bands, f), getattr(b.bands, f)) for f in ("frame", "space", "gt", "pred", "flags", "count"))


def run_bytes(array: np.ndarray) -> int:
    """What a map costs kept as runs: 5 bytes a run (its value, its length), a run starting at
    the first pixel and at each change of value in row-major order."""
    flat = array.ravel()
    return 5 * (1 + int((flat[1:] != flat[:-1]).sum()))


def kept_bytes(frame, bands, evaluation_size=None) -> int:
    mask = read_truth(frame, evaluation_size).mask
    return run_bytes(mask) + (0 if bands is None else run_bytes(bands.truth_flags(mask)))


def test_kept_labels_give_the_decoded_counts_and_are_read_once(split):
    frames, preds = split
    bands = band_plan(PV, TEN)
    decoded = score_predictions(frames, preds, TEN, TEN, bands=bands)
    kept = KeptLabels(1 << 20)
    first = score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept)
    assert counts_equal(first, decoded)
    every = sum(kept_bytes(f, bands) for f in frames)
    assert kept.used == every  # the bytes of their runs
    for frame in frames:
        truth = kept(frame, None, bands)
        assert np.array_equal(truth.mask, read_truth(frame, None).mask)
        assert np.array_equal(truth.bands, bands.truth_flags(truth.mask))
        truth.mask[:] = 7  # a caller's changes to what it was given...
        truth.bands[:] = 0
        again = kept(frame, None, bands)  # ...are not what is kept
        assert np.array_equal(again.mask, read_truth(frame, None).mask) and again.bands.any()
    assert counts_equal(score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept), decoded)
    assert kept.used == every


def test_a_label_changed_on_disk_is_read_again(split):
    frames, preds = split
    bands = band_plan(PV, TEN)
    kept = KeptLabels(1 << 20)
    score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept)
    corrected = np.zeros((30, 40), np.uint8)  # the host's corrected label: all "other", replacing the file
    write_png(frames[1].label.with_name("new.png"), corrected)
    os.replace(frames[1].label.with_name("new.png"), frames[1].label)
    truth = kept(frames[1], None, bands)
    assert np.array_equal(truth.mask, corrected)
    assert kept.used == sum(kept_bytes(f, bands) for f in frames)  # the stale one replaced, not added to
    again = score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept)
    assert counts_equal(again, score_predictions(frames, preds, TEN, TEN, bands=bands))


def test_labels_over_the_budget_are_decoded_each_time(split):
    frames, preds = split
    bands = band_plan(PV, TEN)
    sizes = [kept_bytes(f, bands) for f in frames]
    kept = KeptLabels(sum(sizes) - 1)  # room for any two of the three, never all
    decoded = score_predictions(frames, preds, TEN, TEN, bands=bands)
    pairs = {sum(sizes) - size for size in sizes}
    for _ in range(2):
        assert counts_equal(score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept), decoded)
        assert kept.used in pairs  # the two read first (which two: the scoring threads' order)
    held = kept.used
    none = KeptLabels(0)
    assert counts_equal(score_predictions(frames, preds, TEN, TEN, bands=bands, labels=none), decoded)
    assert none.used == 0 and all(none(f, None, bands).bands is None for f in frames)  # no room: the pass finds them
    # With the budget spent, a kept label whose file changed gives its place to what it is now.
    first = frames[[i for i, size in enumerate(sizes) if held - size in {s for j, s in enumerate(sizes) if j != i}][0]]
    replaced = np.full((30, 40), 3, np.uint8)
    write_png(first.label.with_name("new.png"), replaced)
    os.replace(first.label.with_name("new.png"), first.label)
    truth = kept(first, None, bands)
    assert (truth.mask == 3).all() and truth.bands is not None
    assert kept.used == held - sizes[frames.index(first)] + kept_bytes(first, bands)
    assert np.array_equal(kept(first, None, bands).mask, replaced)


def test_a_changed_label_that_no_longer_fits_gives_up_its_place(split):
    frames, preds = split
    bands = band_plan(PV, TEN)
    sizes = [kept_bytes(f, bands) for f in frames]
    kept = KeptLabels(sum(sizes))  # exactly the three as they are
    score_predictions(frames, preds, TEN, TEN, bands=bands, labels=kept)
    assert kept.used == sum(sizes)
    checkerboard = (np.indices((30, 40)).sum(axis=0) % 2).astype(np.uint8)  # a run per pixel: larger
    write_png(frames[0].label.with_name("new.png"), checkerboard)
    os.replace(frames[0].label.with_name("new.png"), frames[0].label)
    assert kept_bytes(frames[0], bands) > sizes[0]
    truth = kept(frames[0], None, bands)
    assert np.array_equal(truth.mask, checkerboard)
    assert kept.used == sum(sizes) - sizes[0]  # not kept, and the stale copy dropped, not held unserved


def test_kept_at_the_evaluation_size_and_without_bands(split):
    # IDD's rule: labels resized to the benchmark's evaluation size, kept at that size, with no
    # bands; the prediction's size is still checked against the label's own.
    frames, _ = split
    kept = KeptLabels(1 << 20)
    truth = kept(frames[0], (80, 60), None)
    assert truth.stored_shape == (30, 40) and truth.mask.shape == (60, 80) and truth.bands is None
    assert np.array_equal(truth.mask, read_truth(frames[0], (80, 60)).mask)
    assert kept.used == run_bytes(truth.mask)
    assert kept(frames[0], None, None).mask.shape == (30, 40)  # another size is another entry
    assert kept.used == run_bytes(truth.mask) + kept_bytes(frames[0], None)


def test_a_missing_label_gets_the_decoders_error(split):
    frames, _ = split
    frames[0].label.unlink()
    with pytest.raises(SegbenchError) as kept_error:
        KeptLabels(1 << 20)(frames[0], None, None)
    with pytest.raises(SegbenchError) as decoded_error:
        read_truth(frames[0], None)
    assert str(kept_error.value) == str(decoded_error.value) and str(frames[0].label) in str(kept_error.value)
