"""The dataset audit: a stage of its own that must pass before any evaluation starts.

It works on every on-disk format through the format's reader (datasets.format.DatasetFormat):
the reader lists the frames, the paths a frame's image may have and the files no frame owns;
the checks themselves are the same for every format.

Errors (the run stops): a group (wall, drive, user) in more than one split; the same image
bytes in more than one split; a frame without image or label, or with two images; a file in the
dataset's folders that no frame owns; a label whose size differs from its image's; label values outside
the ground-truth space; a label that is not single-channel 8-bit; an unreadable or truncated
file; an empty evaluated split (or no frames at all); a format's own errors (e.g. an IDD mask
out of date with its polygons).

Warnings (reported, not fatal): near-duplicate frames across splits (8x8 average hash, Hamming
distance <= NEAR_DUPLICATE_BITS) and classes of the ground-truth space absent from a split.

A copy without images by design (its layout says "images": "absent": IDD's gtFine/ alone, enough
to score predictions) is audited from its labels: the report says, as a warning, which checks
that leaves out (IMAGE_CHECKS). The frames of an unlabelled split (IDD20K's public test split)
have their images checked, not their labels; evaluating such a split is an error.

Every image and label is decoded exactly once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ..core.benchmark import Benchmark
from ..core.labels import RAW_VALUES
from ..datasets import benchmark_format
from ..datasets.base import Frame
from ..datasets.format import DatasetFormat
from ..errors import SegbenchError
from ..io import maskio
from ..io.fileio import sha256_file
from .audit_report import ERROR, WARNING, AuditReport, Finding

NEAR_DUPLICATE_BITS = 2
HASH_SIDE = 8

# What needs the images, so is not checked on a copy without them.
IMAGE_CHECKS = (
    "a missing, unreadable or second image",
    "a label's size against its image's",
    "identical or near-identical images across splits",
)


def average_hash(image: Image.Image) -> int:
    """64-bit average hash: greyscale, box-filtered to 8x8, bit set where a pixel exceeds the mean.

    Bits are read row by row, the first pixel being the most significant bit.
    """
    small = np.asarray(image.convert("L").resize((HASH_SIDE, HASH_SIDE), Image.Resampling.BOX), dtype=np.float64)
    bits = (small > small.mean()).ravel()
    return int("".join("1" if b else "0" for b in bits), 2)


@dataclass
class _Seen:
    """What decoding one frame's files told us."""

    image_sha: str | None = None
    image_hash: int | None = None
    image_size: tuple[int, int] | None = None
    label_size: tuple[int, int] | None = None
    histogram: np.ndarray | None = None  # counts of the 256 raw values


def _size(wh: tuple[int, int]) -> str:
    return f"{wh[0]}x{wh[1]}"


def group_noun(benchmark: Benchmark) -> str:
    """What the benchmark's group is called in messages: wall_id -> wall, drive -> drive."""
    return benchmark.group_key.removesuffix("_id") or benchmark.group_key


