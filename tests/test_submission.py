"""Submission records on disk (stages/submission.py): the JSON text written, and the files and
records refused (a valid record is built and written by test_oneshot.py and the workflow)."""

from __future__ import annotations

import pytest

from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.stages.submission import dumps, read_record, write_record


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def test_dumps_indents_keeps_unicode_and_ends_with_a_newline():
    assert dumps({"a": "é", "b": [1]}) == '{\n  "a": "é",\n  "b": [\n    1\n  ]\n}\n'


def test_an_invalid_record_is_never_written(tmp_path, benchmark):
    path = tmp_path / "record.json"
    with pytest.raises(SegbenchError) as info:
        write_record(path, {"benchmark_version": "1.0"}, benchmark)
    assert str(info.value).startswith(
        f"invalid submission:\n  {path}: field '(top level)': 'taxonomy_version' is a required property\n"
    )
    assert not path.exists()


def test_unreadable_records_are_named(tmp_path, benchmark):
    with pytest.raises(SegbenchError, match=r"^.*none\.json: submission record not found$"):
        read_record(tmp_path / "none.json", benchmark)
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SegbenchError) as info:
        read_record(bad, benchmark)
    assert str(info.value) == f"{bad}: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    bad.write_text("{}\n")
    with pytest.raises(SegbenchError, match=r"^invalid submission:\n  .*bad\.json: field '\(top level\)': 'benchmark_version' is a required property"):
        read_record(bad, benchmark)
