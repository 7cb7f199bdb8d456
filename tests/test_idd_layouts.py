"""IDD20K read as it ships, and as users commonly unpack it.

Layouts tested (the challenge page: both parts extracted into one folder; the reference's
gtFine/<split>/<drive>/*_gtFine_polygons.json and leftImg8bit/<split>/<drive>/*):

    both parts merged   Part I drives with .png frames, Part II drives with .jpg frames; the two archives
                        themselves (one top folder each) extracted with their top folder stripped
    gtFine alone        no leftImg8bit/: audited and scored from the ground truth (the one-shot command,
                        `segbench score` and `segbench metrics` with a predictions folder), not inferred
    unlabelled test     leftImg8bit/test without gtFine/test: frames without labels, inferred, never scored
    an extra top folder from unpacking (IDD_Segmentation/: accepted), two of them (refused)
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
import torch
from PIL import Image
from idd_fixtures import scene, write_image, write_polygons

from segbench.commands import cli
from segbench.commands.oneshot import main
from segbench.core.model_spec import ModelSpec
from segbench.datasets import dataset_format, dataset_layout, read_dataset, require_labels, select_split
from segbench.errors import SegbenchError
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_benchmark
from segbench.protocols.idd.masks import RECORD, write_masks
from segbench.records.frameindex import index_frames, read_index
from segbench.records.provenance import build_manifest, read_manifest, verify_manifest, write_manifest
from segbench.stages.audit import audit_dataset
from segbench.stages.inference_geometry import frame_geometry
from segbench.steps.dataset_identity import dataset_manifest, write_identity
from segbench.steps.inference import infer
from segbench.synthetic.training import IMAGENET

# (split, drive, img_id, image extension): drives 1-3 as Part I (PNG), 201-202 as Part II (JPEG).
DOWNLOAD = (("train", "1", "000001", "png"), ("train", "201", "0000123", "jpg"), ("val", "2", "000002", "png"),
            ("val", "202", "0000456", "jpg"), ("test", "3", "000003", "png"))


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("idd20k-icvgip2020")


def make_download(root: Path, with_images: bool = True, test_labels: bool = True) -> Path:
    for index, (split, drive, img_id, ext) in enumerate(DOWNLOAD):
        if split != "test" or test_labels:
            write_polygons(root, split, drive, img_id, scene(index))
        if with_images:
            write_image(root, split, drive, img_id, ext=ext)
    write_masks(root)
    return root


def reencode(label: Path, mask: Path) -> None:
    """The label's pixels as a mask encoded otherwise (a mask that is its label byte for byte is refused)."""
    Image.open(label).save(mask, format="PNG", compress_level=0)


def listed(frames):
    return [(f.frame_id, f.split, f.labelled) for f in frames]


def test_both_parts_in_one_folder(tmp_path, benchmark):
    data = make_download(tmp_path / "idd")
    frames = read_dataset(benchmark, data)
    assert listed(frames) == [("1/000001", "train", True), ("2/000002", "val", True), ("201/0000123", "train", True),
                              ("202/0000456", "val", True), ("3/000003", "test", True)]
    assert frames[2].image == data / "leftImg8bit/train/201/0000123_leftImg8bit.jpg"
    assert frames[3].prediction == "202/0000456_gtFine_labellevel3Ids.png"
    assert dataset_layout(benchmark, data) == {}
    assert audit_dataset(data, benchmark, ["val"]).ok


def test_the_two_archives_extracted_as_the_docs_say(tmp_path, benchmark):
    """tar -xzf idd-segmentation.tar.gz -C IDD --strip-components=1, the same for idd-20k-II.tar.gz,
    then the masks drawn: each archive's one top folder stripped, the two parts merge."""
    parts = {"png": ("idd-segmentation.tar.gz", "IDD_Segmentation"), "jpg": ("idd-20k-II.tar.gz", "idd20kII")}
    for index, (split, drive, img_id, ext) in enumerate(DOWNLOAD):  # as shipped: polygons (no test ones), images
        top = tmp_path / "staging" / parts[ext][1]
        if split != "test":
            write_polygons(top, split, drive, img_id, scene(index))
        write_image(top, split, drive, img_id, ext=ext)
    data = tmp_path / "IDD"
    for archive_name, top in parts.values():
        with tarfile.open(tmp_path / archive_name, "w:gz") as archive:
            archive.add(tmp_path / "staging" / top, top)
        with tarfile.open(tmp_path / archive_name) as archive:
            members = [m for m in archive.getmembers() if "/" in m.name]
            assert all(m.name.startswith(f"{top}/") for m in members)
            for member in members:
                member.name = member.name.split("/", 1)[1]  # --strip-components=1
            archive.extractall(data, members, filter="data")
    write_masks(data)  # segbench idd-labels --data IDD
    frames = read_dataset(benchmark, data)
    assert listed(frames) == [("1/000001", "train", True), ("2/000002", "val", True), ("201/0000123", "train", True),
                              ("202/0000456", "val", True), ("3/000003", "test", False)]
    assert [f.meta for f in frames] == [{"part": "I"}, {"part": "I"}, {"part": "II"}, {"part": "II"}, {"part": "I"}]
    assert audit_dataset(data, benchmark, ["val"]).ok