class _Auditor:
    def __init__(self, data_dir: Path, benchmark: Benchmark, reader: DatasetFormat, images: bool) -> None:
        self.data_dir = data_dir
        self.benchmark = benchmark
        self.reader = reader
        self.images = images  # False: the copy has no images by design
        self.noun = group_noun(benchmark)
        self.allowed = np.zeros(RAW_VALUES, dtype=bool)
        self.allowed[benchmark.ground_truth.allowed_values()] = True
        self.findings: list[Finding] = []

    def add(
        self, code: str, severity: str, message: str, frames: Sequence[str] = (), walls: Sequence[str] = ()
    ) -> None:
        self.findings.append(Finding(code, severity, message, tuple(sorted(frames)), tuple(sorted(set(walls)))))

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.data_dir).as_posix()
        except ValueError:
            return str(path)

    def alternatives(self, paths: Sequence[Path]) -> str:
        """'images/a.jpg or .png': the first path, then the others (only the suffix when that is all that differs)."""
        first = paths[0]
        others = [p.suffix if p.with_suffix("") == first.with_suffix("") else self.rel(p) for p in paths[1:]]
        return " or ".join([self.rel(first), *others])

    def frame_files(self, frame: Frame) -> _Seen:
        seen = _Seen()
        who = f"frame '{frame.frame_id}' ({self.noun} '{frame.group_id}', split {frame.split})"
        images: list[Path] = []
        if self.images:
            candidates = self.reader.image_candidates(self.data_dir, frame)
            images = [p for p in candidates if p.is_file()]
            if not images:
                self.add(
                    "missing-image",
                    ERROR,
                    f"{who}: no image ({self.alternatives(candidates)})",
                    [frame.frame_id],
                    [frame.group_id],
                )
            elif len(images) > 1:
                self.add(
                    "two-images",
                    ERROR,
                    f"{who}: two images ({', '.join(self.rel(p) for p in images)}); keep one",
                    [frame.frame_id],
                    [frame.group_id],
                )
        if images:
            try:
                image = maskio.open_image(frame.image)
                seen.image_sha = sha256_file(frame.image)
            except SegbenchError as exc:
                self.add("unreadable-file", ERROR, f"{who}: {exc}", [frame.frame_id], [frame.group_id])
            else:
                seen.image_size = image.size
                seen.image_hash = average_hash(image)
        if not frame.labelled:
            return seen
        if not frame.label.is_file():
            self.add(
                "missing-label", ERROR, f"{who}: no label ({self.rel(frame.label)})", [frame.frame_id], [frame.group_id]
            )
            return seen
        try:
            label = maskio.open_image(frame.label)
        except SegbenchError as exc:
            self.add("unreadable-file", ERROR, f"{who}: {exc}", [frame.frame_id], [frame.group_id])
            return seen
        if label.mode not in maskio.MASK_MODES:
            self.add(
                "label-not-single-channel",
                ERROR,
                f"{who}: label {self.rel(frame.label)} has mode {label.mode}; expected single-channel 8-bit (L or P)",
                [frame.frame_id],
                [frame.group_id],
            )
            return seen
        seen.label_size = label.size
        seen.histogram = np.bincount(np.asarray(label).ravel(), minlength=RAW_VALUES)
        if seen.image_size is not None and seen.image_size != seen.label_size:
            self.add(
                "label-size-mismatch",
                ERROR,
                f"{who}: label {self.rel(frame.label)} is {_size(seen.label_size)} but image "
                f"{self.rel(frame.image)} is {_size(seen.image_size)} (width x height)",
                [frame.frame_id],
                [frame.group_id],
            )
        bad = np.flatnonzero((seen.histogram > 0) & ~self.allowed)
        if bad.size:
            values = ", ".join(f"{v} ({seen.histogram[v]} px)" for v in bad)
            self.add(
                "label-values",
                ERROR,
                f"{who}: label {self.rel(frame.label)} holds values outside the ground truth "
                f"'{self.benchmark.ground_truth.name}' (allowed: {_ranges(np.flatnonzero(self.allowed))}): {values}",
                [frame.frame_id],
                [frame.group_id],
            )
        return seen

    def cross_split(self, frames: Sequence[Frame], seen: dict[str, _Seen]) -> None:
        by_group: dict[str, list[Frame]] = defaultdict(list)
        by_sha: dict[str, list[Frame]] = defaultdict(list)
        for f in frames:
            by_group[f.group_id].append(f)
            if seen[f.frame_id].image_sha is not None:
                by_sha[seen[f.frame_id].image_sha].append(f)
        for group, members in sorted(by_group.items()):
            if len({f.split for f in members}) > 1:
                self.add(
                    "group-crosses-splits",
                    ERROR,
                    f"{self.noun} '{group}' is in more than one split: {_by_split(members)}",
                    [f.frame_id for f in members],
                    [group],
                )
        for sha, members in sorted(by_sha.items()):
            if len({f.split for f in members}) > 1:
                self.add(
                    "image-bytes-across-splits",
                    ERROR,
                    f"identical image bytes (sha256 {sha[:12]}) in more than one split: {_by_split(members, self.noun)}",
                    [f.frame_id for f in members],
                    [f.group_id for f in members],
                )
        self.near_duplicates(frames, seen)

    def near_duplicates(self, frames: Sequence[Frame], seen: dict[str, _Seen]) -> None:
        hashed = [f for f in frames if seen[f.frame_id].image_hash is not None]
        if len(hashed) < 2:
            return
        hashes = np.array([seen[f.frame_id].image_hash for f in hashed], dtype=np.uint64)
        splits = np.array([f.split for f in hashed])
        shas = [seen[f.frame_id].image_sha for f in hashed]
        for i in range(len(hashed) - 1):
            distance = np.bitwise_count(hashes[i + 1 :] ^ hashes[i])
            close = np.flatnonzero((distance <= NEAR_DUPLICATE_BITS) & (splits[i + 1 :] != splits[i])) + i + 1
            for j in close:
                if shas[i] == shas[j]:
                    continue  # identical bytes: already an error
                a, b = hashed[i], hashed[j]
                self.add(
                    "near-duplicate",
                    WARNING,
                    f"frames '{a.frame_id}' ({self.noun} '{a.group_id}', {a.split}) and '{b.frame_id}' "
                    f"({self.noun} '{b.group_id}', {b.split}) look nearly identical "
                    f"(average-hash distance {int(distance[j - i - 1])} of 64 bits)",
                    [a.frame_id, b.frame_id],
                    [a.group_id, b.group_id],
                )

    def absent_classes(self, frames: Sequence[Frame], seen: dict[str, _Seen]) -> None:
        space = self.benchmark.ground_truth
        for split in self.benchmark.splits:
            histograms = [seen[f.frame_id].histogram for f in frames if f.split == split]
            histograms = [h for h in histograms if h is not None]
            if not histograms:
                continue
            total = np.sum(histograms, axis=0)
            absent = [c.name for c in space.classes if total[c.id] == 0]
            if absent:
                self.add(
                    "classes-absent",
                    WARNING,
                    f"split '{split}': {len(absent)} of {space.size} classes of '{space.name}' have no pixel: "
                    + ", ".join(absent),
                )


