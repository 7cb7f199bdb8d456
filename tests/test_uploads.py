"""`segbench export` writes the official upload; `segbench check-submission` accepts it without
labels (refusals are cases of tests/test_bad_inputs.py)."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from ep_fixtures import FACE
from PIL import Image
from pv_fixtures import ALL_CLASSES

from segbench.commands import cli
from segbench.core.model_spec import ModelSpec
from segbench.datasets import read_dataset
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, write_manifest
from segbench.stages.audit import audit_dataset
from segbench.stages.uploads import manifest_frames
from segbench.steps.frames import frames_of_split
from segbench.steps.inference import infer
from segbench.workflow.config import load_config

ROOT = Path(__file__).resolve().parents[1]

PV = load_benchmark("painting-vision")
IDD = load_benchmark("idd20k-icvgip2020")


def test_painting_vision_upload_round_trip(tmp_path, pv_data, capsys):
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest, build_manifest(pv_data, read_dataset(PV, pv_data)))
    preds = tmp_path / "preds"
    preds.mkdir()
    for frame_id in ("d1", "e1"):
        shutil.copyfile(pv_data / "labels" / f"{frame_id}.png", preds / f"{frame_id}.png")
    upload = tmp_path / "upload.zip"
    assert cli.main(["export", "--dataset-manifest", str(manifest), "--predictions", str(preds), "--out", str(upload)]) == 0
    with zipfile.ZipFile(upload) as archive:
        assert sorted(archive.namelist()) == ["d1.png", "dataset_id.txt", "e1.png"]
        assert archive.read("dataset_id.txt").decode() == json.loads(manifest.read_text())["dataset_id"] + "\n"
        assert archive.read("d1.png") == (preds / "d1.png").read_bytes()  # masks at the image's size, unchanged
    assert cli.main(["check-submission", str(upload), "--dataset-manifest", str(manifest), "--data", str(pv_data)]) == 0
    assert "accepted: 2 frames" in capsys.readouterr().out


def idd_upload_members(tmp_path: Path, size: tuple[int, int]) -> tuple[Path, list[str]]:
    """Masks for the embedded IDD test split at `size`, named by the challenge's rule."""
    from segbench.datasets.idd import prediction_name

    manifest = Path(__file__).resolve().parents[1] / "data-idd_manifest.json"
    names = [prediction_name(e["frame_id"]) for e in json.loads(manifest.read_text())["frames"] if e["split"] == "test"]
    preds = tmp_path / "preds"
    mask = np.zeros((size[1], size[0]), np.uint8)
    mask[:, : size[0] // 2] = 7
    for name in names:
        (preds / name).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(mask).save(preds / name)
    return manifest, names


def test_idd_upload_is_resized_to_1280x720_in_the_drive_folders(tmp_path, capsys):
    manifest, names = idd_upload_members(tmp_path, (1920, 1080))
    upload = tmp_path / "upload.zip"
    assert cli.main(["export", "--benchmark", IDD.name, "--dataset-manifest", str(manifest),
                     "--predictions", str(tmp_path / "preds"), "--out", str(upload)]) == 0
    with zipfile.ZipFile(upload) as archive:
        assert sorted(archive.namelist()) == sorted(names)  # masks only: the server takes no dataset_id
        mask = np.asarray(Image.open(io.BytesIO(archive.read(names[0]))))
    assert mask.shape == (720, 1280) and mask[:, :640].max() == 7 and mask[:, 640:].max() == 0
    assert cli.main(["check-submission", str(upload), "--benchmark", IDD.name, "--dataset-manifest", str(manifest)]) == 0


def test_idd_upload_at_another_size_is_refused(tmp_path, capsys):
    manifest, names = idd_upload_members(tmp_path, (640, 360))
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for name in names:
            archive.write(tmp_path / "preds" / name, name)
    assert cli.main(["check-submission", str(upload), "--benchmark", IDD.name, "--dataset-manifest", str(manifest)]) == 1
    assert f"{names[0]}: prediction is 640x360; the benchmark's uploads are 1280x720" in capsys.readouterr().err


@pytest.mark.parametrize("name, model, given_as", [
    ("painting-vision", "best", ["--checkpoint", "artifacts/best.pt"]),  # as benchmark.py takes it
    ("idd20k-icvgip2020", "idd-best", ["--model", "idd-best"]),  # a config entry
    ("easyportrait", "easyportrait-best", ["--model", "easyportrait-best"]),
])
def test_export_runs_an_embedded_model_on_the_split(name, model, given_as, tmp_path, monkeypatch, capsys):
    """The model run by `export` itself: the masks `segbench infer` makes, in the upload format
    (IDD resized to 1280x720 by nearest neighbour), and check-submission accepts the upload."""
    monkeypatch.chdir(ROOT)
    benchmark = load_benchmark(name)
    setting = load_config(Path("config/config.yaml"))["benchmarks"][name]
    upload = tmp_path / "out" / "upload.zip"
    assert cli.main(["export", "--benchmark", name, "--dataset-manifest", setting["manifest"], "--split", "test",
                     "--data", setting["data"], *given_as, "--device", "cpu", "--out", str(upload)]) == 0, \
        capsys.readouterr().err
    assert [p.name for p in upload.parent.iterdir()] == ["upload.zip"]  # the masks' folder is gone
    direct = tmp_path / "direct"
    spec = ModelSpec.from_config(load_config(Path("config/config.yaml")), model)
    infer(benchmark, frames_of_split(benchmark, Path(setting["data"]), "test"), spec, direct, 2, "cpu", progress=False)
    frames, dataset_id = manifest_frames(benchmark, Path(setting["manifest"]), "test")
    size = benchmark.evaluation_size
    with zipfile.ZipFile(upload) as archive:
        assert sorted(archive.namelist()) == sorted([f.prediction for f in frames] + ([] if size else ["dataset_id.txt"]))
        for frame in frames:
            made = Image.open(direct / frame.prediction)
            expected = np.asarray(made.resize(size, Image.Resampling.NEAREST) if size else made)
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(archive.read(frame.prediction)))), expected)
        if not size:
            assert archive.read("dataset_id.txt").decode() == dataset_id + "\n"
    assert cli.main(["check-submission", str(upload), "--benchmark", name, "--dataset-manifest", setting["manifest"],
                     "--split", "test", "--label-space", spec.label_space, "--data", setting["data"]]) == 0
    assert f"accepted: {len(frames)} frames of {dataset_id}" in capsys.readouterr().out


