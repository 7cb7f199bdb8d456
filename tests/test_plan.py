"""The workflow's plan (segbench.plan): shard sizes within max_shards, the dataset fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pv_fixtures import ALL_CLASSES, make_dataset
from segbench import provenance
from segbench.config import check_config
from segbench.datasets import read_dataset
from segbench.definitions import load_benchmark
from segbench.plan import BenchmarkPlan, Plan


@pytest.fixture
def data(tmp_path: Path) -> Path:
    frames = [(f"w{w}_f{f}", f"w{w}", "test" if w < 4 else "train", ALL_CLASSES) for w in range(6) for f in range(5)]
    return make_dataset(tmp_path, frames)


def planned(data: Path, shard_size: int, max_shards: int | None, manifest: Path | None = None) -> BenchmarkPlan:
    return BenchmarkPlan("painting-vision", str(data), str(manifest) if manifest else None, ("test",), ("best",),
                         shard_size, max_shards)


@pytest.mark.parametrize(("frames", "shard_size", "max_shards", "size", "shards"), [
    (16, 8, 100, 8, 2),            # the embedded default: max_shards changes nothing
    (16, 8, None, 8, 2),
    (20000, 8, 100, 200, 100),     # a large split: shards grow so that there are max_shards of them
    (20001, 8, 100, 201, 100),
    (20000, 8, None, 8, 2500),
    (20000, 500, 100, 500, 40),    # shard_size stays a lower bound
    (1, 8, 100, 8, 1),
])
def test_shard_size_grows_to_keep_within_max_shards(monkeypatch, frames, shard_size, max_shards, size, shards):
    plan = planned(Path("data"), shard_size, max_shards)
    monkeypatch.setattr(BenchmarkPlan, "split_frames", lambda self, split: list(range(frames)))
    assert plan.split_shard_size("test") == size
    assert len(plan.shards("test")) == shards
    covered = [i for shard in plan.shards("test") for i in plan.shard_frames("test", shard)]
    assert covered == list(range(frames))  # every frame once, in order


def test_shards_partition_the_split_in_manifest_order(data: Path, tmp_path: Path):
    benchmark = load_benchmark("painting-vision")
    manifest = tmp_path / "manifest.json"
    provenance.write_manifest(manifest, provenance.build_manifest(data, read_dataset(benchmark, data)))
    plan = planned(data, 3, 4, manifest)
    test = [f.frame_id for f in plan.split_frames("test")]
    assert test == sorted(f"w{w}_f{f}" for w in range(4) for f in range(5))
    assert plan.split_shard_size("test") == 5 and plan.shards("test") == [0, 1, 2, 3]
    assert [f.frame_id for s in plan.shards("test") for f in plan.shard_frames("test", s)] == test
    # the same frames without a manifest (from frames.csv)
    assert [f.frame_id for f in planned(data, 3, 4).split_frames("test")] == test


def test_max_shards_defaults_to_100_and_may_be_null():
    config = {"benchmarks": {"painting-vision": {"data": "data", "models": ["best"]}},
              "models": {"best": {"kind": "checkpoint", "path": "artifacts/best.pt", "label_space": "painting-vision-10"}}}
    assert Plan(check_config(dict(config), "config.yaml")).benchmarks["painting-vision"].max_shards == 100
    assert Plan(check_config(dict(config, max_shards=None), "config.yaml")).benchmarks["painting-vision"].max_shards is None


def test_fingerprint_follows_every_file_of_the_dataset(data: Path):
    def fingerprint() -> str:
        return planned(data, 8, 100).dataset_fingerprint()

    before = fingerprint()
    assert fingerprint() == before  # nothing read changes it
    label = data / "labels" / "w1_f2.png"
    stat = label.stat()
    os.utime(label, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    touched = fingerprint()
    assert touched != before  # a rewritten file (new time)
    os.utime(label, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert fingerprint() == before
    (data / "images" / "w5_f0.png").unlink()  # a frame of another split too
    assert fingerprint() not in (before, touched)


def test_fingerprint_follows_the_frame_list(data: Path):
    before = planned(data, 8, 100).dataset_fingerprint()
    frames_csv = data / "frames.csv"
    frames_csv.write_text(frames_csv.read_text().replace("w5_f4,w5,train\n", ""))
    assert planned(data, 8, 100).dataset_fingerprint() != before


def test_dataset_files_are_the_index_then_each_frame(data: Path):
    files = planned(data, 8, 100).dataset_files()
    assert files[0] == str(data / "frames.csv")
    assert len(files) == 1 + 2 * 30
    assert all(Path(f).is_file() for f in files)
    assert sorted(files[1::2]) == sorted(str(p) for p in (data / "images").iterdir())
