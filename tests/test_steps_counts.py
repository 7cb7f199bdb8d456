"""Stored shard counts read and merged (segbench.steps.counts): shards must agree on benchmark,
split, dataset and model; with the workflow's frame index (steps.metrics) the index names the
dataset, and a shard scored under an earlier dataset_id (its own frames unchanged) still merges."""

import pytest
from counts_fixtures import write_shard

from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.countsio import read_counts
from segbench.records.frameindex import INDEX_FORMAT, INDEX_VERSION, write_index
from segbench.steps.counts import counts_split, merge_counts
from segbench.steps.metrics import metrics_document

PV = load_benchmark("painting-vision")
TEN = PV.space("painting-vision-10")


def test_shards_merge_their_frames_and_cells_in_order(tmp_path):
    one = write_shard(tmp_path, "one", ["a", "b"], [(0, 1, 1, 5), (1, 2, 3, 7)])
    two = write_shard(tmp_path, "two", ["c"], [(0, 255, 0, 4)])
    counts, first, space = merge_counts(PV, [one, two])
    assert counts.frame_ids == ("a", "b", "c")
    assert counts.frame.tolist() == [0, 1, 2] and counts.gt.tolist() == [1, 2, 255]
    assert counts.pred.tolist() == [1, 3, 0] and counts.count.tolist() == [5, 7, 4]
    assert first["model"]["name"] == "best" and first["split"] == "test"
    assert space is TEN  # the benchmark's own space: name and classes agree
    assert counts_split(two) == "test"


@pytest.mark.parametrize("field, value", [("split", "val"), ("model", "other"), ("benchmark", "easyportrait"),
                                          ("dataset_id", "pv1:" + "1" * 64)])
def test_shards_that_disagree_are_not_merged(tmp_path, field, value):
    one = write_shard(tmp_path, "one", ["a"], [(0, 1, 1, 5)])
    two = write_shard(tmp_path, "two", ["b"], [(0, 1, 1, 5)], **{field: value})
    with pytest.raises(SegbenchError) as info:
        merge_counts(PV, [one, two])
    ours, theirs = read_counts(one)[1][field], read_counts(two)[1][field]  # as stored
    assert theirs != ours and (theirs == value or theirs["name"] == value)
    assert str(info.value) == f"{two}: {field} is {theirs!r} but {one} has {ours!r}; not mergeable"


def test_counts_of_another_benchmark_a_frame_twice_or_no_files(tmp_path):
    other = write_shard(tmp_path, "other", ["a"], [(0, 1, 1, 5)], benchmark="easyportrait")
    with pytest.raises(SegbenchError, match=r"other\.parquet: counts are for benchmark 'easyportrait', not "
                                            r"'painting-vision'$"):
        merge_counts(PV, [other])
    one = write_shard(tmp_path, "one", ["a", "b"], [(0, 1, 1, 5)])
    again = write_shard(tmp_path, "again", ["b"], [(0, 1, 1, 5)])
    with pytest.raises(SegbenchError, match=r"cannot merge \[.*\]: frames counted in more than one shard: \['b'\]$"):
        merge_counts(PV, [one, again])
    with pytest.raises(SegbenchError, match=r"^no counts files given$"):
        merge_counts(PV, [])


def test_a_recorded_space_with_other_classes_is_its_own(tmp_path):
    path = write_shard(tmp_path, "one", ["a"], [(0, 1, 1, 5)], classes=["x", "y"])
    _, _, space = merge_counts(PV, [path])
    assert space is not TEN and space.name == TEN.name and list(space.names) == ["x", "y"]


OLD, NEW = "pv1:" + "1" * 64, "pv1:" + "2" * 64


def index_of(tmp_path, frame_ids, split="test"):
    path = tmp_path / "frames.json"
    entries = [{"frame_id": f, "group_id": "w", "split": split, "image": f"images/{f}.png", "label": f"labels/{f}.png",
                "prediction": f"{f}.png", "image_sha256": "0" * 64, "label_sha256": "0" * 64, "label_size": [1, 1],
                "labelled": True, "meta": {}} for f in frame_ids]
    write_index(path, {"format": INDEX_FORMAT, "version": INDEX_VERSION, "benchmark": PV.name, "dataset_id": NEW,
                       "frames": entries})
    return path


def test_with_the_frame_index_shards_of_an_earlier_dataset_id_merge_and_the_index_names_the_dataset(tmp_path):
    unchanged = write_shard(tmp_path, "one", ["a"], [(0, 1, 1, 5)], dataset_id=OLD)  # scored before a label changed
    rescored = write_shard(tmp_path, "two", ["b"], [(0, 2, 2, 3)], dataset_id=NEW)
    with pytest.raises(SegbenchError, match="dataset_id is .* not mergeable$"):
        metrics_document(PV, [unchanged, rescored])  # without the index nothing names the dataset
    document = metrics_document(PV, [unchanged, rescored], index_of(tmp_path, ["a", "b"]))
    assert document["dataset_id"] == NEW and document["frames"] == 2 and document["pixels_evaluated"] == 8
    assert metrics_document(PV, [rescored])["dataset_id"] == NEW  # one dataset: the shards name it


def test_with_the_frame_index_the_counts_hold_exactly_its_frames_of_the_split(tmp_path):
    shard = write_shard(tmp_path, "one", ["a", "z"], [(0, 1, 1, 5), (1, 1, 1, 5)], dataset_id=NEW)
    index = index_of(tmp_path, ["a", "b"])
    with pytest.raises(SegbenchError) as info:
        metrics_document(PV, [shard], index)
    assert str(info.value) == (f"{index}: the counts do not hold the index's frames of split 'test' "
                               "(missing ['b'], not in the index ['z'])")
