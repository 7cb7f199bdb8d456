"""The participant's side: an upload in a benchmark's official format, and its check against the
dataset manifest without the labels.

An upload is a zip holding one mask per frame of the split, named as the benchmark's dataset
format names predictions (IDD: `<drive>/<image id>_gtFine_labellevel3Ids.png`, resized to the
challenge's 1280x720; Painting Vision and EasyPortrait: `<frame_id>.png` at the image's size)
and, except for IDD whose server takes masks only, `dataset_id.txt` holding the dataset_id of
the manifest it was made for. `check_upload` applies the intake's checks (entries, limits, PNG
headers) and then the ones a manifest allows without labels: every frame present once, the
size (the evaluation size, or the image's when the data is at hand), the values in the label
space.

A void value of the label space (255 in most) is accepted, and both commands list the frames
that hold one, with their count: an upload may abstain on a pixel, but scoring counts such a
pixel as a miss of its ground-truth class (docs/metrics.md), so it earns nothing there; a
warning, not a refusal.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..core.benchmark import Benchmark
from ..core.confusion import value_histogram
from ..core.labels import INVALID, LabelSpace
from ..datasets import dataset_format
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import atomic_path
from ..io.limits import LIMITS
from ..io.maskio import PngHeader, decode_mask, image_size
from ..io.problems import SHOWN, Problem, Problems, kind_of
from ..records import provenance
from ..records.intake import (OUTSIDE_SPACE, UNDECODABLE, WRONG_SIZE, check_prediction_header, mask_bytes,
                              mask_header, open_predictions, read_prediction)
from ..records.prediction_archive import STATED_DATASET, UPLOAD_META, ArchivePredictions
from ..records.predictions import REFUSED, Predictions


def manifest_frames(benchmark: Benchmark, manifest: Path, split: str) -> tuple[list[Frame], str]:
    """The split's frames as the manifest lists them (prediction names from the format's rule),
    and the manifest's dataset_id: everything an upload is checked against, without the data."""
    benchmark.check_split(split)
    document = provenance.read_manifest(manifest, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key)
    name = dataset_format(benchmark.dataset_format).prediction_name
    frames = [
        Frame(e["frame_id"], e[benchmark.group_key], e["split"], Path(e["image"]["path"]), Path(e["label"]["path"]),
              name(e["frame_id"]))
        for e in document["frames"]
        if e["split"] == split
    ]
    if not frames:
        raise SegbenchError(f"{manifest}: no frames of split '{split}'")
    return sorted(frames, key=lambda f: f.frame_id), document["dataset_id"]


def png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask).save(buffer, format="PNG")
    return buffer.getvalue()


def void_pixels(histogram: np.ndarray, space: LabelSpace) -> int:
    """The pixels of a mask (its value_histogram) holding a void value of `space`: no class predicted."""
    return int(histogram[space.void_values()].sum())


def void_warnings(space: LabelSpace, void: dict[str, int]) -> list[str]:
    """One line per frame of `void` (frame id -> void pixels) that holds any, the first SHOWN of
    them, then how many more and their pixels (a split of 4,000 frames is not 4,000 lines)."""
    values = value_ranges(space.void_values())
    held = [(frame, count) for frame, count in void.items() if count]
    lines = [f"frame {frame}: {count:,} pixels predicted as void ({values}) in '{space.name}', counted as misses"
             for frame, count in held[:SHOWN]]
    if len(held) > SHOWN:
        rest = held[SHOWN:]
        lines.append(f"... and {len(rest):,} more frames with pixels predicted as void "
                     f"({sum(count for _, count in rest):,} pixels)")
    return lines


def value_ranges(values: np.ndarray) -> str:
    """Sorted raw values in runs: [26, 27, ..., 255] -> "26-255", [255] -> "255"."""
    runs: list[list[int]] = []
    for v in map(int, values):
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def bounded_header(data: bytes, where: str) -> PngHeader:
    """A mask's PNG header, refused when a side exceeds the bound on masks with no ground truth at hand."""
    header = mask_header(data, where)
    if max(header.size) > LIMITS.max_mask_side:
        raise Problem(WRONG_SIZE, f"{where}: prediction is {header.width}x{header.height}, more than "
                                  f"{LIMITS.max_mask_side} on a side")
    return header


