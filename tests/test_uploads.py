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
from PIL import Image

from segbench.commands import cli
from segbench.core.model_spec import ModelSpec
from segbench.datasets import read_dataset
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, write_manifest
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
