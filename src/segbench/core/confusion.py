"""Confusion counts: one joint histogram of raw (ground truth, prediction) values per frame.

Counts are kept in the raw 256 x 256 value space, so that scoring needs no label space and
every interpretation (void, folding, label-space mapping) is a lookup table applied later.
Pure computation: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .labels import INVALID, RAW_VALUES

CELLS = RAW_VALUES * RAW_VALUES


def joint_histogram(gt: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """(256, 256) int64 counts of (gt value, pred value) pairs, in one bincount.

    The combined index is built in uint16 so no frame-sized int64 array is ever made.
    """
    if gt.shape != pred.shape:
        raise ValueError(f"shapes differ: ground truth {gt.shape}, prediction {pred.shape}")
    index = (gt.astype(np.uint16) << 8) | pred
    return np.bincount(index.ravel(), minlength=CELLS).reshape(RAW_VALUES, RAW_VALUES)


def value_histogram(mask: np.ndarray) -> np.ndarray:
    """(256,) int64 counts of each raw value."""
    return np.bincount(mask.ravel(), minlength=RAW_VALUES)


def histogram_cells(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero cells of a (256, 256) joint histogram: (uint16 `gt << 8 | pred` ascending, int64 counts)."""
    flat = hist.reshape(-1)
    cells = np.flatnonzero(flat)
    return cells.astype(np.uint16), flat[cells].astype(np.int64)


def constant_prediction(gt_histogram: np.ndarray, value: int) -> np.ndarray:
    """The joint histogram of a predictor that outputs `value` everywhere, from GT counts alone."""
    hist = np.zeros((RAW_VALUES, RAW_VALUES), dtype=np.int64)
    hist[:, value] = gt_histogram
    return hist


BAND_TALLIES = 3  # per class: pixels in its ground-truth band, in its predicted band, in both


