import json

import numpy as np
import pytest
from PIL import Image
from pv_fixtures import ALL_CLASSES, clean_frames, make_dataset, noise_image, write_csv, write_jpg, write_png

from segbench.errors import AuditFailed, SegbenchError
from segbench.io import maskio
from segbench.protocols.definitions import load_benchmark
from segbench.stages import audit as audit_module
from segbench.stages.audit import audit_dataset, average_hash


@pytest.fixture(scope="module")
def benchmark():
    return load_benchmark("painting-vision")


def run(data, benchmark, split="test"):
    return audit_dataset(data, benchmark, [split] if split else [])


def only(report, code):
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, report.to_text()
    return found[0]


def codes(report):
    return [(f.code, f.severity) for f in report.findings]


# ---------------------------------------------------------------- clean data, report format


def test_clean_dataset_passes(tmp_path, pv_data, benchmark):
    report = run(pv_data, benchmark)
    assert report.ok
    assert report.errors == [] and report.warnings == []
    assert report.to_json() == {
        "format": "segbench-audit",
        "version": 1,
        "data_dir": str(pv_data),
        "benchmark": "painting-vision",
        "splits_evaluated": ["test"],
        "ok": True,
        "counts": {
            "train": {"frames": 3, "walls": 2},
            "val": {"frames": 1, "walls": 1},
            "test": {"frames": 2, "walls": 2},
        },
        "error_count": 0,
        "warning_count": 0,
        "findings": [],
    }
    assert report.to_text() == (
        f"Dataset audit of {pv_data} (benchmark painting-vision, evaluating split 'test')\n"
        "Frames: train 3 (2 walls), val 1 (1 walls), test 2 (2 walls)\n"
        "Result: PASSED: 0 error(s), 0 warning(s)\n"
    )
    report.raise_if_failed(tmp_path / "audit.json")  # does not raise


def test_clean_jpeg_dataset_passes(tmp_path, benchmark):
    report = run(make_dataset(tmp_path, clean_frames(), image_ext="jpg"), benchmark)
    assert report.findings == []


def test_each_file_decoded_once(pv_data, benchmark, monkeypatch):
    opened = []
    real = maskio.open_image

    def counting(path):
        opened.append(path.relative_to(pv_data).as_posix())
        return real(path)

    monkeypatch.setattr(maskio, "open_image", counting)
    run(pv_data, benchmark)
    assert sorted(opened) == sorted(
        [f"images/{f}.png" for f, *_ in clean_frames()] + [f"labels/{f}.png" for f, *_ in clean_frames()]
    )


def test_unknown_split_is_an_error(pv_data, benchmark):
    with pytest.raises(SegbenchError, match=r"unknown split 'dev' for benchmark 'painting-vision'"):
        run(pv_data, benchmark, "dev")


def test_bad_frames_csv_raises(pv_data, benchmark):
    (pv_data / "frames.csv").write_text("frame_id,wall,split\n")
    with pytest.raises(SegbenchError, match=r"line 1: header is 'frame_id,wall,split'"):
        run(pv_data, benchmark)


# ---------------------------------------------------------------- errors


def test_wall_in_two_splits(tmp_path, benchmark):
    frames = clean_frames() + [("x1", "wA", "test", ALL_CLASSES), ("x2", "wC", "train", ALL_CLASSES)]
    report = run(make_dataset(tmp_path, frames), benchmark)
    assert not report.ok
    assert codes(report) == [("group-crosses-splits", "error"), ("group-crosses-splits", "error")]
    first, second = report.findings
    assert first.message == "wall 'wA' is in more than one split: test (x1); train (a1, a2)"
    assert (first.frames, first.walls) == (("a1", "a2", "x1"), ("wA",))
    assert second.message == "wall 'wC' is in more than one split: train (x2); val (c1)"
    assert report.to_json()["findings"][1] == {
        "code": "group-crosses-splits",
        "severity": "error",
        "message": "wall 'wC' is in more than one split: train (x2); val (c1)",
        "frames": ["c1", "x2"],
        "walls": ["wC"],
    }