def _by_split(members: Sequence[Frame], noun: str | None = None) -> str:
    parts = []
    for split in sorted({f.split for f in members}):
        names = sorted(
            f.frame_id if noun is None else f"{f.frame_id} ({noun} {f.group_id})" for f in members if f.split == split
        )
        parts.append(f"{split} ({', '.join(names)})")
    return "; ".join(parts)


def _ranges(values: np.ndarray) -> str:
    """[0,1,2,3,255] -> '0-3, 255'."""
    parts: list[str] = []
    start = prev = None
    for v in [int(x) for x in values] + [None]:
        if start is not None and (v is None or v != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if v is not None and start is None:
            start = v
        prev = v
    return ", ".join(parts)


def audit_dataset(
    data_dir: Path,
    benchmark: Benchmark,
    evaluated_splits: Sequence[str] = (),
    frames: Sequence[Frame] | None = None,
) -> AuditReport:
    """Audit a dataset in the benchmark's on-disk format; `frames` skips re-reading frames.csv.

    A malformed frames.csv raises SegbenchError (there is nothing to audit); every other problem
    is a finding in the returned report.
    """
    data_dir = Path(data_dir)
    reader = benchmark_format(benchmark)
    for split in evaluated_splits:
        benchmark.check_split(split)
    if frames is None:
        frames = reader.read_frames(data_dir, benchmark.splits)
    images = reader.layout(data_dir).get("images") != "absent"
    auditor = _Auditor(data_dir, benchmark, reader, images)
    if not frames:
        auditor.add("empty-dataset", ERROR, f"{data_dir}: {reader.listing} lists no frames")
    else:
        for split in evaluated_splits:
            members = [f for f in frames if f.split == split]
            if not members:
                auditor.add("empty-split", ERROR, f"the evaluated split '{split}' has no frames")
            elif not all(f.labelled for f in members):
                auditor.add(
                    "unlabelled-split",
                    ERROR,
                    f"the evaluated split '{split}' has no labels: its frames can be inferred and exported, not evaluated",
                )
    if not images:
        auditor.add(
            "images-absent",
            WARNING,
            f"this copy has no images: audited from its labels alone; not checked without images: "
            f"{'; '.join(IMAGE_CHECKS)}. Images are needed for inference only",
        )
    seen = {f.frame_id: auditor.frame_files(f) for f in frames}
    for path in reader.list_unlisted_files(data_dir, frames):
        kind = "folder" if path.is_dir() else "file"
        auditor.add("unlisted-file", ERROR, f"{auditor.rel(path)}: {kind} not listed in {reader.listing}")
    auditor.cross_split(frames, seen)
    auditor.absent_classes(frames, seen)
    for finding in reader.extra_findings(data_dir, frames):
        auditor.add(finding.code, finding.severity, finding.message, finding.frames, finding.groups)
    noun = group_noun(benchmark)
    counts = {
        split: {
            "frames": sum(f.split == split for f in frames),
            f"{noun}s": len({f.group_id for f in frames if f.split == split}),
        }
        for split in benchmark.splits
    }
    return AuditReport(data_dir, benchmark.name, tuple(evaluated_splits), counts, auditor.findings, noun)
