"""A command's outputs against its inputs (io/overlap.py): onto an input, inside an input folder,
through a link or `..`; beside an input, or holding one, is fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from segbench.errors import SegbenchError
from segbench.io.overlap import overlaps, refuse_overlaps


def test_an_output_onto_an_input_or_inside_an_input_folder(tmp_path):
    data, model = tmp_path / "data", tmp_path / "best.pt"
    inputs = [("--data", data), ("--checkpoint", model)]
    assert overlaps(inputs, [("--out", model), ("--out", data / "labels" / "a.png"), ("--out", data)]) == [
        f"--out {model}: is the input --checkpoint {model}; refusing to write onto an input",
        f"--out {data / 'labels' / 'a.png'}: inside the input --data {data}; refusing to write into an input",
        f"--out {data}: is the input --data {data}; refusing to write onto an input",
    ]


def test_links_and_dotdot_are_resolved_first(tmp_path):
    (tmp_path / "data" / "labels").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "data" / "labels")
    given = tmp_path / "elsewhere" / ".." / "alias" / "a.png"
    with pytest.raises(SegbenchError) as refused:
        refuse_overlaps([("--data", tmp_path / "data")], [("--out", given)])
    assert str(refused.value) == (f"--out {given}: inside the input --data {tmp_path / 'data'}; refusing to write "
                                  "into an input")


def test_beside_an_input_or_holding_one_is_fine(tmp_path):
    inputs = [("--data", tmp_path / "data"), ("--predictions", tmp_path / "work" / "preds")]
    outputs = [("--out", tmp_path / "data-copy" / "m.json"), ("--work-dir", tmp_path / "work"),
               ("--out", Path("data.json"))]
    assert overlaps(inputs, outputs) == []
    refuse_overlaps(inputs, outputs)  # nothing raised
