import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from pv_fixtures import ALL_CLASSES, make_dataset, write_csv, write_png

from segbench.datasets.base import Frame
from segbench.datasets.painting_vision import read_frames
from segbench.errors import SegbenchError
from segbench.records.provenance import (
    build_manifest,
    checkpoint_sha256,
    dataset_id,
    dvc_md5,
    read_manifest,
    verify_manifest,
    write_manifest,
)

SPLITS = ("train", "val", "test")
FRAMES = [
    ("a1", "wA", "train", ALL_CLASSES),
    ("b1", "wB", "val", ALL_CLASSES),
    ("c1", "wC", "test", ALL_CLASSES),
]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_of(data):
    return build_manifest(data, read_frames(data, SPLITS))


@pytest.fixture
def data(tmp_path):
    return make_dataset(tmp_path, FRAMES)


# ---------------------------------------------------------------- hashing


def test_checkpoint_sha256_file(tmp_path):
    (tmp_path / "best.pt").write_bytes(b"weights\x00\x01")
    assert checkpoint_sha256(tmp_path / "best.pt") == sha(b"weights\x00\x01")


def test_checkpoint_sha256_folder(tmp_path):
    ckpt = tmp_path / "ckpt"
    (ckpt / "sub").mkdir(parents=True)
    (ckpt / "config.json").write_bytes(b'{"a": 1}')
    (ckpt / "model.safetensors").write_bytes(b"\x00" * 100)
    (ckpt / "sub" / "extra.txt").write_bytes(b"x")
    listing = sorted(
        [
            ["config.json", sha(b'{"a": 1}')],
            ["model.safetensors", sha(b"\x00" * 100)],
            ["sub/extra.txt", sha(b"x")],
        ]
    )
    expected = sha(json.dumps(listing, separators=(",", ":")).encode())
    assert checkpoint_sha256(ckpt) == expected
    # the same bytes under another name are another checkpoint
    (ckpt / "sub" / "extra.txt").rename(ckpt / "sub" / "other.txt")
    renamed = checkpoint_sha256(ckpt)
    assert renamed != expected
    assert renamed == sha(
        json.dumps(
            [
                ["config.json", sha(b'{"a": 1}')],
                ["model.safetensors", sha(b"\x00" * 100)],
                ["sub/other.txt", sha(b"x")],
            ],
            separators=(",", ":"),
        ).encode()
    )


def test_checkpoint_sha256_errors(tmp_path):
    with pytest.raises(SegbenchError, match=r"nothing: checkpoint not found"):
        checkpoint_sha256(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SegbenchError, match=r"empty: checkpoint folder contains no files"):
        checkpoint_sha256(tmp_path / "empty")


# ---------------------------------------------------------------- dataset_id


def test_golden_dataset_id():
    entries = [
        {
            "frame_id": "f2",
            "wall_id": "w1",
            "split": "test",
            "image": {"path": "images/f2.png", "sha256": "b" * 64},
            "label": {"path": "labels/f2.png", "sha256": "c" * 64},
        },
        {
            "frame_id": "f1",
            "wall_id": "w1",
            "split": "test",
            "image": {"path": "images/f1.jpg", "sha256": "a" * 64},
            "label": {"path": "labels/f1.png", "sha256": "d" * 64},
        },
    ]
    canonical = (
        '[{"frame_id":"f1","image":{"path":"images/f1.jpg","sha256":"' + "a" * 64 + '"},'
        '"label":{"path":"labels/f1.png","sha256":"' + "d" * 64 + '"},"split":"test","wall_id":"w1"},'
        '{"frame_id":"f2","image":{"path":"images/f2.png","sha256":"' + "b" * 64 + '"},'
        '"label":{"path":"labels/f2.png","sha256":"' + "c" * 64 + '"},"split":"test","wall_id":"w1"}]'
    )
    expected = "pv1:" + sha(canonical.encode("utf-8"))
    assert dataset_id(entries, "pv1") == expected
    assert dataset_id(list(reversed(entries)), "pv1") == expected
    assert dataset_id(entries, "xy9") == "xy9:" + sha(canonical.encode("utf-8"))


