"""io/unpacked: a download's folders found in the data folder or in its one sub-folder holding them."""

import pytest

from segbench.errors import SegbenchError
from segbench.io.unpacked import unpacked_root

NAMES = ("images", "annotations")
EXPECTED = "images/ and annotations/"


def test_the_data_folder_itself_or_its_one_sub_folder(tmp_path):
    (tmp_path / "images").mkdir()
    assert unpacked_root(tmp_path, NAMES, EXPECTED) == tmp_path
    other = tmp_path / "other"
    (other / "top" / "annotations").mkdir(parents=True)
    (other / "empty").mkdir()
    (other / "images").write_text("")  # a file of that name counts too: the reader names what is wrong with it
    assert unpacked_root(other, NAMES, EXPECTED) == other
    (other / "images").unlink()
    assert unpacked_root(other, NAMES, EXPECTED) == other / "top"


def test_two_candidates_are_ambiguous(tmp_path):
    for top in ("v2", "v1"):
        (tmp_path / top / "images").mkdir(parents=True)
    with pytest.raises(SegbenchError) as info:
        unpacked_root(tmp_path, NAMES, EXPECTED)
    assert str(info.value) == (
        f"{tmp_path}: 2 folders hold images or annotations (v1, v2); expected one dataset (images/ and annotations/): "
        "point --data at one of them, or unpack the archives so that their folders merge")


def test_nothing_found_or_no_data_folder(tmp_path):
    (tmp_path / "deep" / "er" / "images").mkdir(parents=True)  # two levels down: not looked for
    with pytest.raises(SegbenchError) as info:
        unpacked_root(tmp_path, NAMES, EXPECTED)
    assert str(info.value) == f"{tmp_path}: no images or annotations here or in a sub-folder; expected {EXPECTED}"
    with pytest.raises(SegbenchError, match=r"missing: data folder not found$"):
        unpacked_root(tmp_path / "missing", NAMES, EXPECTED)
