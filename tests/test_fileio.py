"""io/fileio: atomic writes (one file, a set of files), JSON and CSV documents, a file's SHA-256."""

import hashlib
import os
from pathlib import Path

import pytest

from segbench.errors import SegbenchError
from segbench.io.fileio import (
    BLOCK,
    atomic_write_text,
    atomic_write_texts,
    partial_path,
    read_json,
    read_json_fields,
    sha256_file,
    write_csv_rows,
    write_json,
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.suffix in (".partial", ".earlier"))


def test_sha256_file_streams_large_files(tmp_path):
    payload = os.urandom(3 * (1 << 20) + 17)
    (tmp_path / "big.bin").write_bytes(payload)
    assert sha256_file(tmp_path / "big.bin") == sha(payload)


def test_sha256_file_errors(tmp_path):
    with pytest.raises(SegbenchError, match=r"missing\.bin: file not found"):
        sha256_file(tmp_path / "missing.bin")
    with pytest.raises(SegbenchError, match=r"is a folder, expected a file"):
        sha256_file(tmp_path)


def test_sha256_of_an_empty_file_and_of_exactly_one_block(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    assert sha256_file(tmp_path / "empty") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    payload = bytes(range(256)) * (BLOCK // 256)
    (tmp_path / "block").write_bytes(payload)
    assert sha256_file(tmp_path / "block") == sha(payload)


def test_partial_path_is_beside_the_target():
    assert partial_path(Path("a/b.json")) == Path("a/b.json.partial")


def test_atomic_write_text_makes_the_folder_and_leaves_no_partial(tmp_path):
    target = tmp_path / "new" / "t.txt"
    atomic_write_text(target, "é\nline\n")
    assert target.read_bytes() == "é\nline\n".encode("utf-8")
    assert leftovers(tmp_path) == []


def test_atomic_write_text_into_a_file_as_folder_is_refused_naming_the_target(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(SegbenchError, match=r"plain/t\.txt: cannot write: "):
        atomic_write_text(tmp_path / "plain" / "t.txt", "y")
    assert (tmp_path / "plain").read_text() == "x"


def test_atomic_write_texts_writes_every_file(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    atomic_write_texts({tmp_path / "a.txt": "new a", tmp_path / "sub" / "b.txt": "new b"})
    assert (tmp_path / "a.txt").read_text() == "new a" and (tmp_path / "sub" / "b.txt").read_text() == "new b"
    assert leftovers(tmp_path) == []


def test_atomic_write_texts_failing_on_the_second_file_restores_the_first(tmp_path):
    (tmp_path / "a.txt").write_text("old")
    (tmp_path / "b.txt").mkdir()  # a folder where the second file goes: its rename fails
    (tmp_path / "b.txt" / "inside").write_text("kept")
    texts = {tmp_path / "a.txt": "new", tmp_path / "b.txt": "new"}
    with pytest.raises(SegbenchError) as info:
        atomic_write_texts(texts)
    assert str(info.value).endswith(f"; none of {sorted(str(p) for p in texts)} was written")
    assert (tmp_path / "a.txt").read_text() == "old"
    assert (tmp_path / "b.txt" / "inside").read_text() == "kept"
    assert leftovers(tmp_path) == []


def test_atomic_write_texts_failing_removes_the_files_it_had_created(tmp_path):
    (tmp_path / "b.txt").mkdir()
    with pytest.raises(SegbenchError):
        atomic_write_texts({tmp_path / "a.txt": "new", tmp_path / "b.txt": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]


def test_write_json_is_indented_utf8_with_a_final_newline(tmp_path):
    write_json(tmp_path / "d.json", {"b": "é", "a": [1]})
    assert (tmp_path / "d.json").read_text(encoding="utf-8") == '{\n  "b": "é",\n  "a": [\n    1\n  ]\n}\n'


def test_read_json_names_what_is_missing_or_not_json(tmp_path):
    with pytest.raises(SegbenchError, match=r"^.*: is a folder, expected a file$"):
        read_json(tmp_path, "frame index")
    with pytest.raises(SegbenchError, match=r"x\.json: frame index not found$"):
        read_json(tmp_path / "x.json", "frame index")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SegbenchError, match=r"bad\.json: not JSON \("):
        read_json(tmp_path / "bad.json")
    (tmp_path / "latin.json").write_bytes(b'"\xe9"')  # the one file-level wording (io/oserrors.py)
    with pytest.raises(SegbenchError, match=r"latin\.json: not UTF-8 text \(invalid continuation byte at byte 1\)$"):
        read_json(tmp_path / "latin.json")


def test_read_json_fields_wants_an_object_with_every_field(tmp_path):
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(SegbenchError, match=r"list\.json: expected a JSON object, got list$"):
        read_json_fields(tmp_path / "list.json", ["a"])
    (tmp_path / "obj.json").write_text('{"a": 1}')
    with pytest.raises(SegbenchError, match=r"obj\.json: missing field\(s\) \['b', 'c'\]$"):
        read_json_fields(tmp_path / "obj.json", ["a", "b", "c"])
    assert read_json_fields(tmp_path / "obj.json", ["a"]) == {"a": 1}


def test_write_csv_rows_columns_in_order_of_first_appearance_none_empty(tmp_path):
    write_csv_rows(tmp_path / "r.csv", [{"a": 1, "b": None}, {"c": "x, y", "a": 2}])
    assert (tmp_path / "r.csv").read_text() == 'a,b,c\n1,,\n2,,"x, y"\n'