def test_build_manifest_contents(data):
    manifest = manifest_of(data)
    assert manifest["format"] == "segbench-manifest"
    assert manifest["version"] == 1
    assert manifest["frames"][0] == {
        "frame_id": "a1",
        "wall_id": "wA",
        "split": "train",
        "image": {"path": "images/a1.png", "sha256": sha((data / "images" / "a1.png").read_bytes())},
        "label": {"path": "labels/a1.png", "sha256": sha((data / "labels" / "a1.png").read_bytes())},
    }
    assert [f["frame_id"] for f in manifest["frames"]] == ["a1", "b1", "c1"]
    assert manifest["dataset_id"] == "pv1:" + sha(
        json.dumps(manifest["frames"], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )


def test_build_manifest_custom_prefix_and_group_key(data):
    manifest = build_manifest(data, read_frames(data, SPLITS), id_prefix="idd1", group_key="drive_id")
    assert manifest["dataset_id"].startswith("idd1:")
    assert manifest["frames"][2]["drive_id"] == "wC"
    assert "wall_id" not in manifest["frames"][2]


def test_build_manifest_names_every_missing_file(tmp_path):
    data = make_dataset(tmp_path, [*FRAMES, ("c2", "wC", "test", ALL_CLASSES)])
    (data / "images" / "a1.png").unlink()
    (data / "labels" / "c1.png").unlink()  # c2's is there: the test split is labelled, c1's label missing
    with pytest.raises(SegbenchError) as exc:
        manifest_of(data)
    assert str(exc.value) == (
        f"cannot build the data manifest of {data}: 2 file(s) missing:\n"
        f"  {data / 'images' / 'a1.jpg'} (frame 'a1')\n"
        f"  {data / 'labels' / 'c1.png'} (frame 'c1')"
    )


def test_a_split_without_any_label_is_unlabelled(data):
    """Its label sha256 is null; every other entry is the labelled copy's (the id is of the entries)."""
    labelled = manifest_of(data)
    (data / "labels" / "c1.png").unlink()  # the test split's one label
    assert [f.labelled for f in read_frames(data, SPLITS)] == [True, True, False]
    unlabelled = manifest_of(data)
    expected = json.loads(json.dumps(labelled["frames"]))
    expected[2]["label"]["sha256"] = None
    assert unlabelled["frames"] == expected
    assert unlabelled["dataset_id"] == dataset_id(expected, "pv1") != labelled["dataset_id"]


def test_dataset_id_changes_with_one_label_byte(data):
    before = manifest_of(data)["dataset_id"]
    label = ALL_CLASSES.copy()
    label[0, 0] = 1
    write_png(data / "labels" / "b1.png", label)
    assert manifest_of(data)["dataset_id"] != before


def test_dataset_id_changes_with_one_raw_byte(data):
    before = manifest_of(data)["dataset_id"]
    path = data / "labels" / "c1.png"
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    path.write_bytes(bytes(raw))
    assert manifest_of(data)["dataset_id"] != before


def test_dataset_id_changes_with_split(data):
    before = manifest_of(data)["dataset_id"]
    write_csv(data, [("a1", "wA", "train"), ("b1", "wB", "test"), ("c1", "wC", "test")])
    assert manifest_of(data)["dataset_id"] != before


def test_dataset_id_changes_with_wall(data):
    before = manifest_of(data)["dataset_id"]
    write_csv(data, [("a1", "wA", "train"), ("b1", "wB2", "val"), ("c1", "wC", "test")])
    assert manifest_of(data)["dataset_id"] != before


def test_dataset_id_changes_when_image_moves_to_png_or_jpg(data):
    before = manifest_of(data)["dataset_id"]
    (data / "images" / "a1.png").rename(data / "images" / "a1.jpg")  # same bytes, other path
    assert manifest_of(data)["dataset_id"] != before


def test_dataset_id_unchanged_by_identical_rewrite(data, tmp_path):
    before = manifest_of(data)
    for path in sorted(data.rglob("*.png")):
        content = path.read_bytes()
        path.unlink()
        path.write_bytes(content)
    write_csv(data, [(f, w, s) for f, w, s, _ in FRAMES])
    assert manifest_of(data) == before
    # a copy of the data elsewhere has the same identity (paths are relative)
    other = make_dataset(tmp_path, FRAMES, name="copy")
    assert manifest_of(other)["dataset_id"] == before["dataset_id"]


# ---------------------------------------------------------------- write / read


def test_write_and_read_manifest(data, tmp_path):
    manifest = manifest_of(data)
    path = tmp_path / "out" / "data_manifest.json"
    write_manifest(path, manifest)
    text = path.read_text()
    assert text == json.dumps(manifest, sort_keys=True, indent=2) + "\n"
    assert read_manifest(path) == manifest
    assert [p.name for p in path.parent.iterdir()] == ["data_manifest.json"]  # no temp file left


def test_write_manifest_replaces_atomically(data, tmp_path):
    path = tmp_path / "m.json"
    path.write_text("old")
    write_manifest(path, manifest_of(data))
    assert read_manifest(path)["dataset_id"] == manifest_of(data)["dataset_id"]


def write_json(path, value):
    path.write_text(json.dumps(value))
    return path


def test_read_manifest_missing_and_not_json(tmp_path):
    with pytest.raises(SegbenchError) as exc:
        read_manifest(tmp_path / "m.json")
    assert str(exc.value) == f"{tmp_path / 'm.json'}: data manifest not found"
    (tmp_path / "m.json").write_text('{"format": ')
    with pytest.raises(SegbenchError) as exc:
        read_manifest(tmp_path / "m.json")
    assert str(exc.value) == f"{tmp_path / 'm.json'}: not valid JSON (Expecting value at line 1, column 12)"


# (edit, what the schema check says about it)
SCHEMA_CASES = [
    (lambda m: m.update(format="other"), "field 'format': 'segbench-manifest' was expected"),
    (lambda m: m.update(version=2), "field 'version': 1 was expected"),
    (lambda m: m.update(extra=1), "field '(top level)': Additional properties are not allowed ('extra' was unexpected)"),
    (lambda m: m.pop("frames"), "field '(top level)': 'frames' is a required property"),
    (lambda m: m.update(frames={}), "field 'frames': {} is not of type 'array'"),
    (lambda m: m["frames"][1].pop("wall_id"), "field 'frames/1': 'wall_id' is a required property"),
    (lambda m: m["frames"][0].update(split=3), "field 'frames/0/split': 3 is not of type 'string'"),
    (lambda m: m["frames"][0].update(wall_id=""), "field 'frames/0/wall_id': '' should be non-empty"),
    (
        lambda m: m["frames"][2]["label"].update(sha256="XYZ"),
        "field 'frames/2/label/sha256': 'XYZ' does not match '^[0-9a-f]{64}$'",
    ),
    (
        lambda m: m["frames"][2].update(image="images/c1.png"),
        "field 'frames/2/image': 'images/c1.png' is not of type 'object'",
    ),
    (lambda m: m.update(layout={"meta": 1}), "field 'layout/meta': 1 is not of type 'string'"),
]


@pytest.mark.parametrize(
    "edit, message, schema",
    [(edit, message, True) for edit, message in SCHEMA_CASES] + [
        (lambda m: m["frames"].append(dict(m["frames"][0])), "frames/3: duplicate frame_id 'a1'", False),
        (
            lambda m: m.update(dataset_id="pv2:abc"),
            "field 'dataset_id' is 'pv2:abc', expected 'pv1:<sha256>': the manifest of another benchmark (or of none)",
            False,
        ),
    ],
)
def test_read_manifest_wrong_fields(data, tmp_path, edit, message, schema):
    manifest = manifest_of(data)
    edit(manifest)
    path = write_json(tmp_path / "m.json", manifest)
    with pytest.raises(SegbenchError) as exc:
        read_manifest(path)
    assert str(exc.value) == ("invalid manifest:\n  " if schema else "") + f"{path}: {message}"


def test_read_manifest_inconsistent_dataset_id(data, tmp_path):
    manifest = manifest_of(data)
    stated = manifest["dataset_id"]
    manifest["frames"][0]["split"] = "test"  # edited by hand, id left as it was
    path = write_json(tmp_path / "m.json", manifest)
    with pytest.raises(SegbenchError) as exc:
        read_manifest(path)
    assert str(exc.value) == (
        f"{path}: field 'dataset_id' is {stated}, but its own frame list hashes to "
        f"{dataset_id(manifest['frames'], 'pv1')}; the manifest was edited or corrupted"
    )


# ---------------------------------------------------------------- verify


def test_verify_manifest_accepts_identical_data(data):
    manifest = manifest_of(data)
    assert verify_manifest(manifest, data, read_frames(data, SPLITS)) == manifest["dataset_id"]


def test_verify_manifest_lists_every_difference(data, tmp_path):
    manifest = manifest_of(data)
    old = {f["frame_id"]: f for f in manifest["frames"]}
    # changed bytes of two files
    label = ALL_CLASSES.copy()
    label[0, 0] = 9
    write_png(data / "labels" / "a1.png", label)
    write_png(data / "images" / "b1.png", np.zeros((16, 20, 3), np.uint8))
    new_a1 = sha((data / "labels" / "a1.png").read_bytes())
    new_b1 = sha((data / "images" / "b1.png").read_bytes())
    # a missing file
    (data / "labels" / "c1.png").unlink()
    # split and wall changes, a frame only on disk, a frame only in the manifest
    make_dataset(tmp_path, [("d1", "wD", "test", ALL_CLASSES)], name="data")
    write_csv(data, [("a1", "wA", "val"), ("b1", "wX", "val"), ("c1", "wC", "test"), ("d1", "wD", "test")])
    manifest["frames"].append(dict(old["a1"], frame_id="zz"))
    frames = read_frames(data, SPLITS)
    with pytest.raises(SegbenchError) as exc:
        verify_manifest(manifest, data, frames, manifest_path=tmp_path / "m.json")
    a1_label = old["a1"]["label"]["sha256"][:12]
    b1_image = old["b1"]["image"]["sha256"][:12]
    c1_label = old["c1"]["label"]["sha256"][:12]
    assert str(exc.value) == (
        f"the data in {data} does not match the data manifest {tmp_path / 'm.json'} (7 difference(s)); "
        "refusing to evaluate:\n"
        "  frame 'a1': split is 'val', the manifest says 'train'\n"
        f"  labels/a1.png: bytes changed (frame 'a1'; manifest sha256 {a1_label}, on disk {new_a1[:12]})\n"
        "  frame 'b1': wall_id is 'wX', the manifest says 'wB'\n"
        f"  images/b1.png: bytes changed (frame 'b1'; manifest sha256 {b1_image}, on disk {new_b1[:12]})\n"
        f"  labels/c1.png: missing (frame 'c1'; manifest sha256 {c1_label})\n"
        "  frame 'd1': in the data's frame list but not in the manifest\n"
        "  frame 'zz': in the manifest but not in the data's frame list"
    )


def test_verify_manifest_image_path_changed(data):
    manifest = manifest_of(data)
    (data / "images" / "c1.png").rename(data / "images" / "c1.jpg")
    with pytest.raises(SegbenchError) as exc:
        verify_manifest(manifest, data, read_frames(data, SPLITS))
    assert str(exc.value) == (
        f"the data in {data} does not match the data manifest (1 difference(s)); refusing to evaluate:\n"
        "  frame 'c1': image is images/c1.jpg, the manifest says images/c1.png"
    )


def test_verify_manifest_stale_dataset_id(data):
    manifest = manifest_of(data)
    manifest["dataset_id"] = "pv1:" + "0" * 64
    with pytest.raises(SegbenchError, match=r"dataset_id: the manifest says pv1:0{64}, the data hashes to pv1:"):
        verify_manifest(manifest, data, read_frames(data, SPLITS))


def test_frame_paths_outside_data_dir(tmp_path, data):
    frame = Frame("x", "w", "test", tmp_path / "x.png", data / "labels" / "a1.png")
    write_png(tmp_path / "x.png", np.zeros((2, 2), np.uint8))
    with pytest.raises(SegbenchError, match=r"x\.png: not inside the data folder"):
        build_manifest(data, [frame])


@pytest.mark.parametrize("name", ["segformer-ade", "deeplab-pv", "best.onnx", "best.pt"])
def test_dvc_md5_is_the_hash_dvc_pinned(name):
    """Files and folders: the pins beside the embedded models were written by `dvc add` itself."""
    artifacts = Path(__file__).resolve().parents[1] / "artifacts"
    [out] = yaml.safe_load((artifacts / f"{name}.dvc").read_text())["outs"]
    assert dvc_md5(artifacts / name) == (out["md5"], out["size"])