def test_gtfine_alone_is_audited_and_identified_from_the_ground_truth(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", with_images=False)
    frames = read_dataset(benchmark, data)
    assert [f.frame_id for f in frames] == ["1/000001", "2/000002", "201/0000123", "202/0000456", "3/000003"]
    assert frames[1].image == data / "leftImg8bit/val/2/000002_leftImg8bit.png"  # where it would be; not there
    assert dataset_layout(benchmark, data) == {"images": "absent"}
    report = audit_dataset(data, benchmark, ["val"])
    assert report.ok, report.to_text()
    [absent] = [f for f in report.findings if f.code == "images-absent"]
    assert absent.severity == "warning" and absent.message == (
        "this copy has no images: audited from its labels alone; not checked without images: a missing, unreadable or "
        "second image; a label's size against its image's; identical or near-identical images across splits. Images "
        "are needed for inference only"
    )
    manifest = dataset_manifest(benchmark, data, None)
    assert manifest["layout"] == {"images": "absent"}
    assert {e["image"]["sha256"] for e in manifest["frames"]} == {None}
    assert all(len(e["label"]["sha256"]) == 64 for e in manifest["frames"])
    write_manifest(tmp_path / "m.json", manifest)
    assert dataset_manifest(benchmark, data, tmp_path / "m.json")["dataset_id"] == manifest["dataset_id"]


def test_gtfine_alone_still_checks_its_labels(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", with_images=False)
    (data / "gtFine/val/2/000002_gtFine_labellevel3Ids.png").unlink()
    report = audit_dataset(data, benchmark, ["val"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("missing-label", "frame '2/000002' (drive '2', split val): no label (gtFine/val/2/000002_gtFine_labellevel3Ids.png)")
    ]


def test_images_downloaded_later_change_the_identity(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", with_images=False)
    manifest = dataset_manifest(benchmark, data, None)
    write_manifest(tmp_path / "m.json", manifest)
    for split, drive, img_id, ext in DOWNLOAD:
        write_image(data, split, drive, img_id, ext=ext)
    with pytest.raises(SegbenchError) as exc:
        dataset_manifest(benchmark, data, tmp_path / "m.json")
    assert "layout images is None, the manifest says 'absent'" in str(exc.value)


def test_one_missing_image_is_still_an_error_when_the_others_are_there(tmp_path, benchmark):
    data = make_download(tmp_path / "idd")
    (data / "leftImg8bit/val/2/000002_leftImg8bit.png").unlink()
    with pytest.raises(SegbenchError, match=r"1 file\(s\) missing:\n  .*leftImg8bit/val/2/000002_leftImg8bit.png"):
        dataset_manifest(benchmark, data, None)
    assert [f.code for f in audit_dataset(data, benchmark, ["val"]).errors] == ["missing-image"]


def test_inference_of_frames_without_their_images_names_every_image(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", with_images=False)
    frames = select_split(read_dataset(benchmark, data), "val")
    spec = ModelSpec("m", "checkpoint", tmp_path / "never-read.pt", None, "model", None)
    with pytest.raises(SegbenchError) as exc:
        infer(benchmark, frames, spec, tmp_path / "out", 1, "cpu", progress=False)
    assert str(exc.value) == (
        "2 frame(s) have no image, and inference needs the images:\n"
        f"  frame 2/000002: {data / 'leftImg8bit/val/2/000002_leftImg8bit.png'}\n"
        f"  frame 202/0000456: {data / 'leftImg8bit/val/202/0000456_leftImg8bit.png'}"
    )
    assert not (tmp_path / "out").exists()


def test_scoring_a_predictions_folder_from_gtfine_alone(tmp_path, benchmark, capsys):
    """The user's whole path without images: masks drawn, predictions made elsewhere, the one-shot command."""
    data = make_download(tmp_path / "idd", with_images=False)
    predictions = tmp_path / "submission"
    for frame in select_split(read_dataset(benchmark, data), "val"):
        (predictions / frame.prediction).parent.mkdir(parents=True, exist_ok=True)
        reencode(frame.label, predictions / frame.prediction)  # a perfect submission
    record = tmp_path / "record.json"
    code = main(["--benchmark", "idd20k-icvgip2020", "--data", str(data), "--checkpoint", str(predictions),
                 "--checkpoint-kind", "predictions", "--label-space", "idd-level3-misc", "--split", "val",
                 "--work-dir", str(tmp_path / "work"), "--emit-submission", str(record)])
    out = capsys.readouterr()
    assert code == 0, out.err
    level3 = json.loads(record.read_text())["level3"]
    assert level3["mIoU_nan_skipping"] == 1.0  # every drawn class exact
    assert level3["mIoU"] is None  # most of the 26 classes are absent: the reference's NaN


def test_score_and_metrics_take_a_predictions_folder_from_gtfine_alone(tmp_path, benchmark):
    """`segbench score` / `segbench metrics` with --predictions and --label-space: no config, no images."""
    data = make_download(tmp_path / "idd", with_images=False)
    predictions = tmp_path / "preds"
    for frame in select_split(read_dataset(benchmark, data), "val"):
        (predictions / frame.prediction).parent.mkdir(parents=True, exist_ok=True)
        reencode(frame.label, predictions / frame.prediction)
    common = ["--benchmark", benchmark.name, "--predictions", str(predictions), "--label-space", "idd-level3-misc",
              "--data", str(data), "--split", "val"]
    assert cli.main(["metrics", *common, "--out", str(tmp_path / "direct.json")]) == 0
    assert cli.main(["score", *common, "--out", str(tmp_path / "counts.parquet")]) == 0
    assert cli.main(["metrics", "--benchmark", benchmark.name, "--counts", str(tmp_path / "counts.parquet"),
                     "--out", str(tmp_path / "via-counts.json")]) == 0
    direct, via = (json.loads((tmp_path / n).read_text()) for n in ("direct.json", "via-counts.json"))
    assert direct["results"] == via["results"] and direct["frames"] == via["frames"] == 2
    assert direct["model"] == "preds" and direct["kind"] == "predictions" and direct["split"] == "val"
    assert direct["results"]["level3"]["mIoU_nan_skipping"] == 1.0 and direct["results"]["level3"]["mIoU"] is None


def test_the_unlabelled_test_split(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", test_labels=False)
    frames = read_dataset(benchmark, data)
    [test] = select_split(frames, "test")
    assert (test.frame_id, test.group_id, test.labelled) == ("3/000003", "3", False)
    assert test.image == data / "leftImg8bit/test/3/000003_leftImg8bit.png"
    assert test.prediction == "3/000003_gtFine_labellevel3Ids.png"
    assert frame_geometry(test, benchmark.inference_size, 1).target == (12, 16)  # exported at the image's size
    # its images are audited with the others (drives across splits, duplicates); its labels are not looked for
    assert audit_dataset(data, benchmark, ["val"]).ok
    report = audit_dataset(data, benchmark, ["test"])
    assert [(f.code, f.message) for f in report.errors] == [
        ("unlabelled-split", "the evaluated split 'test' has no labels: its frames can be inferred and exported, "
                             "not evaluated")
    ]
    with pytest.raises(SegbenchError) as exc:
        require_labels([test], "scoring")
    assert str(exc.value) == ("split 'test' has no labels (1 frame(s), e.g. '3/000003', no "
                              "000003_gtFine_labellevel3Ids.png): its frames can be inferred and exported, not used for scoring")
    manifest = build_manifest(data, frames, "idd", "drive")
    [entry] = [e for e in manifest["frames"] if e["split"] == "test"]
    assert entry["label"]["sha256"] is None and len(entry["image"]["sha256"]) == 64
    write_manifest(tmp_path / "m.json", manifest)
    assert verify_manifest(read_manifest(tmp_path / "m.json", "idd", "drive"), data, frames, "idd", "drive") == (
        manifest["dataset_id"]
    )
    # the workflow's inputs: the polygons of the labelled frames only
    index = dataset_format("idd").index_files(data, [f.label for f in frames])
    assert [p.relative_to(data).as_posix() for p in index] == [
        "gtFine/train/1/000001_gtFine_polygons.json", "gtFine/val/2/000002_gtFine_polygons.json",
        "gtFine/train/201/0000123_gtFine_polygons.json", "gtFine/val/202/0000456_gtFine_polygons.json",
    ]


def test_the_unlabelled_test_split_is_inferred_and_exported(tmp_path, benchmark, capsys):
    data = make_download(tmp_path / "idd", test_labels=False)
    [test] = select_split(read_dataset(benchmark, data), "test")
    checkpoint = tmp_path / "model.pt"
    torch.manual_seed(0)
    save_checkpoint(checkpoint, build("tiny-segnet", {"widths": [4, 8, 8]}, 26), "tiny-segnet", {"widths": [4, 8, 8]},
                    benchmark.ground_truth, IMAGENET)
    out = tmp_path / "predictions"
    infer(benchmark, [test], ModelSpec("m", "checkpoint", checkpoint, None), out, 1, "cpu", progress=False)
    with Image.open(out / "3/000003_gtFine_labellevel3Ids.png") as mask:
        assert (mask.mode, mask.size) == ("L", (16, 12))  # at the image's size: there is no label
        expected = mask.resize((1280, 720), Image.Resampling.NEAREST).tobytes()
    manifest = tmp_path / "m.json"
    write_manifest(manifest, dataset_manifest(benchmark, data, None))
    upload = tmp_path / "upload" / "upload.zip"  # the model run by export itself, on the unlabelled split
    assert cli.main(["export", "--benchmark", benchmark.name, "--dataset-manifest", str(manifest), "--split", "test",
                     "--data", str(data), "--checkpoint", str(checkpoint), "--device", "cpu", "--out", str(upload)]) == 0
    with zipfile.ZipFile(upload) as archive, Image.open(io.BytesIO(archive.read(test.prediction))) as sent:
        assert archive.namelist() == [test.prediction]  # in its drive folder; masks only
        assert sent.size == (1280, 720) and sent.tobytes() == expected  # the challenge's upload size
    assert cli.main(["check-submission", str(upload), "--benchmark", benchmark.name, "--dataset-manifest",
                     str(manifest), "--split", "test"]) == 0
    assert "accepted: 1 frames" in capsys.readouterr().out


def test_the_workflows_frame_index_of_the_unlabelled_test_split(tmp_path, benchmark):
    """The workflow's dataset_identity job (`segbench manifest --verify ... --index-out`) on the public
    download: no label of the test split is read; the shard jobs get its frames as unlabelled."""
    data = make_download(tmp_path / "idd", test_labels=False)
    out = tmp_path / "out"
    write_identity(benchmark, data, None, out / "manifest.json", None, None)
    write_identity(benchmark, data, out / "manifest.json", None, None, out / "frames.json")
    index = read_index(out / "frames.json", benchmark.name)
    [test] = [e for e in index["frames"] if e["split"] == "test"]
    assert (test["frame_id"], test["labelled"], test["label_sha256"], test["label_size"]) == ("3/000003", False, None, None)
    assert {tuple(e["label_size"]) for e in index["frames"] if e["labelled"]} == {(16, 12)}
    assert index_frames(index, data) == read_dataset(benchmark, data)


def test_an_unlabelled_drive_may_not_also_be_a_labelled_one(tmp_path, benchmark):
    data = make_download(tmp_path / "idd", test_labels=False)
    write_image(data, "test", "2", "000002")  # the val frame's id again, in the unlabelled split
    with pytest.raises(SegbenchError, match=r"leftImg8bit/test/2/000002_leftImg8bit.png: frame 2/000002 is also "
                                            r".*gtFine/val/2/000002_gtFine_polygons.json: drive '2' is in splits 'val' and 'test'"):
        read_dataset(benchmark, data)


def test_an_extra_top_folder_from_unpacking(tmp_path, benchmark):
    data = tmp_path / "idd"
    make_download(data / "IDD_Segmentation")
    assert (data / "IDD_Segmentation" / RECORD).is_file()
    frames = read_dataset(benchmark, data)
    assert frames[0].label == data / "IDD_Segmentation/gtFine/train/1/000001_gtFine_labellevel3Ids.png"
    assert write_masks(data)["masks"].keys() == {  # drawn into the top folder, not beside it
        "train/1/000001_gtFine_labellevel3Ids.png", "train/201/0000123_gtFine_labellevel3Ids.png",
        "val/2/000002_gtFine_labellevel3Ids.png", "val/202/0000456_gtFine_labellevel3Ids.png",
        "test/3/000003_gtFine_labellevel3Ids.png"}
    report = audit_dataset(data, benchmark, ["val"])
    assert report.ok and "label-provenance" not in {f.code for f in report.findings}
    assert build_manifest(data, frames, "idd", "drive")["frames"][0]["image"]["path"] == (
        "IDD_Segmentation/leftImg8bit/train/1/000001_leftImg8bit.png"
    )


def test_the_two_parts_side_by_side_are_refused(tmp_path, benchmark):
    data = tmp_path / "idd"
    make_download(data / "IDD_Segmentation")
    make_download(data / "idd20kII")
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, data)
    assert str(exc.value) == (
        f"{data}: 2 folders hold gtFine or leftImg8bit (IDD_Segmentation, idd20kII); expected one dataset (gtFine/<split>/"
        "<drive>/<img_id>_gtFine_polygons.json and leftImg8bit/<split>/<drive>/<img_id>_leftImg8bit.* of both parts in "
        "one folder): point --data at one of them, or unpack the archives so that their folders merge"
    )
