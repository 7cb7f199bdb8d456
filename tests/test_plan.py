"""The workflow's plan (segbench.workflow.plan): shards by a hash of the frame id within max_shards, the dataset fingerprint."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pv_fixtures import ALL_CLASSES, make_dataset
from segbench.core.model_spec import shard_of, shard_total
from segbench.datasets import read_dataset
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records import provenance
from segbench.workflow.config import check_config
from segbench.workflow.plan import BenchmarkPlan, Plan


@pytest.fixture
def data(tmp_path: Path) -> Path:
    frames = [(f"w{w}_f{f}", f"w{w}", "test" if w < 4 else "train", ALL_CLASSES) for w in range(6) for f in range(5)]
    return make_dataset(tmp_path, frames)


def planned(data: Path, shard_size: int, max_shards: int | None, manifest: Path | None = None) -> BenchmarkPlan:
    return BenchmarkPlan("painting-vision", str(data), str(manifest) if manifest else None, ("test",), ("best",),
                         shard_size, max_shards)


@pytest.mark.parametrize(("frames", "shard_size", "max_shards", "shards"), [
    (16, 8, 100, 2),          # the embedded default
    (16, 8, None, 2),
    (17, 8, 100, 4),          # ceil(17 / 8) = 3, rounded up to a power of two
    (2000, 8, 100, 100),      # 250 -> 256, then max_shards
    (20000, 8, 100, 100),
    (20000, 8, None, 4096),   # 2500 -> 4096
    (20000, 500, 100, 64),    # 40 -> 64
    (1, 8, 100, 1),
    (0, 8, 100, 1),           # an empty split still has one (empty) shard
])
def test_shard_total(frames, shard_size, max_shards, shards):
    assert shard_total(frames, shard_size, max_shards) == shards


def test_shard_of_is_a_stable_hash_of_the_frame_id():
    # sha256("w0_f0") begins 0x92a5... : independent of Python's hash seed and of the other frames
    digest = int(hashlib.sha256(b"w0_f0").hexdigest()[:16], 16)
    assert shard_of("w0_f0", 7) == digest % 7
    assert [shard_of("w0_f0", k) for k in (1, 2, 4)] == [0, digest % 2, digest % 4]


def test_adding_or_removing_a_frame_moves_no_other_frame():
    ids = [f"frame{i:05d}" for i in range(2000)]

    def shards_of(frame_ids):
        total = shard_total(len(frame_ids), 8, 100)
        return {i: shard_of(i, total) for i in frame_ids}

    before = shards_of(ids)
    assert len(set(before.values())) == 100
    added = shards_of(ids + ["frame99999"])
    assert {k: v for k, v in added.items() if k != "frame99999"} == before
    assert shards_of(ids[1:]) == {k: v for k, v in before.items() if k != ids[0]}


def test_shards_partition_the_split_in_frame_id_order(data: Path, tmp_path: Path):
    benchmark = load_benchmark("painting-vision")
    manifest = tmp_path / "manifest.json"
    provenance.write_manifest(manifest, provenance.build_manifest(data, read_dataset(benchmark, data)))
    plan = planned(data, 3, 4, manifest)
    test = [f.frame_id for f in plan.split_frames("test")]
    assert test == sorted(f"w{w}_f{f}" for w in range(4) for f in range(5))
    assert plan.shards("test") == [0, 1, 2, 3]  # ceil(20 / 3) = 7 -> 8, then max_shards 4
    parts = [[f.frame_id for f in plan.shard_frames("test", s)] for s in plan.shards("test")]
    assert sorted(i for part in parts for i in part) == test  # every frame once
    for s, part in enumerate(parts):
        assert part == sorted(part) and all(shard_of(i, 4) == s for i in part)
    # the same frames without a manifest (from frames.csv)
    assert [f.frame_id for f in planned(data, 3, 4).split_frames("test")] == test


def test_max_shards_defaults_to_100_and_may_be_null():
    config = {"benchmarks": {"painting-vision": {"data": "data", "models": ["best"]}},
              "models": {"best": {"kind": "checkpoint", "path": "artifacts/best.pt", "label_space": "painting-vision-10"}}}
    assert Plan(check_config(dict(config), "config.yaml")).benchmarks["painting-vision"].max_shards == 100
    assert Plan(check_config(dict(config, max_shards=None), "config.yaml")).benchmarks["painting-vision"].max_shards is None


def test_dataset_files_are_the_index_then_each_frame(data: Path):
    files = planned(data, 8, 100).dataset_files()
    assert files[0] == str(data / "frames.csv")
    assert len(files) == 1 + 2 * 30
    assert all(Path(f).is_file() for f in files)
    assert sorted(files[1::2]) == sorted(str(p) for p in (data / "images").iterdir())


def test_a_manifest_is_checked_once_per_content(data: Path, tmp_path: Path, monkeypatch):
    benchmark = load_benchmark("painting-vision")
    manifest = tmp_path / "manifest.json"
    provenance.write_manifest(manifest, provenance.build_manifest(data, read_dataset(benchmark, data)))
    checked = tmp_path / "checked"
    calls = []
    real = provenance.check_manifest
    monkeypatch.setattr(provenance, "check_manifest", lambda *a, **k: calls.append(a[1]) or real(*a, **k))

    def plan() -> BenchmarkPlan:
        return BenchmarkPlan("painting-vision", str(data), str(manifest), ("test",), ("best",), 8, 100, checked)

    first = [f.frame_id for f in plan().split_frames("test")]
    assert len(calls) == 1 and len(list(checked.iterdir())) == 1
    assert [f.frame_id for f in plan().split_frames("test")] == first and len(calls) == 1  # the same bytes: not again
    # one frame's label hash edited: other bytes, checked again, and refused (its dataset_id no longer matches)
    text = manifest.read_text()
    sha = provenance.read_manifest(manifest)["frames"][0]["label"]["sha256"]
    manifest.write_text(text.replace(sha, sha[::-1], 1))
    with pytest.raises(SegbenchError, match="its own frame list hashes to"):
        plan().split_frames("test")
    assert len(list(checked.iterdir())) == 1
    # without a folder for the marks, every plan checks
    calls.clear()
    manifest.write_text(text)
    for _ in range(2):
        BenchmarkPlan("painting-vision", str(data), str(manifest), ("test",), ("best",), 8, 100).split_frames("test")
    assert len(calls) == 2


def test_a_read_only_folder_for_the_marks_only_means_checking_again(data: Path, tmp_path: Path):
    benchmark = load_benchmark("painting-vision")
    manifest = tmp_path / "manifest.json"
    provenance.write_manifest(manifest, provenance.build_manifest(data, read_dataset(benchmark, data)))
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the folder would go: mkdir fails as on a read-only filesystem
    plan = BenchmarkPlan("painting-vision", str(data), str(manifest), ("test",), ("best",), 8, 100, blocked / "checked")
    assert len(plan.split_frames("test")) == 20
