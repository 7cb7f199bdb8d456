"""A set of prediction masks named for the frames (records/predictions.py): the folders a naming
rule uses, and the listing checked against the evaluated frames."""

from __future__ import annotations

from pathlib import Path

import pytest

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.io.problems import Problems
from segbench.records.predictions import EXTRA, GROUND_TRUTH, MISSING, Predictions, folders_of


class Listed(Predictions):
    """The smallest concrete set: nothing to read, only the shared listing checks."""

    def read(self, frame: Frame) -> bytes:
        return b""

    def size(self, frame: Frame) -> int:
        return 0


def frame(frame_id: str, prediction: str = "") -> Frame:
    return Frame(frame_id, "g", "val", Path(f"{frame_id}.jpg"), Path(f"{frame_id}.png"), prediction)


def test_folders_of_names_every_parent():
    assert folders_of(["a.png", "drive/b.png", "drive/cam/c.png"]) == {"drive", "drive/cam"}
    assert folders_of(["a.png"]) == set()
    assert folders_of([]) == set()
    # a folder met first through a deeper name, or the other way round
    assert folders_of(["x/y/z.png", "x/w.png"]) == folders_of(["x/w.png", "x/y/z.png"]) == {"x", "x/y"}


def test_frames_sharing_a_prediction_name_are_refused():
    with pytest.raises(SegbenchError, match=r"^preds: two evaluated frames share a prediction name$"):
        Listed(Path("preds"), [frame("a", "x.png"), frame("b", "x.png")], exact=True)


def test_a_complete_listing_passes_and_where_names_the_file():
    preds = Listed(Path("preds"), [frame("a"), frame("b", "drive/b.png")], exact=True)
    preds.check_listing({"a.png", "drive/b.png"})
    assert preds.where(frame("b", "drive/b.png")) == "preds/drive/b.png"


def test_refused_missing_and_extra_entries_are_listed_in_order_by_kind():
    preds = Listed(Path("preds"), [frame("b"), frame("a"), frame("c")], exact=True)
    preds.refuse_entry("c.png", "preds/c.png: refused: a symbolic link")
    with pytest.raises(SegbenchError) as info:
        preds.check_listing({"b.png", "c.png", "z.png"})
    assert str(info.value) == (
        "preds: predictions refused: 3 problems:\n"
        "  refused entries (1):\n    preds/c.png: refused: a symbolic link\n"
        "  missing predictions (1):\n    missing prediction for frame a: preds/a.png\n"
        "  extra files (1):\n    extra file not matching any evaluated frame: preds/z.png"
    )
    assert [preds.listed(f) for f in (frame("a"), frame("b"), frame("c"))] == [False, True, False]


def test_gathered_listing_problems_are_left_to_the_caller():
    problems = Problems()
    preds = Listed(Path("preds"), [frame("a"), frame("b")], exact=True, problems=problems)
    preds.check_listing({"a.png", "z.png"})  # nothing raised
    assert problems.by_kind == {MISSING: ["missing prediction for frame b: preds/b.png"],
                                EXTRA: ["extra file not matching any evaluated frame: preds/z.png"]}


def test_extra_entries_pass_when_not_exact():
    with Listed(Path("preds"), [frame("a")], exact=False) as preds:
        preds.check_listing({"a.png", "z.png"})


def test_a_mask_that_is_its_label_byte_for_byte_is_refused_at_once_or_gathered(tmp_path):
    (tmp_path / "a.png").write_bytes(b"")  # Listed reads every mask as b"": a's label, byte for byte
    copy = Frame("a", "g", "val", Path("a.jpg"), tmp_path / "a.png")
    frames = [copy, frame("b")]  # b's label is not at hand: nothing to compare
    preds = Listed(Path("preds"), frames, exact=True)
    with pytest.raises(SegbenchError) as info:
        preds.check_not_ground_truth()
    assert str(info.value) == (
        "preds: predictions refused: 1 problem:\n  masks that are their frame's ground-truth label byte for byte "
        f"(never scored as a prediction) (1):\n    frame a: preds/a.png is {tmp_path / 'a.png'}")
    problems = Problems()
    Listed(Path("preds"), frames, exact=True, problems=problems).check_not_ground_truth()
    assert problems.by_kind == {GROUND_TRUTH: [f"frame a: preds/a.png is {tmp_path / 'a.png'}"]}
