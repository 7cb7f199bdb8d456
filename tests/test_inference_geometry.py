"""The protocol's sizes for a frame and the batches by padded shape (segbench.stages.inference_geometry)."""

from __future__ import annotations

import pytest

from inference_fixtures import random_rgb, write_frame
from segbench.stages.inference_geometry import Geometry, frame_geometry, make_batches, padded_size, resized_size


@pytest.mark.parametrize(
    ("hw", "size", "expected"),
    [
        ((480, 640), 640, (480, 640)),  # already at the size
        ((500, 1000), 640, (320, 640)),  # landscape 1000x500 -> 640x320
        ((1000, 500), 640, (640, 320)),  # portrait
        ((517, 333), 640, (640, 412)),  # 333 * 640 / 517 = 412.22
        ((333, 517), 640, (412, 640)),
        ((5, 8), 4, (3, 4)),  # 2.5 rounds half up (Python's round would give 2)
        ((1, 1000), 640, (1, 640)),  # never below one pixel
        ((640, 640), 320, (320, 320)),
    ],
)
def test_resized_size(hw, size, expected):
    assert resized_size(*hw, size) == expected


def test_padded_size():
    assert padded_size(412, 640, 32) == (416, 640)
    assert padded_size(320, 640, 8) == (320, 640)
    assert padded_size(1, 1, 32) == (32, 32)


def test_frame_geometry_reads_headers(tmp_path):
    frame = write_frame(tmp_path, "f", random_rgb(517, 333, 0), label_hw=(600, 400))
    assert frame_geometry(frame, 640, 32) == Geometry((517, 333), (640, 412), (640, 416), (600, 400))


def test_batches_group_by_padded_shape_in_frame_order():
    a, b = (64, 96), (96, 64)
    shapes = [a, b, a, a, b, a, a]
    geometries = [Geometry(s, s, s, s) for s in shapes]
    assert make_batches(geometries, 2) == [[0, 2], [1, 4], [3, 5], [6]]  # full batches as they fill, then the rest
    assert make_batches(geometries, 1) == [[i] for i in range(7)]
    assert make_batches(geometries, 10) == [[0, 2, 3, 5, 6], [1, 4]]
