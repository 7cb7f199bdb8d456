"""The jobs' content keys (segbench.workflow.keys) and the kept digests they come from
(segbench.workflow.digests): exactly the bytes a result depends on, never where they lie."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from pv_fixtures import ALL_CLASSES, make_dataset, write_png
from segbench.core.model_spec import shard_of
from segbench.errors import SegbenchError
from segbench.records import provenance
from segbench.workflow import digests as digests_module
from segbench.workflow.digests import DigestCache
from segbench.workflow.keys import ContentKeys, content_key, marker, model_settings, settle, slot, slot_records
from segbench.workflow.paths import ResultPaths
from segbench.workflow.plan import Plan

BENCHMARK = "painting-vision"
SHARDS = 2  # 8 test frames, shard_size 4
TEST = [f"w{w}_f{f}" for w in range(2) for f in range(4)]
MODEL = {"kind": "checkpoint", "path": "models/best.pt", "role": "baseline", "label_space": "painting-vision-10"}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A work folder holding a dataset (8 test frames, 4 train), its manifest and a checkpoint file."""
    frames = [(f"w{w}_f{f}", f"w{w}", "test" if w < 2 else "train", ALL_CLASSES) for w in range(3) for f in range(4)]
    make_dataset(tmp_path, frames)
    repin(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "best.pt").write_bytes(b"weights")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def repin(work: Path, data: str = "data", manifest: str = "data_manifest.json") -> None:
    with contextlib.chdir(work):
        from segbench.steps.dataset_identity import dataset_manifest
        from segbench.protocols.definitions import load_benchmark

        provenance.write_manifest(Path(manifest), dataset_manifest(load_benchmark(BENCHMARK), Path(data), None))


def keys(data: str = "data", manifest: str = "data_manifest.json", model: dict | None = None,
         store: Path | None = None) -> ContentKeys:
    model = model or MODEL
    config = {"benchmarks": {BENCHMARK: {"data": data, "manifest": manifest, "splits": ["test"], "models": ["best"]}},
              "models": {"best": model}, "shard_size": 4, "max_shards": 100}
    return ContentKeys(Plan(config), config["models"], {"batch_size": 4, "device": "auto", "gpu": 0},
                       DigestCache(store))


def every_key(k: ContentKeys) -> dict[str, str]:
    found = {"dataset": k.dataset(BENCHMARK).key, "model": k.model("best")}
    for s in range(SHARDS):
        found[f"infer-{s}"] = k.inference(BENCHMARK, "test", "best", s)
        found[f"score-{s}"] = k.scoring(BENCHMARK, "test", "best", s)
        found[f"floor-{s}"] = k.scoring(BENCHMARK, "test", None, s)
    return found


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before if before[k] != after[k])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_content_key_is_a_digest_of_the_canonical_json():
    document = {"b": [1, "x"], "a": None}
    expected = hashlib.sha256(b'{"a":null,"b":[1,"x"]}').hexdigest()[:32]
    assert content_key(document) == content_key({"a": None, "b": [1, "x"]}) == expected


def test_model_settings_leave_out_where_the_model_lies_and_its_role():
    assert model_settings(MODEL) == {"kind": "checkpoint", "label_space": "painting-vision-10"}


def test_the_keys_are_the_documents_of_their_shard(work: Path):
    k = keys()
    label = sha(work / "data" / "labels" / "w0_f0.png")
    members = sorted(i for i in TEST if shard_of(i, SHARDS) == 1)
    assert 0 < len(members) < len(TEST)
    model = content_key({"settings": model_settings(MODEL), "files": {"": sha(work / "models" / "best.pt")}})
    assert k.model("best") == model
    images = {i: sha(work / "data" / "images" / f"{i}.png") for i in members}
    assert k.inference(BENCHMARK, "test", "best", 1) == content_key({
        "model": model, "batch_size": 4, "device": "auto",
        "frames": [[i, images[i], [ALL_CLASSES.shape[1], ALL_CLASSES.shape[0]]] for i in members]})
    # every label is the same array: one SHA-256
    assert k.scoring(BENCHMARK, "test", "best", 1) == content_key({"frames": [[i, label] for i in members], "model": model})
    assert k.scoring(BENCHMARK, "test", None, 1) == content_key({"frames": [[i, label] for i in members]})
    manifest = json.loads((work / "data_manifest.json").read_text())
    assert k.dataset(BENCHMARK).dataset_id == manifest["dataset_id"]


def test_a_job_finds_its_key_and_slot_from_its_wildcards(work: Path):
    k = keys()
    shard = {"benchmark": BENCHMARK, "split": "test", "shard": "1"}
    model = {**shard, "model": "best"}
    assert k.of("dataset", {"benchmark": BENCHMARK}) == k.dataset(BENCHMARK).key
    assert k.of("model", {"benchmark": BENCHMARK, "model": "best"}) == k.model("best")
    assert k.of("infer", model) == k.inference(BENCHMARK, "test", "best", 1)
    assert k.of("score", model) == k.scoring(BENCHMARK, "test", "best", 1)
    assert k.of("score", shard) == k.of("score", {**shard, "model": "floor"}) == k.scoring(BENCHMARK, "test", None, 1)
    assert slot("dataset", {"benchmark": BENCHMARK}) == "painting-vision/dataset"
    assert slot("model", {"benchmark": BENCHMARK, "model": "best"}) == "painting-vision/models/best"
    assert slot("infer", model) == "painting-vision/test/best/infer-shard-1"
    assert slot("score", shard) == "painting-vision/test/floor/score-shard-1"