def test_same_image_bytes_in_two_splits(tmp_path, benchmark):
    same = noise_image("shared", 16, 20)
    frames = clean_frames()
    report = run(make_dataset(tmp_path, frames, images={"a1": same, "d1": same, "a2": same}), benchmark)
    # a1 and a2 share bytes within train only: not an error by itself; no near-duplicate warning either
    finding = only(report, "image-bytes-across-splits")
    assert codes(report) == [("image-bytes-across-splits", "error")]
    sha = audit_module.sha256_file(tmp_path / "data" / "images" / "a1.png")
    assert finding.message == (
        f"identical image bytes (sha256 {sha[:12]}) in more than one split: "
        "test (d1 (wall wD)); train (a1 (wall wA), a2 (wall wA))"
    )
    assert finding.frames == ("a1", "a2", "d1")
    assert finding.walls == ("wA", "wD")


def test_frame_listed_with_no_files(pv_data, benchmark):
    write_csv(pv_data, [(f, w, s) for f, w, s, _ in clean_frames()] + [("ghost", "wG", "val")])
    report = run(pv_data, benchmark)
    assert codes(report) == [("missing-image", "error"), ("missing-label", "error")]
    assert report.findings[0].message == "frame 'ghost' (wall 'wG', split val): no image (images/ghost.jpg or .png)"
    assert report.findings[1].message == "frame 'ghost' (wall 'wG', split val): no label (labels/ghost.png)"
    assert all(f.frames == ("ghost",) and f.walls == ("wG",) for f in report.findings)


def test_missing_label_only(pv_data, benchmark):
    (pv_data / "labels" / "b1.png").unlink()
    report = run(pv_data, benchmark)
    assert codes(report) == [("missing-label", "error")]
    assert report.findings[0].message == "frame 'b1' (wall 'wB', split train): no label (labels/b1.png)"


def test_two_images(pv_data, benchmark):
    write_jpg(pv_data / "images" / "e1.jpg", noise_image("e1", 16, 20))
    report = run(pv_data, benchmark)
    finding = only(report, "two-images")
    assert codes(report) == [("two-images", "error")]
    assert finding.message == "frame 'e1' (wall 'wE', split test): two images (images/e1.jpg, images/e1.png); keep one"
    assert (finding.frames, finding.walls) == (("e1",), ("wE",))


def test_files_not_listed(pv_data, benchmark):
    write_png(pv_data / "images" / "stray.png", noise_image("stray", 16, 20))
    write_png(pv_data / "labels" / "stray.png", ALL_CLASSES)
    (pv_data / "labels" / "notes").mkdir()
    report = run(pv_data, benchmark)
    assert codes(report) == [("unlisted-file", "error")] * 3
    assert [f.message for f in report.findings] == [
        "images/stray.png: file not listed in frames.csv",
        "labels/notes: folder not listed in frames.csv",
        "labels/stray.png: file not listed in frames.csv",
    ]


def test_label_size_mismatch(tmp_path, benchmark):
    data = make_dataset(tmp_path, clean_frames(), images={"c1": noise_image("c1", 16, 21)})
    report = run(data, benchmark)
    finding = only(report, "label-size-mismatch")
    assert codes(report) == [("label-size-mismatch", "error")]
    assert finding.message == (
        "frame 'c1' (wall 'wC', split val): label labels/c1.png is 20x16 but image images/c1.png is 21x16 (width x height)"
    )
    assert (finding.frames, finding.walls) == (("c1",), ("wC",))


def test_label_values_outside_taxonomy(tmp_path, benchmark):
    label = ALL_CLASSES.copy()
    label[0, :3] = 10
    label[1, 0] = 254
    label[2, 0] = 255  # void is allowed
    frames = clean_frames()
    frames[3] = ("c1", "wC", "val", label)
    report = run(make_dataset(tmp_path, frames), benchmark)
    finding = only(report, "label-values")
    assert codes(report) == [("label-values", "error")]
    assert finding.message == (
        "frame 'c1' (wall 'wC', split val): label labels/c1.png holds values outside the ground truth "
        "'painting-vision-10' (allowed: 0-9, 255): 10 (3 px), 254 (1 px)"
    )
    assert report.to_json()["findings"][0]["frames"] == ["c1"]
    assert report.to_json()["findings"][0]["walls"] == ["wC"]


