"""Which frames a step works on (segbench.steps.frames): one shard of a split; a split from the
frame index with the dataset_id it records."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.steps.dataset_identity import write_identity
from segbench.steps.frames import shard, split_and_dataset

FRAMES = [Frame(f"f{i:02d}", "w", "test", Path(f"images/f{i:02d}.png"), Path(f"labels/f{i:02d}.png")) for i in range(30)]


def test_shards_partition_the_frames_by_a_hash_of_their_id():
    parts = [shard(FRAMES, 4, k) for k in range(4)]
    assert sorted(f.frame_id for part in parts for f in part) == [f.frame_id for f in FRAMES]
    for k, part in enumerate(parts):  # the shard is the first 8 bytes of the id's SHA-256, big-endian, mod 4
        assert [f.frame_id for f in part] == [
            f.frame_id for f in FRAMES if int.from_bytes(hashlib.sha256(f.frame_id.encode()).digest()[:8], "big") % 4 == k
        ]
    assert shard(FRAMES, None, None) == FRAMES and shard(FRAMES, 4, None) == FRAMES


@pytest.mark.parametrize(
    ("shards", "index", "message"),
    [
        (None, 0, "--shard needs --shards N (the split's shard count, at least 1)"),
        (0, 0, "--shard needs --shards N (the split's shard count, at least 1)"),
        (4, 4, "shard 4 does not exist: the split is cut into 4 shard(s)"),
        (4, -1, "shard -1 does not exist: the split is cut into 4 shard(s)"),
    ],
)
def test_a_shard_that_does_not_exist_is_named(shards, index, message):
    with pytest.raises(SegbenchError) as exc:
        shard(FRAMES, shards, index)
    assert str(exc.value) == message


def test_a_split_from_the_frame_index_comes_with_its_dataset_id(pv_data, tmp_path):
    benchmark = load_benchmark("painting-vision")
    manifest = write_identity(benchmark, pv_data, None, None, None, tmp_path / "frames.json")
    indexed, dataset_id = split_and_dataset(benchmark, pv_data, "test", tmp_path / "frames.json")
    listed, none = split_and_dataset(benchmark, pv_data, "test")
    assert dataset_id == manifest["dataset_id"] and none is None
    assert [f.frame_id for f in indexed] == [f.frame_id for f in listed] == ["d1", "e1"]
