"""The IDD reader and the audit on IDD data: frames from polygon files, drives as groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from idd_fixtures import box, write_image, write_polygons

from segbench.datasets import dataset_format, read_dataset
from segbench.datasets.base import Frame
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.protocols.idd.masks import RECORD, write_masks
from segbench.records.provenance import build_manifest, read_manifest, verify_manifest, write_manifest
from segbench.stages.audit import audit_dataset


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("idd20k-icvgip2020")


def codes(report):
    return [(f.code, f.severity) for f in report.findings]


def errors(report):
    return [(f.code, f.message) for f in report.errors]


def test_frames_are_polygon_files(idd_data, benchmark):
    frames = read_dataset(benchmark, idd_data)
    assert [f.frame_id for f in frames] == ["1/000001", "1/000002", "2/000003", "3/000004", "4/000005"]
    assert frames[2] == Frame(
        frame_id="2/000003",
        group_id="2",
        split="val",
        image=idd_data / "leftImg8bit/val/2/000003_leftImg8bit.png",
        label=idd_data / "gtFine/val/2/000003_gtFine_labellevel3Ids.png",
        prediction="2/000003_gtFine_labellevel3Ids.png",
        meta={"part": "I"},  # a PNG image: Part I
    )


def test_jpeg_images_of_part_two(tmp_path, benchmark):
    data = tmp_path / "idd"
    write_polygons(data, "test", "9", "000001", [box("road", 0, 0, 3, 3)])
    write_image(data, "test", "9", "000001", ext="jpg")
    [frame] = read_dataset(benchmark, data)
    assert frame.image == data / "leftImg8bit/test/9/000001_leftImg8bit.jpg"
    assert frame.meta == {"part": "II"}


def test_no_gtfine_is_an_error(tmp_path, benchmark):
    (tmp_path / "idd").mkdir()
    with pytest.raises(SegbenchError) as exc:
        read_dataset(benchmark, tmp_path / "idd")
    assert str(exc.value) == (
        f"{tmp_path / 'idd'}: no gtFine or leftImg8bit here or in a sub-folder; expected gtFine/<split>/<drive>/"
        "<img_id>_gtFine_polygons.json and leftImg8bit/<split>/<drive>/<img_id>_leftImg8bit.* of both parts in one folder"
    )
    write_image(tmp_path / "idd", "test", "1", "000001")  # images alone: nothing lists frames
    with pytest.raises(SegbenchError, match=r"idd/gtFine: not found \(an IDD dataset holds gtFine/\*/\*/\*_gtFine_polygons.json\)"):
        read_dataset(benchmark, tmp_path / "idd")


def test_same_frame_in_two_splits_is_an_error(idd_data, benchmark):
    write_polygons(idd_data, "test", "1", "000001", [box("road", 0, 0, 3, 3)])
    with pytest.raises(SegbenchError, match=r"frame 1/000001 is also .*: drive '1' is in splits 'train' and 'test'"):
        read_dataset(benchmark, idd_data)


def test_clean_dataset_passes_the_audit(idd_data, benchmark):
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert report.ok, report.to_text()
    assert report.counts == {"train": {"frames": 2, "drives": 1}, "val": {"frames": 1, "drives": 1},
                             "test": {"frames": 2, "drives": 2}}
    assert codes(report) == [("classes-absent", "warning")] * 3  # 4 of the 26 classes are drawn
    assert "Frames: train 2 (1 drives), val 1 (1 drives), test 2 (2 drives)" in report.to_text()


def test_drive_crossing_splits(idd_data, benchmark):
    write_polygons(idd_data, "test", "2", "000009", [box("road", 0, 0, 15, 11)])
    write_image(idd_data, "test", "2", "000009")
    write_masks(idd_data)
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert errors(report) == [
        ("group-crosses-splits", "drive '2' is in more than one split: test (2/000009); val (2/000003)")
    ]
    assert report.to_json()["findings"][0]["drives"] == ["2"]


def test_unlisted_files_in_annotated_splits(idd_data, benchmark):
    write_image(idd_data, "val", "2", "000777")  # an image without annotation
    write_image(idd_data, "val", "8", "000001")  # a drive without annotations
    (idd_data / "gtFine" / "val" / "2" / "notes.txt").write_text("x")
    (idd_data / "gtFine" / "val" / "2" / "000003_gtFine_labelColors.png").write_bytes(b"")  # the frame's own
    (idd_data / "gtFine" / "extra").mkdir()
    write_image(idd_data, "unlabelled", "5", "000001")  # a split with no gtFine/: ignored (like IDD's test)
    report = audit_dataset(idd_data, benchmark, ["test"])
    listing = "gtFine/*/*/*_gtFine_polygons.json"
    assert errors(report) == [
        ("unlisted-file", f"gtFine/extra: folder not listed in {listing}"),
        ("unlisted-file", f"gtFine/val/2/notes.txt: file not listed in {listing}"),
        ("unlisted-file", f"leftImg8bit/val/2/000777_leftImg8bit.png: file not listed in {listing}"),
        ("unlisted-file", f"leftImg8bit/val/8: folder not listed in {listing}"),
    ]


def test_missing_and_double_images(idd_data, benchmark):
    (idd_data / "leftImg8bit/val/2/000003_leftImg8bit.png").unlink()
    write_image(idd_data, "test", "3", "000004", ext="jpg")
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert errors(report) == [
        ("missing-image", "frame '2/000003' (drive '2', split val): no image "
                          "(leftImg8bit/val/2/000003_leftImg8bit.png or .jpg)"),
        ("two-images", "frame '3/000004' (drive '3', split test): two images (leftImg8bit/test/3/000004_leftImg8bit.png, "
                       "leftImg8bit/test/3/000004_leftImg8bit.jpg); keep one"),
    ]


def test_mask_size_must_match_the_image(idd_data, benchmark):
    write_polygons(idd_data, "test", "4", "000005", [box("road", 0, 0, 3, 3)], size=(20, 12))
    write_masks(idd_data)
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert [code for code, _ in errors(report)] == ["label-size-mismatch"]


def test_mask_out_of_date_with_its_polygons(idd_data, benchmark):
    write_polygons(idd_data, "test", "3", "000004", [box("road", 0, 0, 15, 11)])  # edited after drawing
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert errors(report) == [
        ("label-provenance", "frame '3/000004': mask gtFine/test/3/000004_gtFine_labellevel3Ids.png is out of date: "
                             "000004_gtFine_polygons.json changed after the mask was drawn; redraw the masks with "
                             "`python -m segbench.protocols.idd.masks --data DIR`")
    ]
    write_masks(idd_data)
    assert audit_dataset(idd_data, benchmark, ["test"]).ok


def test_masks_made_elsewhere_are_a_warning(idd_data, benchmark):
    (idd_data / RECORD).unlink()
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert report.ok
    [finding] = [f for f in report.findings if f.code == "label-provenance"]
    assert finding.severity == "warning" and "Pillow version that drew their polygon edges is unknown" in finding.message


def test_missing_mask(idd_data, benchmark):
    (idd_data / "gtFine/test/4/000005_gtFine_labellevel3Ids.png").unlink()
    report = audit_dataset(idd_data, benchmark, ["test"])
    assert errors(report) == [
        ("missing-label", "frame '4/000005' (drive '4', split test): no label "
                          "(gtFine/test/4/000005_gtFine_labellevel3Ids.png)")
    ]


def test_manifest_round_trip(tmp_path, idd_data, benchmark):
    frames = read_dataset(benchmark, idd_data)
    manifest = build_manifest(idd_data, frames, id_prefix="idd", group_key="drive")
    assert manifest["dataset_id"].startswith("idd:")
    assert manifest["frames"][0]["drive"] == "1"
    write_manifest(tmp_path / "m.json", manifest)
    again = read_manifest(tmp_path / "m.json", id_prefix="idd", group_key="drive")
    assert verify_manifest(again, idd_data, frames, id_prefix="idd", group_key="drive") == manifest["dataset_id"]


def test_index_files_are_the_polygons(idd_data, benchmark):
    frames = read_dataset(benchmark, idd_data)
    files = dataset_format("idd").index_files(idd_data, [f.label for f in frames])
    assert files[0] == idd_data / "gtFine/train/1/000001_gtFine_polygons.json"
    assert all(Path(p).is_file() for p in files)
    assert json.loads(files[0].read_text())["imgWidth"] == 16
