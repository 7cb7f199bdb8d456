"""The frame index (results/<benchmark>/frames.json): every frame of a dataset as its reader
produced it, with the SHA-256 of its files (from the manifest) and its ground truth's size (from
the header). The workflow's dataset_identity job writes it once; the shard jobs read their frames
from it instead of listing the dataset again, and the workflow derives each shard's content key
from it (which bytes a job's result depends on: images and ground-truth sizes for inference,
labels for scoring), and each frame's metadata (Frame.meta: what slices are made of). A frame of
an unlabelled split (IDD20K's public test split) has no label: its label_sha256 and label_size
are null and `labelled` false, so that its shard's jobs infer and export it and never read a label.

    {"format": "segbench-frame-index", "version": 3, "benchmark": ..., "dataset_id": ...,
     "frames": [{"frame_id": ..., "group_id": ..., "split": ..., "image": "images/a.jpg",
                 "label": "labels/a.png", "prediction": "a.png", "image_sha256": ...,
                 "label_sha256": ..., "label_size": [width, height], "labelled": true,
                 "meta": {column: text}}, ...]}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import atomic_write_text, read_json
from ..io.maskio import image_size

INDEX_FORMAT = "segbench-frame-index"
INDEX_VERSION = 3  # 2: each frame's metadata; 3: whether it is labelled
_FRAME_KEYS = {"frame_id", "group_id", "split", "image", "label", "prediction", "image_sha256", "label_sha256",
               "label_size", "labelled", "meta"}


def build_index(benchmark: str, data: Path, frames: Sequence[Frame], manifest: dict[str, Any]) -> dict[str, Any]:
    """The index of `frames` (read from `data`), with the hashes the verified `manifest` holds."""
    data = Path(data)
    hashes = {e["frame_id"]: e for e in manifest["frames"]}
    entries = []
    for frame in sorted(frames, key=lambda f: f.frame_id):
        pinned = hashes[frame.frame_id]
        entries.append({
            "frame_id": frame.frame_id,
            "group_id": frame.group_id,
            "split": frame.split,
            "image": pinned["image"]["path"],
            "label": pinned["label"]["path"],
            "prediction": frame.prediction,
            "image_sha256": pinned["image"]["sha256"],
            "label_sha256": pinned["label"]["sha256"],
            "label_size": list(image_size(frame.label)) if frame.labelled else None,
            "labelled": frame.labelled,
            "meta": dict(frame.meta),
        })
    return {"format": INDEX_FORMAT, "version": INDEX_VERSION, "benchmark": benchmark,
            "dataset_id": manifest["dataset_id"], "frames": entries}


def write_index(path: Path, index: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(index, indent=1, ensure_ascii=False) + "\n")


def read_index(path: Path, benchmark: str) -> dict[str, Any]:
    """Read a frame index, refusing one of another format, version or benchmark."""
    index = read_json(path, "frame index (written by `segbench manifest --index-out`)")
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT or index.get("version") != INDEX_VERSION:
        raise SegbenchError(f"{path}: not a frame index of format {INDEX_FORMAT!r} version {INDEX_VERSION}")
    if index.get("benchmark") != benchmark:
        raise SegbenchError(f"{path}: frame index of benchmark {index.get('benchmark')!r}, not {benchmark!r}")
    for i, entry in enumerate(index.get("frames", [])):
        if not isinstance(entry, dict) or set(entry) != _FRAME_KEYS:
            raise SegbenchError(f"{path}: frames/{i}: expected the fields {sorted(_FRAME_KEYS)}")
    return index


def index_groups(index: dict[str, Any]) -> dict[str, str]:
    """frame_id -> group id (wall, drive, user): the independent units a bootstrap resamples."""
    return {e["frame_id"]: e["group_id"] for e in index["frames"]}


def index_frames(index: dict[str, Any], data: Path) -> list[Frame]:
    """The index's frames as Frame records, their files inside `data`."""
    data = Path(data)
    return [Frame(e["frame_id"], e["group_id"], e["split"], data / e["image"], data / e["label"], e["prediction"],
                  labelled=e["labelled"], meta=e["meta"]) for e in index["frames"]]
