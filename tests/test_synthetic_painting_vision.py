"""The synthetic Painting Vision dataset: byte-reproducible, in the on-disk format, every class present."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.synthetic.painting_vision import FRAME_SIZES, build_dataset, split_counts

ALLOWED_LABEL_VALUES = set(range(10)) | {255}


def _files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, tuple[Path, list[dict]]]:
    """Two builds with the default seed and one with another seed."""
    result = {}
    for name, seed in (("first", 0), ("again", 0), ("other_seed", 1)):
        out = tmp_path_factory.mktemp(name) / "data"
        result[name] = (out, build_dataset(out, seed=seed))
    return result


@pytest.fixture(scope="module")
def dataset(builds) -> tuple[Path, list[dict]]:
    return builds["first"]


@pytest.fixture(scope="module")
def labels(dataset) -> dict[str, np.ndarray]:
    root, rows = dataset
    return {row["frame_id"]: np.array(Image.open(root / "labels" / f"{row['frame_id']}.png")) for row in rows}


def test_build_is_byte_identical_across_runs(builds):
    first, again = _files(builds["first"][0]), _files(builds["again"][0])
    assert sorted(first) == sorted(again)
    assert [name for name in first if first[name] != again[name]] == []


def test_another_seed_gives_other_bytes(builds):
    first, other = _files(builds["first"][0]), _files(builds["other_seed"][0])
    images = [name for name in first if name.startswith("images/")]
    assert images
    assert all(first[name] != other.get(name) for name in images)


def test_frames_csv_lists_every_frame_sorted(dataset):
    root, rows = dataset
    text = (root / "frames.csv").read_bytes().decode("utf-8")
    assert "\r" not in text
    lines = text.split("\n")
    assert lines[0] == "frame_id,wall_id,split,lighting"
    assert lines[-1] == ""  # ends with a newline
    parsed = list(csv.DictReader(text.splitlines()))
    assert parsed == rows
    assert len(rows) == 14 * 4
    assert [row["frame_id"] for row in rows] == sorted(row["frame_id"] for row in rows)
    assert {row["wall_id"] for row in rows} == {f"w{index:02d}" for index in range(1, 15)}
    assert all(row["frame_id"].startswith(row["wall_id"] + "_f") for row in rows)
    assert {row["split"] for row in rows} == {"train", "val", "test"}
    assert {row["lighting"] for row in rows} == {"lit_from_left", "lit_from_right"}


def test_split_is_by_wall_8_2_4(dataset):
    _, rows = dataset
    splits_of_wall: dict[str, set[str]] = {}
    frames_of_wall: dict[str, int] = {}
    for row in rows:
        splits_of_wall.setdefault(row["wall_id"], set()).add(row["split"])
        frames_of_wall[row["wall_id"]] = frames_of_wall.get(row["wall_id"], 0) + 1
    assert all(len(splits) == 1 for splits in splits_of_wall.values())
    assert set(frames_of_wall.values()) == {4}
    walls_per_split = {
        split: sum(splits == {split} for splits in splits_of_wall.values()) for split in ("train", "val", "test")
    }
    assert walls_per_split == {"train": 8, "val": 2, "test": 4}


def test_files_match_the_listed_frames(dataset):
    root, rows = dataset
    ids = sorted(row["frame_id"] for row in rows)
    assert sorted(path.stem for path in (root / "images").iterdir()) == ids
    assert sorted(path.stem for path in (root / "labels").iterdir()) == ids
    assert {path.suffix for path in (root / "images").iterdir()} == {".jpg"}
    assert {path.suffix for path in (root / "labels").iterdir()} == {".png"}


def test_images_are_rgb_jpegs_of_the_allowed_sizes(dataset):
    root, rows = dataset
    for row in rows:
        with Image.open(root / "images" / f"{row['frame_id']}.jpg") as image:
            assert image.format == "JPEG"
            assert image.mode == "RGB"
            assert image.size in FRAME_SIZES
            assert "exif" not in image.info


def test_labels_are_single_channel_with_allowed_values(dataset):
    root, rows = dataset
    for row in rows:
        frame_id = row["frame_id"]
        with (
            Image.open(root / "images" / f"{frame_id}.jpg") as image,
            Image.open(root / "labels" / f"{frame_id}.png") as label,
        ):
            assert label.format == "PNG"
            assert label.mode == "L"
            assert label.size == image.size
            assert set(np.unique(np.array(label)).tolist()) <= ALLOWED_LABEL_VALUES


def test_every_class_and_void_occur(labels):
    present = set()
    for label in labels.values():
        present |= set(np.unique(label).tolist())
    assert present == ALLOWED_LABEL_VALUES


def test_test_split_has_wall_states_window_and_void(dataset, labels):
    _, rows = dataset
    present = set()
    for row in rows:
        if row["split"] == "test":
            present |= set(np.unique(labels[row["frame_id"]]).tolist())
    assert {1, 2, 8, 255} <= present


def test_every_frame_shows_a_window(labels):
    assert all((label == 8).any() for label in labels.values())


def test_frames_of_one_wall_are_different_views(dataset, labels):
    _, rows = dataset
    by_wall: dict[str, list[np.ndarray]] = {}
    for row in rows:
        by_wall.setdefault(row["wall_id"], []).append(labels[row["frame_id"]])
    for frames in by_wall.values():
        assert len({frame.shape for frame in frames}) == 1
        assert len({frame.tobytes() for frame in frames}) == len(frames)


@pytest.mark.parametrize(
    ("walls", "expected"),
    [(14, (8, 2, 4)), (3, (1, 1, 1)), (5, (3, 1, 1)), (7, (4, 1, 2)), (28, (16, 4, 8))],
)
def test_split_counts_are_proportional_with_one_val_and_test_wall_at_least(walls, expected):
    assert split_counts(walls) == expected


def test_small_build_follows_split_counts(tmp_path):
    rows = build_dataset(tmp_path / "data", seed=3, walls=3, frames_per_wall=1)
    assert sorted(row["split"] for row in rows) == ["test", "train", "val"]
    assert [row["frame_id"] for row in rows] == ["w01_f1", "w02_f1", "w03_f1"]


def test_too_few_walls_is_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 3 walls"):
        build_dataset(tmp_path / "data", walls=2)


def test_a_non_empty_folder_is_refused(tmp_path):
    (tmp_path / "stale.txt").write_text("left over\n")
    with pytest.raises(FileExistsError, match="not empty"):
        build_dataset(tmp_path)
