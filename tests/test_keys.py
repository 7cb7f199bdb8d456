"""The shard jobs' content keys (segbench.workflow.keys): exactly the bytes a result depends on,
read once per state of the records they come from."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from segbench.core.model_spec import shard_of
from segbench.workflow.keys import ContentKeys, StateCache, content_key, model_content

SHARDS = 4
IDS = [f"f{i:02d}" for i in range(12)]
MODELS = {"best": {"kind": "checkpoint", "path": "artifacts/best.pt", "role": "baseline", "label_space": "pv-10"}}
IDENTITY = {"checkpoint_sha256": "c" * 64, "label_space": "pv-10", "classes": ["a", "b"]}


def entry(frame_id: str, split: str = "test") -> dict:
    return {"frame_id": frame_id, "split": split, "image_sha256": f"i-{frame_id}", "label_sha256": f"l-{frame_id}",
            "label_size": [64, 48]}


@pytest.fixture
def records(tmp_path: Path) -> tuple[Path, Path]:
    index, identity = tmp_path / "frames.json", tmp_path / "identity.json"
    index.write_text(json.dumps({"frames": [entry(i) for i in reversed(IDS)] + [entry("t0", "train")]}))
    identity.write_text(json.dumps(IDENTITY))
    return index, identity


def test_content_key_is_a_digest_of_the_canonical_json():
    document = {"b": [1, "x"], "a": None}
    expected = hashlib.sha256(b'{"a":null,"b":[1,"x"]}').hexdigest()[:32]
    assert content_key(document) == content_key({"a": None, "b": [1, "x"]}) == expected


def test_model_content_leaves_out_where_the_model_lies_and_its_role():
    assert model_content(MODELS["best"], IDENTITY) == {
        "settings": {"kind": "checkpoint", "label_space": "pv-10"}, "sha256": "c" * 64, "label_space": "pv-10",
        "classes": ["a", "b"]}


def test_the_keys_are_the_documents_of_their_shard(records: tuple[Path, Path]):
    index, identity = map(str, records)
    keys = ContentKeys(MODELS, {"batch_size": 4, "device": "auto", "gpu": 0})
    members = sorted(i for i in IDS if shard_of(i, SHARDS) == 1)
    assert members  # 12 frames over 4 shards
    assert keys.shard_content(index, "test", 1, SHARDS, ("label_sha256",)) == [[i, f"l-{i}"] for i in members]
    model = model_content(MODELS["best"], IDENTITY)
    assert keys.inference(index, identity, "best", "test", 1, SHARDS) == content_key({
        "model": model, "batch_size": 4, "device": "auto",
        "frames": [[i, f"i-{i}", [64, 48]] for i in members]})
    assert keys.scoring(index, identity, "best", "test", 1, SHARDS) == content_key({
        "frames": [[i, f"l-{i}"] for i in members], "model": model})
    assert keys.scoring(index, None, None, "test", 1, SHARDS) == content_key({"frames": [[i, f"l-{i}"] for i in members]})


def test_a_key_changes_with_its_own_shards_bytes_only(records: tuple[Path, Path]):
    index, identity = records
    keys = ContentKeys(MODELS, {"batch_size": 4, "device": "auto"})
    before = {s: keys.inference(str(index), str(identity), "best", "test", s, SHARDS) for s in range(SHARDS)}
    changed = IDS[0]
    document = json.loads(index.read_text())
    next(e for e in document["frames"] if e["frame_id"] == changed)["image_sha256"] = "other"
    index.write_text(json.dumps(document) + " ")  # another size: another state
    after = {s: keys.inference(str(index), str(identity), "best", "test", s, SHARDS) for s in range(SHARDS)}
    assert [s for s in range(SHARDS) if after[s] != before[s]] == [shard_of(changed, SHARDS)]


def test_a_value_is_computed_once_per_state_of_its_files(tmp_path: Path):
    record = tmp_path / "r.json"
    record.write_text("1")
    cache, calls = StateCache(), []

    def compute() -> str:
        calls.append(1)
        return record.read_text()

    assert [cache.get("r", [str(record)], compute) for _ in range(3)] == ["1", "1", "1"] and len(calls) == 1
    stat = record.stat()
    os.utime(record, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # touched: same bytes, a new time
    assert cache.get("r", [str(record)], compute) == "1" and len(calls) == 2
    record.write_text("22")
    os.utime(record, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # same time, another size
    assert cache.get("r", [str(record)], compute) == "22" and len(calls) == 3
    assert cache.get("other", [str(record)], compute) == "22" and len(calls) == 4  # each value its own
