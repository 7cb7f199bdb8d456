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
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.provenance import build_manifest, write_manifest
from segbench.stages.audit import audit_dataset
from segbench.stages.uploads import manifest_frames, png
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
    many = void_warnings(PV.ground_truth, {f"f{i:02d}": 1000 + i for i in range(25)})  # the first 20, then the rest
    assert many[:20] == [f"frame f{i:02d}: {1000 + i:,} pixels predicted as void (255) in 'painting-vision-10', "
                         "counted as misses" for i in range(20)]
    assert many[20:] == ["... and 5 more frames with pixels predicted as void (5,110 pixels)"]  # 1020 + ... + 1024


def zip_of(path: Path, members: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def header_only_png(width: int, height: int) -> bytes:
    """A PNG signature and IHDR claiming width x height (8-bit grey), and nothing to decode."""
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))


def test_every_problem_of_a_500_frame_upload_in_one_error_by_kind_with_counts(tmp_path):
    """One run names every problem: 470 frames missing, an extra file, a refused entry, the stated
    dataset, and each present mask's own (not a PNG, RGB, too large a side, damaged, values outside
    the space), each kind with its count and at most 20 lines, the rest counted; nothing accepted."""
    from segbench.datasets.base import Frame
    from segbench.io.limits import LIMITS
    from segbench.stages.uploads import check_upload

    frames = [Frame(f"f{i:03}", "g", "test", Path(f"images/f{i:03}.png"), Path(f"labels/f{i:03}.png"),
                    f"f{i:03}.png") for i in range(500)]
    good = png(np.zeros((4, 6), np.uint8))
    damaged = bytearray(good)
    damaged[-20] ^= 0xFF  # inside IDAT: its CRC fails
    members = {f"f{i:03}.png": good for i in range(470, 500)}
    for i in range(470, 473):
        members[f"f{i:03}.png"] = b"GIF89a not a png"
    for i in range(473, 475):
        members[f"f{i:03}.png"] = png(np.zeros((4, 6, 3), np.uint8))
    members["f475.png"] = header_only_png(LIMITS.max_mask_side + 1, 4)
    members["f476.png"] = bytes(damaged)
    members["f477.png"] = png(np.full((4, 6), 42, np.uint8))
    members.update({"notes.txt": b"hello", "sub/x.png": good, "dataset_id.txt": b"pv1:" + b"0" * 64 + b"\n"})
    upload = zip_of(tmp_path / "upload.zip", members)
    with pytest.raises(SegbenchError) as info:
        check_upload(PV, frames, "pv1:" + "1" * 64, upload, PV.ground_truth)
    missing = [f"    missing prediction for frame f{i:03}: {upload}/f{i:03}.png" for i in range(20)]
    assert str(info.value).split("\n") == [
        f"{upload}: upload refused: 481 problems:",
        "  refused entries (1):", f"    {upload}: sub/x.png: refused: in a nested folder",
        "  missing predictions (470):", *missing, "    ... and 450 more",
        "  extra files (1):", f"    extra file not matching any evaluated frame: {upload}/notes.txt",
        "  the dataset the upload was made for (dataset_id.txt) (1):",
        f"    {upload}: dataset_id.txt says pv1:{'0' * 64}, the manifest is pv1:{'1' * 64}",
        "  not PNG files (3):",
        *(f"    {upload}/f{i}.png: not a PNG file (no PNG signature and IHDR header)" for i in (470, 471, 472)),
        "  not 8-bit single-channel PNGs (2):",
        *(f"    {upload}/f{i}.png: prediction is a 6x4, 8-bit RGB PNG; a prediction must be an 8-bit single-channel "
          "PNG (greyscale, or palette read as its indices) holding class ids, not a colour rendering" for i in (473, 474)),
        "  masks of a size not accepted (1):",
        f"    {upload}/f475.png: prediction is {LIMITS.max_mask_side + 1}x4, more than {LIMITS.max_mask_side} on a side",
        "  damaged or undecodable PNGs (1):",
        f"    {upload}/f476.png: damaged PNG: the CRC of its IDAT chunk is wrong",
        "  masks with values outside the label space (1):",
        f"    {upload}/f477.png: frame f477: values [42] are outside 'painting-vision-10'",
    ]


def test_the_servers_intake_refuses_with_the_clis_message(tmp_path, pv_data, capsys):
    """The hosted intake (server.intake.check) and `segbench check-submission` say the same of
    the same bytes: every problem, the upload named upload.zip and the hidden data's folder hidden."""
    from segbench.server.hidden import open_hidden
    from segbench.server.intake import HIDDEN_DATA, check

    manifest = tmp_path / "manifest.json"
    write_manifest(manifest, build_manifest(pv_data, read_dataset(PV, pv_data)))
    dataset_id = json.loads(manifest.read_text())["dataset_id"]
    upload = zip_of(tmp_path / "team" / "mine.zip", {"d1.png": png(np.zeros((10, 10), np.uint8)), "x.png": b"x",
                                                     "dataset_id.txt": dataset_id.encode()})
    assert cli.main(["check-submission", str(upload), "--dataset-manifest", str(manifest), "--data", str(pv_data)]) == 1
    said = capsys.readouterr().err.removeprefix("segbench: error: ").rstrip("\n")
    assert said == "\n".join([
        f"{upload}: upload refused: 3 problems:",
        "  missing predictions (1):", f"    missing prediction for frame e1: {upload}/e1.png",
        "  extra files (1):", f"    extra file not matching any evaluated frame: {upload}/x.png",
        "  masks of a size not accepted (1):",
        f"    {upload}/d1.png: prediction is 10x10 but the ground truth is 20x16: not the same aspect ratio, so it "
        "cannot be resized to it"])
    with pytest.raises(SegbenchError) as info:
        check(open_hidden(PV.name, "test", pv_data, manifest), upload)
    assert str(info.value) == said.replace(str(upload), "upload.zip").replace(str(pv_data), HIDDEN_DATA)
    assert str(tmp_path) not in str(info.value)
