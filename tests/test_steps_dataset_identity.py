"""The dataset's identity as a step (segbench.steps.dataset_identity): the documents asked for
written, each from the one listing, and a committed manifest verified."""

import json

import pytest

from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.frameindex import read_index
from segbench.records.provenance import read_manifest
from segbench.steps.dataset_identity import dataset_manifest, write_identity

PV = load_benchmark("painting-vision")


def test_the_documents_asked_for_agree(pv_data, tmp_path):
    out = tmp_path / "out"
    manifest = write_identity(PV, pv_data, None, out / "manifest.json", out / "dataset_id.json", out / "frames.json")
    assert manifest["dataset_id"].startswith("pv1:")
    assert read_manifest(out / "manifest.json") == manifest
    assert json.loads((out / "dataset_id.json").read_text()) == {"dataset_id": manifest["dataset_id"], "frames": 6}
    index = read_index(out / "frames.json", "painting-vision")
    assert index["dataset_id"] == manifest["dataset_id"] and len(index["frames"]) == 6
    assert sorted(p.name for p in out.iterdir()) == ["dataset_id.json", "frames.json", "manifest.json"]


def test_only_what_is_asked_is_written(pv_data, tmp_path):
    write_identity(PV, pv_data, None, None, tmp_path / "dataset_id.json", None)
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["dataset_id.json"]


def test_a_committed_manifest_is_verified(pv_data, tmp_path):
    committed = tmp_path / "manifest.json"
    built = write_identity(PV, pv_data, None, committed, None, None)
    assert dataset_manifest(PV, pv_data, committed) == built
    (pv_data / "labels" / "d1.png").write_bytes((pv_data / "labels" / "e1.png").read_bytes() + b"\0")
    with pytest.raises(SegbenchError) as info:
        dataset_manifest(PV, pv_data, committed)
    assert str(info.value).startswith(f"the data in {pv_data} does not match the data manifest {committed} "
                                      "(1 difference(s)); refusing to evaluate:\n  labels/d1.png: bytes changed "
                                      "(frame 'd1'; manifest sha256 ")
