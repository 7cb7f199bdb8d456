"""Opening and reading a participant's predictions (records/intake.py): folder or archive, a mask's
PNG header checked against the ground truth's size before it is decoded."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.io.limits import LIMITS
from segbench.records.intake import check_prediction_header, open_predictions, read_prediction, same_aspect
from segbench.records.prediction_archive import ArchivePredictions
from segbench.records.prediction_folder import FolderPredictions

FRAME = Frame("a", "g", "val", Path("a.jpg"), Path("a.png"))


def png(width: int, height: int, mode: str = "L") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height)).save(out, format="PNG")
    return out.getvalue()


def refused(data: bytes, gt_size, evaluation_size=None) -> str:
    with pytest.raises(SegbenchError) as info:
        check_prediction_header(data, "p/a.png", gt_size, evaluation_size)
    return str(info.value)


def test_same_aspect_allows_rounding_of_one_side():
    assert same_aspect((64, 40), (32, 20)) and same_aspect((16, 10), (32, 20))  # exactly twice, half
    assert same_aspect((16, 11), (30, 20))  # 16 * 20 / 30 = 10.67 rounds to 11
    assert not same_aspect((16, 10), (30, 20))  # 10.67 rounds to 11, and 10 * 30 / 20 = 15: neither
    assert not same_aspect((33, 20), (32, 20))  # 33 * 20 / 32 = 20.6 rounds to 21, and 20 * 32 / 20 = 32
    assert not same_aspect((40, 40), (32, 20))


def test_headers_accepted():
    check_prediction_header(png(32, 20), "p/a.png", (32, 20), None)  # the ground truth's size
    check_prediction_header(png(64, 40), "p/a.png", (32, 20), None)  # the same aspect, twice
    check_prediction_header(png(50, 50), "p/a.png", (32, 20), (50, 50))  # any aspect with an evaluation size
    check_prediction_header(png(8, 5), "p/a.png", (32, 20), None)  # a quarter of each side, the least accepted
    check_prediction_header(png(120, 160), "p/a.png", (481, 641), None)  # 481 // 4 and 641 // 4


def test_headers_refused():
    assert refused(png(32, 20, "RGB"), (32, 20)) == (
        "p/a.png: prediction is a 32x20, 8-bit RGB PNG; a prediction must be an 8-bit single-channel PNG "
        "(greyscale, or palette read as its indices) holding class ids, not a colour rendering"
    )
    assert refused(png(40, 40), (32, 20)) == (
        "p/a.png: prediction is 40x40 but the ground truth is 32x20: not the same aspect ratio, so it cannot be "
        "resized to it"
    )
    side = LIMITS.max_rescale + 1
    assert refused(png(32 * side, 20 * side), (32, 20)) == (
        f"p/a.png: prediction is {32 * side}x{20 * side}; the largest accepted for a ground truth of 32x20 is "
        f"{32 * LIMITS.max_rescale}x{20 * LIMITS.max_rescale} (at most {LIMITS.max_rescale}x each side)"
    )
    # 1x1 rounds to the aspect of anything: refused as too small, as is a side of 0
    assert refused(png(1, 1), (640, 480)) == (
        "p/a.png: prediction is 1x1; the smallest accepted for a ground truth of 640x480 is 160x120 (at least 1/4 of "
        "each side)"
    )
    assert refused(png(7, 5), (32, 20)).startswith("p/a.png: prediction is 7x5; the smallest accepted for a ground "
                                                   "truth of 32x20 is 8x5")
    empty = b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sIIBBBBBI", 13, b"IHDR", 0, 0, 8, 0, 0, 0, 0, 0)  # a header only
    assert refused(empty, (32, 20)).startswith("p/a.png: prediction is 0x0; the smallest accepted")
    # with an evaluation size (IDD's 1280x720) any size is resized to it: only a side of 0 is too small
    check_prediction_header(png(16, 3), "p/a.png", (1920, 1080), (1280, 720))
    assert refused(empty, (1920, 1080), (1280, 720)) == (
        "p/a.png: prediction is 0x0; the smallest accepted for a ground truth of 1920x1080 is 1x1 (at least 1/4 of "
        "each side)"
    )
    with pytest.raises(SegbenchError) as info:  # an export, without the labels: the evaluation size alone
        check_prediction_header(png(5121, 720), "p/a.png", (1280, 720), (1280, 720), "the evaluation size")
    assert str(info.value) == ("p/a.png: prediction is 5121x720; the largest accepted for the evaluation size of "
                               "1280x720 is 5120x2880 (at most 4x each side)")


def test_open_predictions_by_what_the_source_is(tmp_path):
    folder = tmp_path / "preds"
    folder.mkdir()
    (folder / "a.png").write_bytes(png(4, 2))
    with open_predictions(folder, [FRAME]) as preds:
        assert isinstance(preds, FolderPredictions)
        assert read_prediction(preds, FRAME, (2, 4), None).tolist() == np.zeros((2, 4)).tolist()
    with zipfile.ZipFile(tmp_path / "preds.zip", "w") as archive:
        archive.writestr("a.png", png(4, 2))
    with open_predictions(tmp_path / "preds.zip", [FRAME]) as preds:
        assert isinstance(preds, ArchivePredictions)
    (tmp_path / "preds.txt").write_text("a\n")
    with pytest.raises(SegbenchError, match=r"preds\.txt: a predictions file must be an archive \("):
        open_predictions(tmp_path / "preds.txt", [FRAME])


def test_an_archive_read_for_some_frames_checks_their_entries_alone(tmp_path):
    with zipfile.ZipFile(tmp_path / "preds.zip", "w") as archive:
        archive.writestr("a.png", png(4, 2))
        archive.writestr("../b.png", png(4, 2))  # a refused name, but not a frame that is read
    with pytest.raises(SegbenchError, match=r"\.\./b\.png: refused: a name with '\.\.'"):
        open_predictions(tmp_path / "preds.zip", [FRAME])
    with open_predictions(tmp_path / "preds.zip", [FRAME], exact=False) as preds:
        assert read_prediction(preds, FRAME, (2, 4), None).tolist() == np.zeros((2, 4)).tolist()
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(tmp_path / "twice.zip", "w") as archive:
        archive.writestr("a.png", png(4, 2))
        archive.writestr("a.png", png(4, 2))  # the frame's own entries are checked still
    with pytest.raises(SegbenchError, match=r"a\.png: refused: a second entry of the same name"):
        open_predictions(tmp_path / "twice.zip", [FRAME], exact=False)