def test_a_shard_marker_waits_for_the_records_its_key_is_decided_after():
    paths = ResultPaths("out")
    assert slot_records("painting-vision/test/best/infer-shard-1", paths) == [
        "out/painting-vision/frames.json", "out/painting-vision/models/best/identity.json"]
    assert slot_records("painting-vision/test/floor/score-shard-0", paths) == ["out/painting-vision/frames.json"]
    assert slot_records("painting-vision/dataset", paths) == []
    assert slot_records("painting-vision/models/best", paths) == []


def test_the_same_bytes_anywhere_have_the_same_keys(work: Path):
    before = every_key(keys())
    for path in (work / "data" / "labels" / "w0_f1.png", work / "data" / "images" / "w1_f2.png", work / "models" / "best.pt"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))  # touched
    assert every_key(keys()) == before
    shutil.copytree(work / "data", work / "elsewhere" / "copy")  # a renamed copy, its manifest beside it
    shutil.copy(work / "data_manifest.json", work / "elsewhere" / "manifest.json")
    shutil.copy(work / "models" / "best.pt", work / "elsewhere" / "best.pt")
    moved = dict(MODEL, path="elsewhere/best.pt", role="model")
    assert every_key(keys("elsewhere/copy", "elsewhere/manifest.json", moved)) == before
    os.symlink(work / "data", work / "linked")
    assert every_key(keys("linked")) == before


def test_a_changed_byte_not_pinned_by_the_manifest_is_refused_naming_the_file(work: Path):
    label = work / "data" / "labels" / "w0_f1.png"
    changed_label = ALL_CLASSES.copy()
    changed_label[0, 0] = 9
    write_png(label, changed_label)
    with pytest.raises(SegbenchError) as refused:
        keys().dataset(BENCHMARK)
    assert "labels/w0_f1.png: bytes changed (frame 'w0_f1'" in str(refused.value)
    assert "does not match the data manifest data_manifest.json" in str(refused.value)


def test_each_change_changes_the_keys_of_what_it_affects_only(work: Path):
    before = every_key(keys())
    shard = shard_of("w0_f1", SHARDS)
    changed_label = ALL_CLASSES.copy()
    changed_label[0, 0] = 9
    write_png(work / "data" / "labels" / "w0_f1.png", changed_label)
    repin(work)
    labelled = every_key(keys())
    assert changed(before, labelled) == sorted(["dataset", f"score-{shard}", f"floor-{shard}"])
    write_png(work / "data" / "images" / "w0_f1.png", np.zeros((*ALL_CLASSES.shape, 3), np.uint8))
    repin(work)
    imaged = every_key(keys())
    assert changed(labelled, imaged) == ["dataset", f"infer-{shard}"]
    (work / "models" / "best.pt").write_bytes(b"other weights")
    weighed = every_key(keys())
    assert changed(imaged, weighed) == sorted(["model"] + [f"{s}-{n}" for s in ("infer", "score") for n in range(SHARDS)])
    batched = keys()
    batched.inference_settings["batch_size"] = 8
    assert changed(weighed, every_key(batched)) == [f"infer-{n}" for n in range(SHARDS)]


def test_a_folder_model_is_every_file_under_it(work: Path):
    folder = work / "models" / "hf"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "sub" / "w.bin").write_bytes(b"w")
    model = dict(MODEL, kind="hf", path="models/hf")
    assert keys(model=model).model("best") == content_key({
        "settings": model_settings(model), "files": {"config.json": sha(folder / "config.json"),
                                                     "sub/w.bin": sha(folder / "sub" / "w.bin")}})
    before = keys(model=model).model("best")
    (folder / "sub" / "w.bin").write_bytes(b"v")
    assert keys(model=model).model("best") != before


def test_digests_are_kept_between_starts_by_file_identity(work: Path, monkeypatch: pytest.MonkeyPatch):
    hashed = []
    real = digests_module.sha256_file
    monkeypatch.setattr(digests_module, "sha256_file", lambda p: hashed.append(Path(p).name) or real(p))
    store = work / ".snakemake" / "digests.json"
    file = work / "models" / "best.pt"
    first = DigestCache(store)
    assert first.sha256(str(file)) == sha(file) and hashed == ["best.pt"]
    first.save()
    assert DigestCache(store).sha256(str(file)) == sha(file) and hashed == ["best.pt"]  # read from the store
    file.rename(work / "moved.pt")  # the same inode: its digest stays
    assert DigestCache(store).sha256(str(work / "moved.pt")) == sha(work / "moved.pt") and hashed == ["best.pt"]
    os.utime(work / "moved.pt", ns=(0, 1_000_000))  # touched: hashed again
    assert DigestCache(store).sha256(str(work / "moved.pt")) == sha(work / "moved.pt")
    assert hashed == ["best.pt", "moved.pt"]
    store.write_text("not json")  # an unreadable store: every file is hashed again
    assert DigestCache(store).sha256(str(work / "moved.pt")) == sha(work / "moved.pt") and len(hashed) == 3
    with pytest.raises(SegbenchError, match="missing.pt"):
        DigestCache(None).sha256(str(work / "missing.pt"))


def test_settle_keeps_one_marker_per_slot_and_forgets_the_others(tmp_path: Path):
    old, new = tmp_path / marker("pv/test/best/infer-shard-0", "a" * 32), tmp_path / marker("pv/test/best/infer-shard-0", "b" * 32)
    other_slot = tmp_path / marker("pv/test/best/infer-shard-1", "a" * 32)
    for path in (old, other_slot):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    forgotten: list[str] = []
    log = tmp_path / "logs" / "content_key.log"
    assert settle(str(new), str(log), forgotten.append) == [str(old)]
    assert new.is_file() and not old.exists() and other_slot.is_file()
    assert forgotten == [str(old)] and log.read_text() == f"replaced {old}\n"
    assert settle(str(new), str(log), forgotten.append) == []
    assert forgotten == [str(old)] and log.read_text() == ""