def kept_in_order(new_frame: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Indices of the cells whose frame `new_frame` keeps (>= 0), ordered by their new frame."""
    kept = np.flatnonzero(new_frame[frame] >= 0)
    order = new_frame[frame[kept]]
    if np.all(order[1:] >= order[:-1]):  # frames kept in their order (a part of sorted frames): no sort
        return kept
    return kept[np.argsort(order, kind="stable")]


@dataclass(frozen=True)
class BandCounts:
    """Per frame and band space, the pixels in the ground truth's or the prediction's boundary band
    (boundary.band_cells): raw values and which bands, so any label space's tallies follow."""

    spaces: tuple[str, ...] = ()  # the label spaces the bands were drawn in
    frame: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    space: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8))  # index into spaces
    flags: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))  # boundary.GT_BAND | PRED_BAND
    gt: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    pred: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def from_cells(cls, spaces: Sequence[str], per_frame: Sequence[Sequence[tuple[np.ndarray, np.ndarray]]]) -> BandCounts:
        """per_frame[f][s]: frame f's band cells in space s, (`flags << 16 | gt << 8 | pred`, counts)."""
        parts = [(f, s, cells, counts) for f, frame in enumerate(per_frame) for s, (cells, counts) in enumerate(frame)]
        index = np.concatenate([c for *_, c, _ in parts] or [np.zeros(0, np.uint32)]).astype(np.uint32)
        sizes = [len(c) for *_, c, _ in parts]
        return cls(
            spaces=tuple(spaces),
            frame=np.repeat(np.array([f for f, *_ in parts], np.int32), sizes).astype(np.int32),
            space=np.repeat(np.array([s for _, s, *_ in parts], np.int8), sizes).astype(np.int8),
            flags=(index >> 16).astype(np.uint8),
            gt=((index >> 8) & 0xFF).astype(np.uint8),
            pred=(index & 0xFF).astype(np.uint8),
            count=np.concatenate([n for *_, n in parts] or [np.zeros(0, np.int64)]).astype(np.int64),
        )

    def tallies(self, space: str, row_lut: np.ndarray, col_lut: np.ndarray, size: int, frames: int) -> np.ndarray:
        """(frames, 3, size): per frame and class of `space`, the pixels in its ground-truth band,
        in its predicted band, in both. As in the confusion matrices, a pixel whose ground truth
        or prediction maps below 0 (ground-truth void, a dropped class) counts nowhere, and one
        predicted as no class (column `size`, labels.no_class_column) is in no predicted band: a
        miss of its ground-truth class's band."""
        if space not in self.spaces:
            raise KeyError(space)
        keep = self.space == self.spaces.index(space)
        r, c = row_lut[self.gt[keep]], col_lut[self.pred[keep]]
        flags, frame, count = self.flags[keep], self.frame[keep], self.count[keep]
        valid = (r >= 0) & (c >= 0)
        out = np.zeros((frames, BAND_TALLIES, size), np.int64)
        for tally, (chosen, cls) in enumerate((((flags & 1) > 0, r), ((flags & 2) > 0, c), ((flags == 3) & (r == c), r))):
            chosen &= valid & (cls < size)
            np.add.at(out, (frame[chosen], tally, cls[chosen]), count[chosen])
        return out

    def renumbered(self, new_frame: np.ndarray) -> BandCounts:
        """The cells of the frames `new_frame` (old index -> new, -1: left out) keeps, renumbered."""
        keep = kept_in_order(new_frame, self.frame)
        return BandCounts(self.spaces, new_frame[self.frame[keep]].astype(np.int32), self.space[keep],
                          self.flags[keep], self.gt[keep], self.pred[keep], self.count[keep])

    @classmethod
    def merge(cls, parts: Sequence[BandCounts], offsets: Sequence[int]) -> BandCounts:
        spaces = {p.spaces for p in parts}
        if len(spaces) > 1:
            raise ValueError(f"shards counted boundary bands in different label spaces: {sorted(spaces)}")
        return cls(
            spaces=spaces.pop() if spaces else (),
            frame=np.concatenate([p.frame + o for p, o in zip(parts, offsets)] or [np.zeros(0, np.int32)]).astype(np.int32),
            space=np.concatenate([p.space for p in parts] or [np.zeros(0, np.int8)]),
            flags=np.concatenate([p.flags for p in parts] or [np.zeros(0, np.uint8)]),
            gt=np.concatenate([p.gt for p in parts] or [np.zeros(0, np.uint8)]),
            pred=np.concatenate([p.pred for p in parts] or [np.zeros(0, np.uint8)]),
            count=np.concatenate([p.count for p in parts] or [np.zeros(0, np.int64)]),
        )


