"""Restoring DVC-pinned inputs (segbench.workflow.pinning): what is there is left alone, and an
input that is missing and not pinned is named with what to do (no DVC call in either case)."""

from __future__ import annotations

import pytest

from segbench.errors import SegbenchError
from segbench.workflow.pinning import restore


def test_present_inputs_are_left_alone(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "model.pt").write_bytes(b"x")
    assert restore([tmp_path / "data", tmp_path / "model.pt"]) == []
    assert restore([]) == []


def test_a_missing_input_without_its_dvc_file_is_named(tmp_path):
    missing = tmp_path / "model.pt"
    with pytest.raises(SegbenchError) as exc:
        restore([missing])
    assert str(exc.value) == (
        f"'{missing}' is missing and not pinned: there is no {missing}.dvc. Restore the .dvc file from git "
        f"(`git checkout -- {missing}.dvc`), or track the input with `dvc add {missing}` and `dvc push`."
    )