UNLABELLED_CASES = [  # benchmark, its hand-made fixture, the embedded checkpoint, the fixture's test frames
    ("painting-vision", "pv_data", "artifacts/best.pt", ["d1", "e1"]),
    ("easyportrait", "ep_data", "artifacts/easyportrait-best.pt", ["c1", "d1"]),
]
FIXTURE_SIZES = {"painting-vision": ALL_CLASSES.shape, "easyportrait": FACE.shape}  # (height, width) of their images


def without_labels(request, fixture: str, name: str, split: str, keep: int = 0) -> tuple[Path, list]:
    """The fixture dataset with the labels of `split` removed but the first `keep`; its frames as they were."""
    data = request.getfixturevalue(fixture)
    frames = read_dataset(load_benchmark(name), data)
    for frame in [f for f in frames if f.split == split][keep:]:
        frame.label.unlink()
    return data, frames


@pytest.mark.parametrize("name, fixture, checkpoint, test_frames", UNLABELLED_CASES)
def test_a_test_split_without_labels_is_exported(name, fixture, checkpoint, test_frames, request, tmp_path, capsys):
    """A copy whose test split ships without labels: its frames are unlabelled (the others not),
    the manifest records no label hash for them, `export` runs the model on them and writes the
    masks `segbench infer` makes with the dataset_id, and check-submission accepts the upload."""
    benchmark = load_benchmark(name)
    data, before = without_labels(request, fixture, name, "test")
    frames = read_dataset(benchmark, data)
    assert [(f.frame_id, f.labelled) for f in frames] == [(f.frame_id, f.split != "test") for f in before]
    assert [f.frame_id for f in frames if f.split == "test"] == test_frames
    manifest = tmp_path / "manifest.json"
    assert cli.main(["manifest", "--benchmark", name, "--data", str(data), "--out", str(manifest)]) == 0
    entries = json.loads(manifest.read_text())["frames"]
    assert [e["frame_id"] for e in entries if e["label"]["sha256"] is None] == test_frames
    assert all(len(e["image"]["sha256"]) == 64 for e in entries)
    upload = tmp_path / "out" / "upload.zip"
    assert cli.main(["export", "--benchmark", name, "--dataset-manifest", str(manifest), "--split", "test",
                     "--data", str(data), "--checkpoint", str(ROOT / checkpoint), "--device", "cpu",
                     "--out", str(upload)]) == 0, capsys.readouterr().err
    direct = tmp_path / "direct"
    infer(benchmark, [f for f in frames if f.split == "test"], ModelSpec("m", "checkpoint", ROOT / checkpoint, None),
          direct, 1, "cpu", progress=False)
    dataset_id = json.loads(manifest.read_text())["dataset_id"]
    with zipfile.ZipFile(upload) as archive:
        assert sorted(archive.namelist()) == sorted(["dataset_id.txt", *[f"{f}.png" for f in test_frames]])
        assert archive.read("dataset_id.txt").decode() == dataset_id + "\n"
        for frame_id in test_frames:
            sent = np.asarray(Image.open(io.BytesIO(archive.read(f"{frame_id}.png"))))
            made = np.asarray(Image.open(direct / f"{frame_id}.png"))
            assert sent.shape == made.shape == FIXTURE_SIZES[name]  # at the image's size: there is no label
            assert np.array_equal(sent, made)
    capsys.readouterr()
    assert cli.main(["check-submission", str(upload), "--benchmark", name, "--dataset-manifest", str(manifest),
                     "--split", "test"]) == 0
    assert f"accepted: 2 frames of {dataset_id}" in capsys.readouterr().out


