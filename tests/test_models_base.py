"""The pieces every model adapter shares (models/base.py): normalization in pixel units and its
file field, the device, and how a declared class list differs from a label space."""

from __future__ import annotations

import pytest
import torch

from segbench.core.labels import LabelClass, LabelSpace
from segbench.errors import SegbenchError
from segbench.models.base import Normalization, name_differences, resolve_device, space_from_names

ABC = LabelSpace("abc", tuple(LabelClass(i, n, (0, 0, 0)) for i, n in enumerate("abc")))


def test_normalization_is_stored_in_unit_scale_and_applied_in_pixels():
    norm = Normalization.from_file_field({"mean": [0.5, 0.25, 1], "std": [0.25, 0.5, 0.125]}, "m.pt")
    assert norm == Normalization((127.5, 63.75, 255.0), (63.75, 127.5, 31.875))
    assert norm.to_file_field() == {"mean": [0.5, 0.25, 1.0], "std": [0.25, 0.5, 0.125]}
    images = torch.tensor([255.0, 0.0, 255.0]).view(1, 3, 1, 1)
    # (255 - 127.5) / 63.75, (0 - 63.75) / 127.5, (255 - 255) / 31.875
    assert norm.apply(images).flatten().tolist() == [2.0, -0.5, 0.0]


@pytest.mark.parametrize(
    "value, message",
    [
        ([0.5, 0.5, 0.5], "m.pt: field 'normalization' must be {'mean': [r, g, b], 'std': [r, g, b]}"),
        ({"mean": [0.5, 0.5, 0.5]}, "m.pt: field 'normalization' must be {'mean': [r, g, b], 'std': [r, g, b]}"),
        ({"mean": [0.5, 0.5], "std": [1, 1, 1]}, "m.pt: field 'normalization/mean' must be three numbers, got [0.5, 0.5]"),
        ({"mean": [0, 0, 0], "std": "abc"}, "m.pt: field 'normalization/std' must be three numbers, got 'abc'"),
        ({"mean": [0, 0, True], "std": [1, 1, 1]}, "m.pt: field 'normalization/mean' must be three numbers, got [0, 0, True]"),
        ({"mean": [124, 117, 104], "std": [1, 1, 1]},
         "m.pt: field 'normalization/mean' [124.0, 117.0, 104.0] must be in 0..1 units (pixel / 255)"),
        ({"mean": [0, 0, 0], "std": [0.5, 0, 0.5]},
         "m.pt: field 'normalization/std' [0.5, 0.0, 0.5] must be in (0, 1] (0..1 units, pixel / 255)"),
    ],
)
def test_ill_formed_normalization_fields(value, message):
    with pytest.raises(SegbenchError) as info:
        Normalization.from_file_field(value, "m.pt")
    assert str(info.value) == message


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(SegbenchError, match=r"^unknown device 'gpu0' \(use auto, cpu, cuda or cuda:N\)$"):
        resolve_device("gpu0")


def test_name_differences():
    assert name_differences(["a", "B", "c"], ABC) == "id 1: 'B' where 'abc' has 'b'"
    assert name_differences(["a", "b"], ABC) == "2 classes where 'abc' has 3"
    assert name_differences(["x", "b", "c", "d"], ABC) == "id 0: 'x' where 'abc' has 'a'; 4 classes where 'abc' has 3"
    many = LabelSpace("many", tuple(LabelClass(i, f"c{i}", (0, 0, 0)) for i in range(10)))
    assert name_differences([f"d{i}" for i in range(10)], many) == "; ".join(
        [f"id {i}: 'd{i}' where 'many' has 'c{i}'" for i in range(8)] + ["... and 2 more"]
    )


def test_space_from_names():
    space = space_from_names("abc", ["a", "b", "c"], "cfg.json")
    assert (space.name, space.names, space.void) == ("abc", ["a", "b", "c"], ())
    with pytest.raises(SegbenchError, match=r"^cfg\.json: label space 'dup': duplicate class names \['a'\]$"):
        space_from_names("dup", ["a", "a"], "cfg.json")
