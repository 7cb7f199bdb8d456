"""Predictions in an archive (records/prediction_archive.py): zip and tar read member by member,
the upload's dataset_id.txt kept apart, and archives that are not there or not archives refused.
(Hostile members, bombs and damaged archives: io/archives' limits in test_archives.py, the
archives themselves in test_bad_inputs.py.)"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.io.archives import REFUSED_ENTRY
from segbench.io.problems import Problems
from segbench.records.prediction_archive import UPLOAD_META, ArchivePredictions
from segbench.records.predictions import EXTRA, MISSING

MEMBERS = {"a.png": b"A", "drive/b.png": b"BB"}
FRAMES = [
    Frame("a", "g", "val", Path("a.jpg"), Path("a.png")),
    Frame("b", "g", "val", Path("b.jpg"), Path("b.png"), "drive/b.png"),
]


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def write_tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def refused(*args) -> str:
    with pytest.raises(SegbenchError) as info:
        ArchivePredictions(*args)
    return str(info.value)


@pytest.mark.parametrize("write, name", [(write_zip, "p.zip"), (write_tar, "p.tar.gz")])
def test_members_and_the_upload_record_are_read(tmp_path, write, name):
    path = write(tmp_path / name, {**MEMBERS, UPLOAD_META: b"pv-1234\n"})
    with ArchivePredictions(path, FRAMES, exact=True) as preds:
        assert [preds.read(f) for f in FRAMES] == [b"A", b"BB"]
        assert preds.metadata() == "pv-1234"
        assert preds.where(FRAMES[1]) == f"{path}/drive/b.png"


def test_without_the_upload_record_metadata_is_none(tmp_path):
    with ArchivePredictions(write_zip(tmp_path / "p.zip", MEMBERS), FRAMES, exact=True) as preds:
        assert preds.metadata() is None


def test_an_upload_record_that_is_not_text(tmp_path):
    path = write_zip(tmp_path / "p.zip", {**MEMBERS, UPLOAD_META: b"\xff\xfe"})
    with ArchivePredictions(path, FRAMES, exact=True) as preds, pytest.raises(SegbenchError) as info:
        preds.metadata()
    assert str(info.value) == f"{path}/{UPLOAD_META}: not UTF-8 text"


def test_a_missing_member_is_named(tmp_path):
    path = write_zip(tmp_path / "p.zip", {"a.png": b"A"})
    assert refused(path, FRAMES, True) == (
        f"{path}: predictions refused: 1 problem:\n  missing predictions (1):\n"
        f"    missing prediction for frame b: {path}/drive/b.png"
    )


def test_no_archive_or_not_an_archive(tmp_path):
    assert refused(tmp_path / "none.zip", FRAMES, True) == (
        f"{tmp_path / 'none.zip'}: predictions archive not found (or not a regular file)"
    )
    text = tmp_path / "notes.zip"
    text.write_text("hello\n")
    assert refused(text, FRAMES, True).startswith(f"{text}: not a readable zip or tar archive (")


def test_gathered_listing_problems_are_all_kept_and_the_refused_frames_not_listed(tmp_path):
    """Given problems, the archive gathers every listing problem (a refused entry, a missing mask,
    an extra file) for its caller and refuses nothing; only the frames found plainly are listed."""
    frames = [*FRAMES, Frame("c", "g", "val", Path("c.jpg"), Path("c.png"))]
    path = write_zip(tmp_path / "p.zip", {"a.png": b"A", "drive/b.png": b"BB", "drive/b.png ": b"",
                                          "x/y/z.png": b"Z", "../c.png": b"C"})
    problems = Problems()
    with ArchivePredictions(path, frames, exact=True, problems=problems) as preds:
        assert [preds.listed(f) for f in frames] == [True, True, False]
        assert preds.read(FRAMES[0]) == b"A"
    assert problems.by_kind == {
        REFUSED_ENTRY: [f"{path}: x/y/z.png: refused: in a nested folder", f"{path}: ../c.png: refused: a name with '..'"],
        MISSING: [f"missing prediction for frame c: {path}/c.png"],
        EXTRA: [f"extra file not matching any evaluated frame: {path}/drive/b.png "],
    }


def test_a_second_entry_of_one_name_makes_that_frame_unread(tmp_path):
    path = tmp_path / "p.zip"
    with zipfile.ZipFile(path, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("a.png", b"A")
        archive.writestr("drive/b.png", b"BB")
        archive.writestr("a.png", b"A2")
    problems = Problems()
    with ArchivePredictions(path, FRAMES, exact=True, problems=problems) as preds:
        assert [preds.listed(f) for f in FRAMES] == [False, True]
    assert problems.by_kind == {REFUSED_ENTRY: [f"{path}: a.png: refused: a second entry of the same name"]}
