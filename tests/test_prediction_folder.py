"""Predictions in a folder (records/prediction_folder.py): what kind of entry is refused, and the
folder listed (exact) or looked up (not exact) before any mask is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.records.prediction_folder import FolderPredictions, kind_problem


def frame(frame_id: str, prediction: str = "") -> Frame:
    return Frame(frame_id, "g", "val", Path(f"{frame_id}.jpg"), Path(f"{frame_id}.png"), prediction)


def refused(*args) -> str:
    with pytest.raises(SegbenchError) as info:
        FolderPredictions(*args)
    return str(info.value)


def test_kind_problem():
    assert kind_problem(stat.S_IFREG | 0o644, 1) is None
    assert kind_problem(stat.S_IFLNK | 0o777, 1) == "a symbolic link"
    assert kind_problem(stat.S_IFDIR | 0o755, 2) == "a nested folder"
    assert kind_problem(stat.S_IFIFO | 0o644, 1) == "not a regular file (a device, pipe or socket)"
    assert kind_problem(stat.S_IFREG | 0o644, 2) == "a hard link (2 names: it may be another file under this name)"


def test_masks_are_read_from_the_naming_folders(tmp_path):
    (tmp_path / "drive").mkdir()
    (tmp_path / "a.png").write_bytes(b"A")
    (tmp_path / "drive" / "b.png").write_bytes(b"BB")
    b = frame("b", "drive/b.png")
    with FolderPredictions(tmp_path, [frame("a"), b], exact=True) as preds:
        assert (preds.read(frame("a")), preds.read(b)) == (b"A", b"BB")


def test_exact_lists_strangers_and_wrong_kinds_not_exact_looks_up_only(tmp_path):
    (tmp_path / "a.png").write_bytes(b"A")
    os.link(tmp_path / "a.png", tmp_path / "copy.png")
    (tmp_path / "b.png").symlink_to(tmp_path / "a.png")
    (tmp_path / "nested").mkdir()
    frames = [frame("a"), frame("b")]
    assert refused(tmp_path, frames, True) == (
        f"{tmp_path}: predictions refused: 4 problems:\n  refused entries (4):\n"
        f"    {tmp_path}/a.png: refused: a hard link (2 names: it may be another file under this name)\n"
        f"    {tmp_path}/b.png: refused: a symbolic link\n"
        f"    {tmp_path}/copy.png: refused: a hard link (2 names: it may be another file under this name)\n"
        f"    {tmp_path}/nested: refused: a nested folder"
    )
    (tmp_path / "copy.png").unlink()
    (tmp_path / "b.png").unlink()
    FolderPredictions(tmp_path, [frame("a")], exact=False).close()  # the stray folder is not looked at
    assert refused(tmp_path, frames, False) == (
        f"{tmp_path}: predictions refused: 1 problem:\n  missing predictions (1):\n"
        f"    missing prediction for frame b: {tmp_path}/b.png"
    )


def test_a_missing_folder_is_refused(tmp_path):
    assert refused(tmp_path / "none", [frame("a")], True) == (
        f"{tmp_path / 'none'}: predictions folder not found (or not a real folder)"
    )
