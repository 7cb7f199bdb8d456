"""datasets/listing: a CSV listing of frames parsed strictly, every refusal naming the file and the line."""

import pytest

from segbench.datasets.listing import Columns, ListedFrame, listed_frames, parse_rows, read_listing, unsafe_stem_reason
from segbench.errors import SegbenchError
from segbench.io.limits import Limits

COLUMNS = Columns("frame_id", "wall_id", "split")
SPLITS = ("train", "test")


def header_problem(header):
    return None if header[:3] == ("frame_id", "wall_id", "split") else "'frame_id,wall_id,split'"


def listed(text: str, **options) -> list[ListedFrame]:
    return listed_frames("f.csv", parse_rows(text, "f.csv"), COLUMNS, SPLITS, header_problem, **options)


def refusal(text: str, **options) -> str:
    with pytest.raises(SegbenchError) as info:
        listed(text, **options)
    return str(info.value)


@pytest.mark.parametrize("frame_id, reason", [
    ("a1", None), ("a.b-c_d", None), ("", "is empty"), ("a/b", "contains a path separator"),
    ("a\\b", "contains a path separator"), (".hidden", "starts with '.'"),
    ("a b", "contains white space or a control character"), ("a\x07", "contains white space or a control character"),
])
def test_unsafe_stem_reason(frame_id, reason):
    assert unsafe_stem_reason(frame_id) == reason


def test_rows_in_file_order_blank_lines_skipped_other_columns_as_meta():
    frames = listed("frame_id,wall_id,split,lighting,\nb,w2,test,left,7\n\na,w1,train,right,8\n")
    assert frames == [ListedFrame(2, "b", "w2", "test", {"lighting": "left"}),  # the unnamed column is no metadata
                      ListedFrame(4, "a", "w1", "train", {"lighting": "right"})]


def test_split_and_frame_id_derived_the_structural_columns_no_metadata():
    frames = listed("frame_id,wall_id,split,set\na.jpg,w1,,tr\n", frame_id_of=lambda v: v.removesuffix(".jpg"),
                    split_of=lambda row: {"tr": "train"}[row["set"]], structural=("set",))
    assert frames == [ListedFrame(2, "a", "w1", "train", {})]

    def unknown_set(row):
        raise ValueError(f"set {row['split']!r} is none of the release's")

    assert refusal("frame_id,wall_id,split\na,w1,x\n", split_of=unknown_set) == (
        "f.csv: line 2: set 'x' is none of the release's (frame 'a')")


@pytest.mark.parametrize("text, message", [
    ("", "f.csv: empty file; expected the header 'frame_id,wall_id,split'"),
    ("id,wall_id,split\n", "f.csv: line 1: header is 'id,wall_id,split', expected 'frame_id,wall_id,split'"),
    ("frame_id,wall_id,split\na,w1\n", "f.csv: line 2: 2 columns, expected 3 (frame_id,wall_id,split)"),
    ("frame_id,wall_id,split\n,w1,test\n", "f.csv: line 2: frame_id is empty"),
    ("frame_id,wall_id,split\n../a,w1,test\n",
     "f.csv: line 2: frame_id '../a' contains a path separator; it must be a safe file name stem"),
    ("frame_id,wall_id,split\na,w1,test\n\nb,w1,test\na,w2,train\n",
     "f.csv: line 5: duplicate frame_id 'a' (first listed at line 2)"),
    ("frame_id,wall_id,split\na,,test\n", "f.csv: line 2: wall_id is empty (frame 'a')"),
    ("frame_id,wall_id,split\na,w1, test\n", "f.csv: line 2: split ' test' has leading or trailing white space (frame 'a')"),
    ("frame_id,wall_id,split\na,w1,val\n", "f.csv: line 2: split 'val' is not one of ['train', 'test'] (frame 'a')"),
    ('frame_id,wall_id,split\n"a,w1,test\n', "f.csv: line 2: malformed CSV (unexpected end of data)"),
])
def test_refusals_name_the_file_and_the_line(text, message):
    assert refusal(text) == message


def test_read_listing_drops_a_byte_order_mark_and_names_a_missing_or_non_utf8_file(tmp_path):
    path = tmp_path / "frames.csv"
    path.write_bytes("\ufeffframe_id,wall_id,split\na,w1,test\n".encode("utf-8"))
    assert read_listing(path, COLUMNS, SPLITS, "the audit", header_problem) == [ListedFrame(2, "a", "w1", "test", {})]
    path.write_bytes(b"frame_id,wall_id,split\n\xff,w1,test\n")
    with pytest.raises(SegbenchError, match=r"frames\.csv: not UTF-8 text \(invalid start byte at byte 23\)$"):
        read_listing(path, COLUMNS, SPLITS, "the audit", header_problem)
    with pytest.raises(SegbenchError, match=r"gone\.csv: file not found \(the audit\)$"):
        read_listing(tmp_path / "gone.csv", COLUMNS, SPLITS, "the audit", header_problem)


def test_a_listing_larger_than_the_limit_is_read_no_further(tmp_path, monkeypatch):
    path = tmp_path / "frames.csv"
    text = "frame_id,wall_id,split\na,w1,test\n"  # 23 + 10 bytes
    path.write_text(text)
    monkeypatch.setattr("segbench.datasets.listing.LIMITS", Limits(max_text_bytes=len(text)))
    assert read_listing(path, COLUMNS, SPLITS, "the audit", header_problem) == [ListedFrame(2, "a", "w1", "test", {})]
    path.write_text(text + "b,w2,test\n")
    with pytest.raises(SegbenchError) as info:
        read_listing(path, COLUMNS, SPLITS, "the audit", header_problem)
    assert str(info.value) == f"{path}: more than the limit of 33 bytes"