@dataclass(frozen=True)
class FrameCounts:
    """The non-zero cells of each frame's joint histogram, for a list of frames."""

    frame_ids: tuple[str, ...]
    frame: np.ndarray  # int32 index into frame_ids, one per cell
    gt: np.ndarray  # uint8 raw ground-truth value
    pred: np.ndarray  # uint8 raw predicted value
    count: np.ndarray  # int64
    bands: BandCounts = field(default_factory=BandCounts)  # for boundary IoU; empty when not counted

    @classmethod
    def from_cells(
        cls, frame_ids: Sequence[str], cells: Sequence[tuple[np.ndarray, np.ndarray]], bands: BandCounts | None = None
    ) -> FrameCounts:
        """From each frame's (cells, counts): cells are `gt << 8 | pred` (see histogram_cells)."""
        index = np.concatenate([c for c, _ in cells] or [np.zeros(0, np.uint16)]).astype(np.uint16)
        return cls(
            frame_ids=tuple(frame_ids),
            frame=np.repeat(np.arange(len(cells), dtype=np.int32), [len(c) for c, _ in cells]),
            gt=(index >> 8).astype(np.uint8),
            pred=(index & 0xFF).astype(np.uint8),
            count=np.concatenate([n for _, n in cells] or [np.zeros(0, np.int64)]).astype(np.int64),
            bands=bands if bands is not None else BandCounts(),
        )

    @classmethod
    def from_histograms(cls, frame_ids: Sequence[str], histograms: Sequence[np.ndarray]) -> FrameCounts:
        return cls.from_cells(frame_ids, [histogram_cells(h) for h in histograms])

    @classmethod
    def merge(cls, parts: Sequence[FrameCounts]) -> FrameCounts:
        """Concatenate shards; a frame present in two shards is an error (it would count twice)."""
        frame_ids: list[str] = []
        offsets = []
        for part in parts:
            offsets.append(len(frame_ids))
            frame_ids.extend(part.frame_ids)
        if len(set(frame_ids)) != len(frame_ids):
            twice = sorted({f for f in frame_ids if frame_ids.count(f) > 1})
            raise ValueError(f"frames counted in more than one shard: {twice[:10]}")
        return cls(
            frame_ids=tuple(frame_ids),
            frame=np.concatenate([p.frame + o for p, o in zip(parts, offsets)] or [np.zeros(0, np.int32)]).astype(np.int32),
            gt=np.concatenate([p.gt for p in parts] or [np.zeros(0, np.uint8)]),
            pred=np.concatenate([p.pred for p in parts] or [np.zeros(0, np.uint8)]),
            count=np.concatenate([p.count for p in parts] or [np.zeros(0, np.int64)]),
            bands=BandCounts.merge([p.bands for p in parts], offsets),
        )

    def subset(self, frame_ids: Sequence[str]) -> FrameCounts:
        """The counts of `frame_ids` alone, in that order (a slice's frames: nothing re-scored)."""
        position = {f: i for i, f in enumerate(self.frame_ids)}
        unknown = [f for f in frame_ids if f not in position]
        if unknown:
            raise ValueError(f"frames not in these counts: {unknown[:10]}")
        new_frame = np.full(len(self.frame_ids), -1, np.int64)
        new_frame[[position[f] for f in frame_ids]] = np.arange(len(frame_ids))
        keep = kept_in_order(new_frame, self.frame)
        return FrameCounts(tuple(frame_ids), new_frame[self.frame[keep]].astype(np.int32), self.gt[keep],
                           self.pred[keep], self.count[keep], self.bands.renumbered(new_frame))

    def total(self) -> np.ndarray:
        """The (256, 256) histogram summed over all frames."""
        hist = np.zeros((RAW_VALUES, RAW_VALUES), dtype=np.int64)
        np.add.at(hist, (self.gt, self.pred), self.count)
        return hist

    def reduced(self, row_lut: np.ndarray, col_lut: np.ndarray, rows: int, cols: int) -> np.ndarray:
        """The summed confusion matrix in a label space: cells whose row or column maps below 0
        vanish (a report's columns give a void prediction a column of its own: never below 0)."""
        r, c = row_lut[self.gt], col_lut[self.pred]
        keep = (r >= 0) & (c >= 0)
        matrix = np.zeros((rows, cols), dtype=np.int64)
        np.add.at(matrix, (r[keep], c[keep]), self.count[keep])
        return matrix

    def reduced_per_frame(self, row_lut: np.ndarray, col_lut: np.ndarray, rows: int, cols: int) -> np.ndarray:
        """(frames, rows, cols) confusion matrices, one per frame, in a label space."""
        r, c = row_lut[self.gt], col_lut[self.pred]
        keep = (r >= 0) & (c >= 0)
        matrices = np.zeros((len(self.frame_ids), rows, cols), dtype=np.int64)
        np.add.at(matrices, (self.frame[keep], r[keep], c[keep]), self.count[keep])
        return matrices


def invalid_values(cells: np.ndarray, gt_lut: np.ndarray, pred_lut: np.ndarray) -> tuple[list[int], list[int]]:
    """Raw values in a frame's cells (`gt << 8 | pred`) that the lookup tables call INVALID (gt, pred)."""
    gt_values, pred_values = cells >> 8, cells & 0xFF
    return (
        sorted({int(v) for v in gt_values[gt_lut[gt_values] == INVALID]}),
        sorted({int(v) for v in pred_values[pred_lut[pred_values] == INVALID]}),
    )
