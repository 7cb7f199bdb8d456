"""records/frameindex: the index of a dataset's frames (from the reader and the manifest), written,
read back and checked for its format, version, benchmark and fields."""

import hashlib
import json

import pytest

from segbench.datasets import read_dataset
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.frameindex import (
    INDEX_FORMAT, INDEX_VERSION, build_index, index_frames, index_groups, read_index, write_index,
)
from segbench.steps.uncertainty import manifest_groups
from segbench.records.provenance import build_manifest

PV = load_benchmark("painting-vision")


@pytest.fixture
def indexed(pv_data):
    frames = read_dataset(PV, pv_data)
    manifest = build_manifest(pv_data, frames)
    return frames, manifest, build_index("painting-vision", pv_data, list(reversed(frames)), manifest)


def test_the_index_holds_each_frame_with_its_hashes_and_label_size(pv_data, indexed):
    frames, manifest, index = indexed
    assert {k: v for k, v in index.items() if k != "frames"} == {
        "format": "segbench-frame-index", "version": 3, "benchmark": "painting-vision",
        "dataset_id": manifest["dataset_id"]}
    assert [e["frame_id"] for e in index["frames"]] == ["a1", "a2", "b1", "c1", "d1", "e1"]  # sorted by id
    assert index["frames"][3] == {
        "frame_id": "c1", "group_id": "wC", "split": "val", "image": "images/c1.png", "label": "labels/c1.png",
        "prediction": "c1.png",
        "image_sha256": hashlib.sha256((pv_data / "images/c1.png").read_bytes()).hexdigest(),
        "label_sha256": hashlib.sha256((pv_data / "labels/c1.png").read_bytes()).hexdigest(),
        "label_size": [20, 16], "labelled": True, "meta": {}}  # ALL_CLASSES: 16 rows of 20


def test_written_and_read_back_the_frames_are_the_readers(pv_data, indexed, tmp_path):
    frames, _, index = indexed
    write_index(tmp_path / "frames.json", index)
    assert (tmp_path / "frames.json").read_text().endswith("}\n")
    again = read_index(tmp_path / "frames.json", "painting-vision")
    assert again == index
    assert index_frames(again, pv_data) == frames


def test_the_groups_of_the_index_are_the_manifests(indexed):
    frames, manifest, index = indexed
    groups = index_groups(index)
    assert groups == {f.frame_id: f.group_id for f in frames} and len(groups) == 6
    assert groups["c1"] == "wC"
    assert groups == manifest_groups(PV, manifest)  # what the one-shot command, which has no index, reads


def test_an_unlabelled_split_is_indexed_without_reading_a_label(pv_data, tmp_path):
    """IDD's public test split (no gtFine/test): its frames have no label to hash or measure."""
    for frame_id in ("d1", "e1"):  # the test split's labels
        (pv_data / "labels" / f"{frame_id}.png").unlink()
    frames = read_dataset(PV, pv_data)
    index = build_index("painting-vision", pv_data, frames, build_manifest(pv_data, frames))
    assert [(e["frame_id"], e["split"], e["labelled"], e["label_sha256"], e["label_size"]) for e in index["frames"]
            if e["split"] == "test"] == [("d1", "test", False, None, None), ("e1", "test", False, None, None)]
    write_index(tmp_path / "frames.json", index)
    again = index_frames(read_index(tmp_path / "frames.json", "painting-vision"), pv_data)
    assert again == frames and [f.labelled for f in again] == [True, True, True, True, False, False]


def write(path, document):
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(version=1), f"not a frame index of format '{INDEX_FORMAT}' version {INDEX_VERSION}$"),
    (lambda d: d.update(format="other"), f"not a frame index of format '{INDEX_FORMAT}' version {INDEX_VERSION}$"),
    (lambda d: d.update(benchmark="idd20k-icvgip2020"),
     "frame index of benchmark 'idd20k-icvgip2020', not 'painting-vision'$"),
    (lambda d: d["frames"][2].pop("meta"), r"frames/2: expected the fields \['frame_id', 'group_id', 'image', "
                                           r"'image_sha256', 'label', 'label_sha256', 'label_size', 'labelled', 'meta', "
                                           r"'prediction', 'split'\]$"),
    (lambda d: d["frames"].__setitem__(0, "a1"), r"frames/0: expected the fields \["),
])
def test_an_index_of_another_kind_is_refused_naming_the_file(indexed, tmp_path, edit, message):
    document = json.loads(json.dumps(indexed[2]))
    edit(document)
    with pytest.raises(SegbenchError, match=r"frames\.json: " + message):
        read_index(write(tmp_path / "frames.json", document), "painting-vision")


def test_a_missing_or_non_object_index(tmp_path):
    with pytest.raises(SegbenchError, match=r"frames\.json: frame index \(written by `segbench manifest --index-out`\) "
                                            r"not found$"):
        read_index(tmp_path / "frames.json", "painting-vision")
    with pytest.raises(SegbenchError, match=r"frames\.json: not a frame index"):
        read_index(write(tmp_path / "frames.json", []), "painting-vision")
