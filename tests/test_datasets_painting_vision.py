from pathlib import Path

import numpy as np
import pytest
from pv_fixtures import ALL_CLASSES, make_dataset, noise_image, write_jpg, write_png

from segbench.datasets.base import Frame
from segbench.datasets import select_split
from segbench.datasets.painting_vision import FORMAT, list_unlisted_files, read_frames
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest
from segbench.stages.audit import audit_dataset

SPLITS = ("train", "val", "test")


def write_frames_csv(tmp_path: Path, text: str) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "frames.csv").write_text(text)
    return data


def test_reads_frames_sorted_with_paths(tmp_path):
    data = make_dataset(
        tmp_path,
        [("z9", "w2", "test", ALL_CLASSES), ("a1", "w1", "train", ALL_CLASSES)],
        image_ext="jpg",
    )
    write_png(data / "images" / "m5.png", noise_image("m5", 4, 4))
    (data / "frames.csv").write_text("frame_id,wall_id,split\nz9,w2,test\na1,w1,train\nm5,w1,val\nq0,w3,val\n")
    frames = read_frames(data, SPLITS)
    assert frames == [
        Frame("a1", "w1", "train", data / "images" / "a1.jpg", data / "labels" / "a1.png"),
        # no label of val exists: an unlabelled split
        Frame("m5", "w1", "val", data / "images" / "m5.png", data / "labels" / "m5.png", labelled=False),
        # neither image exists: points at the .jpg; the audit reports it
        Frame("q0", "w3", "val", data / "images" / "q0.jpg", data / "labels" / "q0.png", labelled=False),
        Frame("z9", "w2", "test", data / "images" / "z9.jpg", data / "labels" / "z9.png"),
    ]
    assert [f.frame_id for f in select_split(frames, "val")] == ["m5", "q0"]
    assert select_split(frames, "test") == [frames[3]]
    assert select_split(frames, "train") == [frames[0]]


def test_both_images_point_at_jpg(tmp_path):
    data = make_dataset(tmp_path, [("a", "w", "test", ALL_CLASSES)], image_ext="png")
    write_jpg(data / "images" / "a.jpg", noise_image("a", 16, 20))
    assert read_frames(data, SPLITS)[0].image == data / "images" / "a.jpg"


def test_utf8_bom_and_blank_lines_accepted(tmp_path):
    data = write_frames_csv(tmp_path, "\ufeffframe_id,wall_id,split\r\na,w,test\r\n\r\n")
    assert [(f.frame_id, f.group_id, f.split) for f in read_frames(data, SPLITS)] == [("a", "w", "test")]


def test_header_only_gives_no_frames(tmp_path):
    data = write_frames_csv(tmp_path, "frame_id,wall_id,split\n")
    assert read_frames(data, SPLITS) == []


def test_missing_data_dir(tmp_path):
    with pytest.raises(SegbenchError, match=r"nope: data folder not found"):
        read_frames(tmp_path / "nope", SPLITS)


def test_missing_frames_csv(tmp_path):
    (tmp_path / "data" / "images").mkdir(parents=True)
    with pytest.raises(SegbenchError) as exc:
        read_frames(tmp_path / "data", SPLITS)
    assert (
        str(exc.value)
        == f"{tmp_path / 'data' / 'frames.csv'}: file not found (every Painting Vision dataset needs frames.csv)"
    )


def test_an_empty_data_folder_says_what_is_expected(tmp_path):
    (tmp_path / "data").mkdir()
    with pytest.raises(SegbenchError) as exc:
        read_frames(tmp_path / "data", SPLITS)
    assert str(exc.value) == (
        f"{tmp_path / 'data'}: no frames.csv or images or labels here or in a sub-folder; expected "
        "images/<frame_id>.jpg|.png, labels/<frame_id>.png and frames.csv"
    )


def test_an_extra_top_folder_from_unzipping_is_accepted(tmp_path):
    """pv.zip holding pv/{frames.csv,images,labels}, unzipped into data/."""
    root = make_dataset(tmp_path / "data", [("a", "w1", "train", ALL_CLASSES), ("b", "w2", "test", ALL_CLASSES)],
                        name="pv")
    data = tmp_path / "data"
    frames = read_frames(data, SPLITS)
    assert frames == [Frame("a", "w1", "train", root / "images" / "a.png", root / "labels" / "a.png"),
                      Frame("b", "w2", "test", root / "images" / "b.png", root / "labels" / "b.png")]
    assert audit_dataset(data, load_benchmark("painting-vision"), ["test"]).ok
    assert build_manifest(data, frames, "pv1", "wall_id")["frames"][0]["label"]["path"] == "pv/labels/a.png"
    (root / "labels" / "c.png").write_bytes(b"x")
    assert list_unlisted_files(data, frames) == [root / "labels" / "c.png"]
    assert FORMAT.index_files(data, []) == [root / "frames.csv"]
    assert FORMAT.image_candidates(data, frames[0]) == [root / "images" / "a.jpg", root / "images" / "a.png"]
    assert FORMAT.index_files(tmp_path / "not-pulled-yet", []) == [tmp_path / "not-pulled-yet" / "frames.csv"]