def test_label_not_single_channel(pv_data, benchmark):
    write_png(pv_data / "labels" / "d1.png", np.stack([ALL_CLASSES] * 3, axis=-1))
    report = run(pv_data, benchmark)
    assert codes(report) == [("label-not-single-channel", "error")]
    assert report.findings[0].message == (
        "frame 'd1' (wall 'wD', split test): label labels/d1.png has mode RGB; expected single-channel 8-bit (L or P)"
    )


def test_palette_label_accepted(pv_data, benchmark):
    image = Image.fromarray(ALL_CLASSES, mode="L").convert("P")
    image.putpalette([v for i in range(256) for v in (i, i, i)])
    image.save(pv_data / "labels" / "d1.png")
    assert run(pv_data, benchmark).findings == []


def cut_in_half(path):
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def test_truncated_png_label(pv_data, benchmark):
    cut_in_half(pv_data / "labels" / "a2.png")
    report = run(pv_data, benchmark)
    finding = only(report, "unreadable-file")
    assert codes(report) == [("unreadable-file", "error")]
    assert finding.message.startswith(
        f"frame 'a2' (wall 'wA', split train): {pv_data / 'labels' / 'a2.png'}: unreadable or truncated image"
    )
    assert (finding.frames, finding.walls) == (("a2",), ("wA",))


@pytest.mark.parametrize("ext", ["png", "jpg"])
def test_truncated_image(tmp_path, benchmark, ext):
    frames = clean_frames()
    big = {"e1": noise_image("e1", 64, 80)}
    frames[5] = ("e1", "wE", "test", np.zeros((64, 80), np.uint8))
    data = make_dataset(tmp_path, frames, image_ext=ext, images=big)
    cut_in_half(data / "images" / f"e1.{ext}")
    report = run(data, benchmark)
    finding = only(report, "unreadable-file")
    assert finding.message.startswith(
        f"frame 'e1' (wall 'wE', split test): {data / 'images' / f'e1.{ext}'}: unreadable or truncated image"
    )
    assert [c for c, s in codes(report) if s == "error"] == ["unreadable-file"]


def test_garbage_image(pv_data, benchmark):
    (pv_data / "images" / "b1.png").write_bytes(b"this is not an image")
    report = run(pv_data, benchmark)
    assert codes(report) == [("unreadable-file", "error")]
    assert report.findings[0].message == (
        f"frame 'b1' (wall 'wB', split train): {pv_data / 'images' / 'b1.png'}: not a readable image"
    )


def test_empty_evaluated_split(tmp_path, benchmark):
    frames = [f for f in clean_frames() if f[2] != "test"]
    data = make_dataset(tmp_path, frames)
    report = run(data, benchmark, "test")
    assert codes(report) == [("empty-split", "error")]
    assert report.findings[0].message == "the evaluated split 'test' has no frames"
    assert report.to_json()["counts"]["test"] == {"frames": 0, "walls": 0}
    assert run(data, benchmark, "val").ok
    assert audit_dataset(data, benchmark).ok


def test_empty_dataset(tmp_path, benchmark):
    data = make_dataset(tmp_path, [])
    report = audit_dataset(data, benchmark)
    assert codes(report) == [("empty-dataset", "error")]
    assert report.findings[0].message == f"{data}: frames.csv lists no frames"


# ---------------------------------------------------------------- warnings


def test_absent_classes_warning(tmp_path, benchmark):
    frames = clean_frames()
    label = np.zeros_like(ALL_CLASSES)
    label[:, :10] = 2
    label[0, 0] = 255
    frames[3] = ("c1", "wC", "val", label)
    report = run(make_dataset(tmp_path, frames), benchmark)
    assert report.ok
    assert codes(report) == [("classes-absent", "warning")]
    assert report.warnings[0].message == (
        "split 'val': 8 of 10 classes of 'painting-vision-10' have no pixel: "
        "wall_unpainted, wall_uncertain, ceiling, floor, skirting, fixture, window, obstacle"
    )
    assert report.warnings[0].frames == () and report.warnings[0].walls == ()


