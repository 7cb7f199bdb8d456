"""A file's tensors before any operation: stored values of their own (models/tensors.py)."""

from __future__ import annotations

import pytest
import torch

from segbench.errors import SegbenchError
from segbench.io.limits import LIMITS
from segbench.models.tensors import check_tensors, overlapping, storage_problem


@pytest.mark.parametrize("tensor", [
    torch.zeros(4, 3, 3, 3),
    torch.zeros(4, 6).t(),  # transposed: every element its own
    torch.zeros(4, 6)[:, ::2],  # a strided slice
    torch.zeros(5, 1, 3).expand(5, 1, 3),  # a dimension of one, whatever its stride
    torch.zeros(()),
    torch.zeros(0, 7),
])
def test_tensors_with_storage_of_their_own_pass(tensor):
    assert not overlapping(tensor) and storage_problem(tensor) is None


def test_zero_and_overlapping_strides_and_meta_tensors_are_refused():
    assert storage_problem(torch.zeros(1).expand(6, 2)) == (
        "of shape (6, 2) has zero or overlapping strides (0, 0): 12 elements from 1 stored values")
    assert storage_problem(torch.arange(10.0).as_strided((3, 4), (2, 1))) == (  # rows 0-3, 2-5, 4-7
        "of shape (3, 4) has zero or overlapping strides (2, 1): 12 elements from 10 stored values")
    assert storage_problem(torch.zeros(2, 2, device="meta")) == "is on device 'meta', not values stored in the file"
    assert storage_problem(torch.zeros(2, 2).to_sparse()) == "has layout torch.sparse_coo, not a dense tensor"


def test_check_tensors_names_the_file_and_the_first_tensor(monkeypatch):
    state = {"a": torch.zeros(3), "b": torch.zeros(1).expand(4), "c": torch.zeros(2, device="meta")}
    with pytest.raises(SegbenchError) as info:
        check_tensors(state, "m.pt")
    assert str(info.value) == ("m.pt: state_dict refused: tensor 'b' of shape (4,) has zero or overlapping strides "
                               "(0,): 4 elements from 1 stored values (and 1 more tensors)")
    monkeypatch.setattr("segbench.models.tensors.LIMITS", type(LIMITS)(max_parameters=5))
    with pytest.raises(SegbenchError) as info:
        check_tensors({"a": torch.zeros(3), "b": torch.zeros(3)}, "m.pt")
    assert str(info.value) == "m.pt: state_dict holds 6 values, more than the limit of 5"
    check_tensors({"a": torch.zeros(3), "b": torch.zeros(2)}, "m.pt")