def export_upload(benchmark: Benchmark, frames: Sequence[Frame], dataset_id: str, predictions: Path, out: Path,
                  space: LabelSpace) -> dict[str, int]:
    """Write the upload of `predictions` (a folder or archive of masks in `space`, checked by the
    intake: every problem refused in one error, nothing written) to the zip `out`, atomically;
    returns each frame's void pixels (void_pixels)."""
    size = benchmark.evaluation_size
    void: dict[str, int] = {}
    problems = Problems()
    with open_predictions(predictions, frames, exact=True, problems=problems) as masks, atomic_path(out) as partial:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as upload:
            for frame in frames:
                if not masks.listed(frame):
                    continue
                try:
                    data, mask = upload_member(masks, frame, size)
                except Problem as problem:
                    problems.add_problem(problem)
                    continue
                void[frame.frame_id] = void_pixels(value_histogram(mask), space)
                upload.writestr(frame.prediction, data)
            if size is None:
                upload.writestr(UPLOAD_META, dataset_id + "\n")
        problems.refuse(predictions, REFUSED)  # inside atomic_path: a refusal leaves no upload
    return void


def upload_member(masks: Predictions, frame: Frame, size: tuple[int, int] | None) -> tuple[bytes, np.ndarray]:
    """A frame's mask as the upload holds it, its bytes and pixels: checked, and resized to the
    evaluation size where the benchmark has one (the challenge's server takes 1280x720 only)."""
    data = mask_bytes(masks, frame)
    where = masks.where(frame)
    # Before any pixel is decoded: without the labels, a size is bounded by the evaluation size
    # where the benchmark has one, else by the bound on a side.
    header = mask_header(data, where) if size else bounded_header(data, where)
    check_prediction_header(data, where, size or header.size, size, "the evaluation size")
    with kind_of(UNDECODABLE):
        mask = decode_mask(data, where, "prediction")
    if size is None or header.size == size:
        return data, mask
    mask = np.asarray(Image.fromarray(mask).resize(size, Image.Resampling.NEAREST))
    return png(mask), mask


def check_upload(
    benchmark: Benchmark,
    frames: Sequence[Frame],
    dataset_id: str,
    upload: Path,
    space: LabelSpace,
    data: Path | None = None,
) -> dict[str, Any]:
    """Refuse an upload that the harness would refuse, or that does not fit the manifest: every
    problem (the listing's, the stated dataset's, every frame's) in one error, by kind
    (segbench.io.problems). Returns a summary (frames, values seen, each frame's void pixels:
    accepted, listed by void_warnings)."""
    if not zipfile.is_zipfile(upload):
        raise SegbenchError(f"{upload}: an upload must be a zip archive")
    problems = Problems()
    seen: set[int] = set()
    void: dict[str, int] = {}
    lut = space.raw_lut()
    with ArchivePredictions(upload, frames, exact=True, problems=problems) as masks:
        try:
            stated = masks.metadata()
        except SegbenchError as exc:
            problems.add(STATED_DATASET, str(exc))
        else:
            if stated is None and benchmark.evaluation_size is None:
                problems.add(STATED_DATASET, f"{upload}: no {UPLOAD_META} (the dataset_id the upload was made for)")
            elif stated is not None and stated != dataset_id:
                problems.add(STATED_DATASET, f"{upload}: {UPLOAD_META} says {stated}, the manifest is {dataset_id}")
        for frame in frames:
            if not masks.listed(frame):  # missing or refused: a problem of the listing already
                continue
            try:
                mask = upload_mask(benchmark, masks, frame, data)
            except Problem as problem:
                problems.add_problem(problem)
                continue
            histogram = value_histogram(mask)
            values = {int(v) for v in np.flatnonzero(histogram)}
            bad = sorted(v for v in values if lut[v] == INVALID)
            if bad:
                problems.add(OUTSIDE_SPACE, f"{masks.where(frame)}: frame {frame.frame_id}: values {bad} are outside "
                                            f"'{space.name}'")
            seen |= values
            void[frame.frame_id] = void_pixels(histogram, space)
    problems.refuse(upload, "upload refused")
    return {"frames": len(frames), "dataset_id": dataset_id, "values": sorted(seen), "void_pixels": void}


def upload_mask(benchmark: Benchmark, masks: ArchivePredictions, frame: Frame, data: Path | None) -> np.ndarray:
    """A frame's mask, its size checked against what is known without labels: the evaluation
    size, else the image's (with the data), else only the bound on a side; every failure of the
    mask a Problem of its kind."""
    where = masks.where(frame)
    if benchmark.evaluation_size is not None:
        reference = benchmark.evaluation_size
        header = mask_header(mask_bytes(masks, frame), where)
        if header.size != reference:
            raise Problem(WRONG_SIZE, f"{where}: prediction is {header.width}x{header.height}; the benchmark's "
                                      f"uploads are {reference[0]}x{reference[1]}")
    elif data is not None:
        reference = image_size(Path(data) / frame.image)
    else:
        reference = bounded_header(mask_bytes(masks, frame), where).size
    return read_prediction(masks, frame, (reference[1], reference[0]), None)