@pytest.mark.parametrize("name, fixture, checkpoint, test_frames", UNLABELLED_CASES)
def test_a_half_labelled_split_is_refused_naming_the_frames(name, fixture, checkpoint, test_frames, request, tmp_path,
                                                            capsys):
    data, before = without_labels(request, fixture, name, "test", keep=1)
    assert all(f.labelled for f in read_dataset(load_benchmark(name), data))  # one label left: labelled, one missing
    missing = [f for f in before if f.frame_id == test_frames[1]][0].label
    assert cli.main(["manifest", "--benchmark", name, "--data", str(data), "--out", str(tmp_path / "m.json")]) == 1
    assert capsys.readouterr().err == (f"segbench: error: cannot build the data manifest of {data}: 1 file(s) missing:\n"
                                       f"  {missing} (frame '{test_frames[1]}')\n")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("name, fixture, checkpoint, test_frames", UNLABELLED_CASES)
def test_scoring_or_auditing_the_unlabelled_split_is_refused_naming_it(name, fixture, checkpoint, test_frames, request,
                                                                        tmp_path, capsys):
    data, _ = without_labels(request, fixture, name, "test")
    counts = tmp_path / "floor.parquet"
    assert cli.main(["score", "--benchmark", name, "--data", str(data), "--split", "test", "--floor",
                     "--out", str(counts)]) == 1
    assert capsys.readouterr().err == (
        f"segbench: error: split 'test' has no labels (2 frame(s), e.g. '{test_frames[0]}', no {test_frames[0]}.png): "
        "its frames can be inferred and exported, not used for scoring\n"
    )
    assert not counts.exists()
    report = audit_dataset(data, load_benchmark(name), ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("unlabelled-split", "the evaluated split 'test' has no labels: its frames can be inferred and exported, "
                             "not evaluated")
    ]
    assert audit_dataset(data, load_benchmark(name), ["val"]).ok  # the labelled splits are audited as before


def test_void_warnings_name_the_frame_the_count_and_the_space_s_void_values():
    from segbench.stages.uploads import void_warnings

    assert void_warnings(PV.ground_truth, {"d1": 1234, "e1": 0}) == [
        "frame d1: 1,234 pixels predicted as void (255) in 'painting-vision-10', counted as misses"]
    assert void_warnings(IDD.space("idd-level3"), {"d/a": 3}) == [
        "frame d/a: 3 pixels predicted as void (26-255) in 'idd-level3', counted as misses"]
    assert void_warnings(IDD.space("idd-level3-misc"), {"d/a": 0}) == []  # misc (>= 26) is a class there