def test_two_top_folders_are_refused(tmp_path):
    for name in ("pv", "pv-copy"):
        make_dataset(tmp_path / "data", [("a", "w1", "test", ALL_CLASSES)], name=name)
    with pytest.raises(SegbenchError) as exc:
        read_frames(tmp_path / "data", SPLITS)
    assert str(exc.value) == (
        f"{tmp_path / 'data'}: 2 folders hold frames.csv or images or labels (pv, pv-copy); expected one dataset "
        "(images/<frame_id>.jpg|.png, labels/<frame_id>.png and frames.csv): point --data at one of them, or unpack "
        "the archives so that their folders merge"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty file; expected the header 'frame_id,wall_id,split' and optionally further, distinct, named metadata columns"),
        (
            "frame,wall_id,split\na,w,test\n",
            "line 1: header is 'frame,wall_id,split', expected 'frame_id,wall_id,split' and optionally further, distinct, named metadata columns",
        ),
        ("frame_id,split,wall_id\n", "line 1: header is 'frame_id,split,wall_id', expected 'frame_id,wall_id,split' and optionally further, distinct, named metadata columns"),
        ("frame_id,wall_id,split\na,w,test\nb,w\n", "line 3: 2 columns, expected 3 (frame_id,wall_id,split)"),
        ("frame_id,wall_id,split\na,w,test,x\n", "line 2: 4 columns, expected 3 (frame_id,wall_id,split)"),
        ("frame_id,wall_id,split\n,w,test\n", "line 2: frame_id is empty"),
        (
            "frame_id,wall_id,split\na,w,test\nb,w,val\na,v,train\n",
            "line 4: duplicate frame_id 'a' (first listed at line 2)",
        ),
        (
            "frame_id,wall_id,split\nx/y,w,test\n",
            "line 2: frame_id 'x/y' contains a path separator; it must be a safe file name stem",
        ),
        (
            "frame_id,wall_id,split\n..,w,test\n",
            "line 2: frame_id '..' starts with '.'; it must be a safe file name stem",
        ),
        (
            "frame_id,wall_id,split\na b,w,test\n",
            "line 2: frame_id 'a b' contains white space or a control character; it must be a safe file name stem",
        ),
        (
            "frame_id,wall_id,split\n a,w,test\n",
            "line 2: frame_id ' a' contains white space or a control character; it must be a safe file name stem",
        ),
        ("frame_id,wall_id,split\na,,test\n", "line 2: wall_id is empty (frame 'a')"),
        ("frame_id,wall_id,split\na,w ,test\n", "line 2: wall_id 'w ' has leading or trailing white space (frame 'a')"),
        (
            "frame_id,wall_id,split,lighting\na,w,test,lit\nb,w,test,lit \n",
            "line 3: lighting 'lit ' has leading or trailing white space (frame 'b')",
        ),
        (
            "frame_id,wall_id,split\na,w,test\nb,w,dev\n",
            "line 3: split 'dev' is not one of ['train', 'val', 'test'] (frame 'b')",
        ),
        (
            "frame_id,wall_id,split\na,w,Test\n",
            "line 2: split 'Test' is not one of ['train', 'val', 'test'] (frame 'a')",
        ),
    ],
)
def test_strict_parsing_errors(tmp_path, text, message):
    data = write_frames_csv(tmp_path, text)
    with pytest.raises(SegbenchError) as exc:
        read_frames(data, SPLITS)
    assert str(exc.value) == f"{data / 'frames.csv'}: {message}"


def test_not_utf8(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "frames.csv").write_bytes(b"frame_id,wall_id,split\n\xff,w,test\n")
    with pytest.raises(SegbenchError, match=r"frames\.csv: not UTF-8 text"):
        read_frames(data, SPLITS)


def test_does_not_fail_on_missing_files(tmp_path):
    data = write_frames_csv(tmp_path, "frame_id,wall_id,split\na,w,test\n")
    assert read_frames(data, SPLITS) == [
        Frame("a", "w", "test", data / "images" / "a.jpg", data / "labels" / "a.png", labelled=False)  # no label in test
    ]
    assert list_unlisted_files(data, read_frames(data, SPLITS)) == []


def test_list_unlisted_files(tmp_path):
    data = make_dataset(tmp_path, [("a", "w", "test", ALL_CLASSES), ("b", "w", "test", ALL_CLASSES)])
    write_jpg(data / "images" / "a.jpg", noise_image("a", 16, 20))  # owned by 'a' (an audit error, not unlisted)
    write_png(data / "images" / "c.png", noise_image("c", 4, 4))
    (data / "images" / "b.jpeg").write_bytes(b"x")
    (data / "labels" / "a.jpg").write_bytes(b"x")
    (data / "labels" / ".DS_Store").write_bytes(b"x")
    (data / "labels" / "sub").mkdir()
    frames = read_frames(data, SPLITS)
    assert list_unlisted_files(data, frames) == [
        data / "images" / "b.jpeg",
        data / "images" / "c.png",
        data / "labels" / ".DS_Store",
        data / "labels" / "a.jpg",
        data / "labels" / "sub",
    ]


def test_custom_splits(tmp_path):
    data = write_frames_csv(tmp_path, "frame_id,wall_id,split\na,w,holdout\n")
    assert read_frames(data, ["holdout"])[0].split == "holdout"
    with pytest.raises(SegbenchError, match=r"split 'holdout' is not one of \['train'\]"):
        read_frames(data, ["train"])


def test_label_arrays_untouched(tmp_path):
    # the reader never opens files: a garbage label is fine here
    data = make_dataset(tmp_path, [("a", "w", "test", np.zeros((2, 2), np.uint8))])
    (data / "labels" / "a.png").write_bytes(b"not a png")
    assert len(read_frames(data, SPLITS)) == 1