def test_near_duplicate_warning(tmp_path, benchmark):
    base = noise_image("base", 16, 20)
    tweaked = base.copy()
    tweaked[0, 0] ^= 1  # other bytes, same look
    frames = clean_frames()
    data = make_dataset(tmp_path, frames, images={"b1": base, "d1": tweaked})
    report = run(data, benchmark)
    assert report.ok
    finding = only(report, "near-duplicate")
    assert codes(report) == [("near-duplicate", "warning")]
    assert finding.message == (
        "frames 'b1' (wall 'wB', train) and 'd1' (wall 'wD', test) look nearly identical "
        "(average-hash distance 0 of 64 bits)"
    )
    assert (finding.frames, finding.walls) == (("b1", "d1"), ("wB", "wD"))
    assert report.to_text().endswith(
        "Result: PASSED: 0 error(s), 1 warning(s)\n\nWarnings:\n"
        f"  [near-duplicate] {finding.message}\n"
        "      frames: b1, d1\n"
        "      walls: wB, wD\n"
    )


def test_near_duplicate_within_a_split_is_fine(tmp_path, benchmark):
    base = noise_image("base", 16, 20)
    tweaked = base.copy()
    tweaked[0, 0] ^= 1
    report = run(make_dataset(tmp_path, clean_frames(), images={"d1": base, "e1": tweaked}), benchmark)
    assert report.findings == []


def test_average_hash():
    half = np.zeros((16, 16), np.uint8)
    half[:, 8:] = 200
    assert average_hash(Image.fromarray(half)) == int("00001111" * 8, 2)
    top = np.zeros((16, 16, 3), np.uint8)
    top[:2] = 255
    assert average_hash(Image.fromarray(top)) == int("1" * 8 + "0" * 56, 2)


# ---------------------------------------------------------------- writing and failing


def broken_dataset(tmp_path):
    frames = clean_frames() + [("x1", "wA", "test", ALL_CLASSES)]
    data = make_dataset(tmp_path, frames)
    (data / "labels" / "e1.png").unlink()
    write_png(data / "images" / "stray.png", noise_image("stray", 4, 4))
    return data


def test_report_orders_errors_first_and_is_deterministic(tmp_path, benchmark):
    data = broken_dataset(tmp_path)
    label = np.zeros_like(ALL_CLASSES)
    write_png(data / "labels" / "c1.png", label)
    report = run(data, benchmark)
    assert codes(report) == [
        ("group-crosses-splits", "error"),
        ("missing-label", "error"),
        ("unlisted-file", "error"),
        ("classes-absent", "warning"),
    ]
    assert run(data, benchmark).to_json() == report.to_json()


def test_write_and_raise(tmp_path, benchmark):
    data = broken_dataset(tmp_path)
    report = run(data, benchmark)
    json_path, text_path = tmp_path / "out" / "audit.json", tmp_path / "out" / "audit.txt"
    report.write(json_path, text_path)
    assert json.loads(json_path.read_text()) == report.to_json()
    assert text_path.read_text() == report.to_text()
    assert report.to_text() == (
        f"Dataset audit of {data} (benchmark painting-vision, evaluating split 'test')\n"
        "Frames: train 3 (2 walls), val 1 (1 walls), test 3 (3 walls)\n"
        "Result: FAILED: 3 error(s), 0 warning(s)\n"
        "\n"
        "Errors:\n"
        "  [group-crosses-splits] wall 'wA' is in more than one split: test (x1); train (a1, a2)\n"
        "      frames: a1, a2, x1\n"
        "      walls: wA\n"
        "  [missing-label] frame 'e1' (wall 'wE', split test): no label (labels/e1.png)\n"
        "      frames: e1\n"
        "      walls: wE\n"
        "  [unlisted-file] images/stray.png: file not listed in frames.csv\n"
    )
    with pytest.raises(AuditFailed) as exc:
        report.raise_if_failed(json_path)
    assert str(exc.value) == (
        f"dataset audit of {data} failed with 3 error(s):\n"
        "  [group-crosses-splits] wall 'wA' is in more than one split: test (x1); train (a1, a2)\n"
        "  [missing-label] frame 'e1' (wall 'wE', split test): no label (labels/e1.png)\n"
        "  [unlisted-file] images/stray.png: file not listed in frames.csv\n"
        f"full report: {json_path}"
    )
