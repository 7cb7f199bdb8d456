"""The interface every dataset reader provides (datasets/format.py): its defaults, and each
registered format filling it (the readers themselves: their own suites)."""

from __future__ import annotations

from pathlib import Path

from segbench.datasets import READERS, dataset_format
from segbench.datasets.format import DatasetFormat, frame_png, no_findings, no_layout


def test_defaults():
    assert frame_png("wall-01/f3") == "wall-01/f3.png"
    assert no_findings(Path("data"), []) == []
    assert no_layout(Path("data")) == {}


def test_every_reader_defines_a_format_of_its_name():
    for name in READERS:
        fmt = dataset_format(name)
        assert isinstance(fmt, DatasetFormat) and fmt.name == name


def test_painting_vision_keeps_the_default_prediction_name():
    fmt = dataset_format("painting-vision")
    assert (fmt.prediction_name, fmt.extra_findings, fmt.layout) == (frame_png, no_findings, no_layout)
