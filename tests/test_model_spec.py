"""A model as the config names it (segbench.core.model_spec): its inference mode, field by field."""

from __future__ import annotations

import pytest

from segbench.core.model_spec import InferenceMode, ModelSpec, by_shard, shard_of
from segbench.errors import SegbenchError


def test_mode_fields_from_the_config():
    entry = {"kind": "checkpoint", "path": "m.pt", "label_space": "painting-vision-10"}
    assert ModelSpec.from_entry("m", entry).inference == InferenceMode()
    spec = ModelSpec.from_entry("m", {**entry, "inference": {"mode": "slide", "crop": 512, "stride": [256, 341]}})
    assert spec.inference == InferenceMode("slide", crop=(512, 512), stride=(256, 341))
    assert spec.inference.record(640) == {"mode": "slide", "size": 640, "crop": [512, 512], "stride": [256, 341],
                                          "scales": None, "flip": False}
    ms = ModelSpec.from_entry("m", {**entry, "inference": {"mode": "multi-scale", "scales": [0.5, 1], "flip": True}})
    assert ms.inference.record(640) == {"mode": "multi-scale", "size": 640, "crop": None, "stride": None,
                                        "scales": [0.5, 1.0], "flip": True}


@pytest.mark.parametrize(
    "block, message",
    [
        ({"mode": "tiled"}, "model 'm': field 'inference/mode' is 'tiled', expected one of ['whole', 'slide', 'multi-scale']"),
        ({"mode": "slide", "crop": 64}, "model 'm': inference mode 'slide' needs field(s) ['stride']"),
        ({"mode": "slide", "crop": 64, "stride": 65},
         "model 'm': inference stride [65, 65] exceeds the crop [64, 64]: pixels between windows would get no logits"),
        ({"mode": "slide", "crop": [64, 0], "stride": 8},
         "model 'm': field 'inference/crop' must be a positive integer or [height, width], got [64, 0]"),
        ({"mode": "whole", "flip": True}, "model 'm': field(s) ['flip'] do not apply to inference mode 'whole'"),
        ({"mode": "multi-scale", "scales": []},
         "model 'm': field 'inference/scales' must be a list of positive numbers, got []"),
        ({"mode": "multi-scale", "flip": "yes"}, "model 'm': field 'inference/flip' must be true or false, got 'yes'"),
    ],
)
def test_bad_mode_fields_are_named(block, message):
    entry = {"kind": "checkpoint", "path": "m.pt", "label_space": "painting-vision-10", "inference": block}
    with pytest.raises(SegbenchError) as info:
        ModelSpec.from_entry("m", entry)
    assert str(info.value) == message


def test_by_shard_groups_by_the_hash_of_the_frame_id_in_the_given_order():
    ids, shards = [f"f{i:02d}" for i in range(12)], 4
    grouped = by_shard(ids, lambda i: i, shards)
    assert sorted(i for group in grouped.values() for i in group) == ids  # every frame once
    assert len(grouped) > 1
    for shard, group in grouped.items():
        assert group == sorted(group) and all(shard_of(i, shards) == shard for i in group)
    assert by_shard(list(reversed(ids)), lambda i: i, shards)[0] == list(reversed(grouped[0]))  # the items' order
    assert by_shard([], lambda i: i, shards) == {}
