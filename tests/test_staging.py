"""The two ways the workflow runs (segbench.workflow.staging): on a shared filesystem, or with
every input staged by a storage provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pv_fixtures import ALL_CLASSES, make_dataset
from segbench.workflow.plan import BenchmarkPlan
from segbench.workflow.staging import SharedFilesystem, StagedStorage, dataset_files, staging_mode


@pytest.fixture
def bench(tmp_path: Path) -> BenchmarkPlan:
    frames = [(f"w{w}_f{f}", f"w{w}", "test" if w < 2 else "train", ALL_CLASSES) for w in range(3) for f in range(3)]
    return BenchmarkPlan("painting-vision", str(make_dataset(tmp_path / "set", frames)), None, ("test",), ("best",), 4, 100)


def test_the_mode_is_staged_exactly_when_there_is_a_default_storage_provider():
    assert isinstance(staging_mode(None), SharedFilesystem)
    assert isinstance(staging_mode("s3"), StagedStorage)


def test_the_dataset_files_of_each_scope(bench: BenchmarkPlan):
    data = bench.data
    assert dataset_files(bench, "all") == bench.dataset_files()
    test = sorted(f"w{w}_f{f}" for w in range(2) for f in range(3))
    images, labels = [f"{data}/images/{i}.png" for i in test], [f"{data}/labels/{i}.png" for i in test]
    split = dataset_files(bench, "split", "test")
    assert sorted(split[:6]) == images and sorted(split[6:]) == labels
    shard = [f.frame_id for f in bench.shard_frames("test", 1)]
    assert 0 < len(shard) < 6  # 6 test frames, shard_size 4: 2 shards
    assert dataset_files(bench, "shard-labels", "test", "1") == [f"{data}/labels/{i}.png" for i in shard]
    assert dataset_files(bench, "shard", "test", 1) == [f"{data}/images/{i}.png" for i in shard] + \
        [f"{data}/labels/{i}.png" for i in shard]


def test_on_a_shared_filesystem_jobs_list_no_dataset_or_model_file(bench: BenchmarkPlan, tmp_path: Path):
    mode = SharedFilesystem()
    assert mode.keyed and mode.restores_pins()
    assert mode.listed_dataset(bench, "all") == [] and mode.listed_dataset(bench, "shard", "test", 0) == []
    (tmp_path / "model").mkdir()
    (tmp_path / "model.dvc").write_text("outs: []\n")
    assert mode.listed_model(str(tmp_path / "model")) == [] and mode.listed_manifest("m.json") == []
    entry = {"kind": "checkpoint", "path": "artifacts/best.pt"}
    assert json.loads(mode.model_spec("best", entry, ["ignored"])) == {"name": "best", **entry}


def test_staged_jobs_list_every_file_and_name_their_local_copies(bench: BenchmarkPlan, tmp_path: Path):
    mode = StagedStorage()
    assert not mode.keyed and not mode.restores_pins()
    assert mode.listed_dataset(bench, "shard-labels", "test", 0) == dataset_files(bench, "shard-labels", "test", 0)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "a.bin").write_text("")
    (tmp_path / "model.dvc").write_text("outs: []\n")
    folder = str(tmp_path / "model")
    assert mode.listed_model(folder) == [folder, f"{folder}.dvc"]  # a folder is one storage object
    assert mode.listed_manifest("m.json") == ["m.json"] and mode.listed_manifest(None) == []
    spec = json.loads(mode.model_spec("best", {"kind": "checkpoint", "path": "artifacts/best.pt"}, [".local/best.pt"]))
    assert spec == {"name": "best", "kind": "checkpoint", "path": ".local/best.pt"}
