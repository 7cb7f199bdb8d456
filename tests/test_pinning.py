"""Restoring DVC-pinned inputs (segbench.workflow.pinning): what is there is left alone, an input
that is missing and not pinned is named with what to do (no DVC call in either case), and every
object a pin names is checked, each fault named with its .dvc file and path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from segbench.errors import SegbenchError
from segbench.workflow.pinning import pin_problems, restore


def test_present_inputs_are_left_alone(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "model.pt").write_bytes(b"x")
    assert restore([tmp_path / "data", tmp_path / "model.pt"]) == []
    assert restore([]) == []


def test_a_missing_input_without_its_dvc_file_is_named(tmp_path):
    missing = tmp_path / "model.pt"
    with pytest.raises(SegbenchError) as exc:
        restore([missing])
    assert str(exc.value) == (
        f"'{missing}' is missing and not pinned: there is no {missing}.dvc. Restore the .dvc file from git "
        f"(`git checkout -- {missing}.dvc`), or track the input with `dvc add {missing}` and `dvc push`."
    )


class CheckedObjects:
    """Objects as pinning.Objects answers for them: (problem, a listing's bytes) by object id."""

    def __init__(self, answers: dict[str, tuple[str, bytes | None]]):
        self.answers = answers
        self.asked: list[str] = []

    def problem(self, oid: str) -> tuple[str, bytes | None]:
        self.asked.append(oid)
        return self.answers.get(oid, ("", None))


DIR = "d" * 32 + ".dir"


def test_every_file_of_a_pinned_folder_is_checked_and_each_fault_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("data.dvc").write_text(f"outs:\n- md5: {DIR}\n  path: data\n")
    listing = json.dumps([{"md5": "a" * 32, "relpath": "images/a.jpg"}, {"md5": "b" * 32, "relpath": "labels/b.png"},
                          {"md5": "c" * 32, "relpath": "frames.csv"}]).encode()
    objects = CheckedObjects({DIR: ("", listing), "b" * 32: ("is damaged in the cache (x): MD5 e, expected b", None),
                              "c" * 32: ("is not in the remote (y)", None)})
    assert pin_problems(Path("data"), objects) == [
        f"data.dvc: data/labels/b.png: object {'b' * 32} is damaged in the cache (x): MD5 e, expected b",
        f"data.dvc: data/frames.csv: object {'c' * 32} is not in the remote (y)"]
    assert objects.asked == [DIR, "a" * 32, "b" * 32, "c" * 32]


def test_a_damaged_listing_stops_before_its_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("data.dvc").write_text(f"outs:\n- md5: {DIR}\n  path: data\n")
    objects = CheckedObjects({DIR: ("is damaged in the remote (z): MD5 f, expected d", None)})
    assert pin_problems(Path("data"), objects) == [
        f"data.dvc: data: the listing of the folder (object {DIR}) is damaged in the remote (z): MD5 f, expected d"]
    Path("m.pt.dvc").write_text("outs:\n- md5: " + "e" * 32 + "\n  path: m.pt\n")
    assert pin_problems(Path("m.pt"), CheckedObjects({})) == []


def test_an_unreadable_pin_is_named(tmp_path):
    (tmp_path / "m.pt.dvc").write_text("outs: []\n")
    with pytest.raises(SegbenchError, match=r"m\.pt\.dvc: not a readable \.dvc file \(IndexError"):
        pin_problems(tmp_path / "m.pt", CheckedObjects({}))
