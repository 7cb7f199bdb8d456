"""A frame's ground truth as the scoring pass reads it: decoded from its label file, or kept.

A scorer that lives long (the server's worker) scores every upload of a phase against the same
labels, and decoding them and finding their boundary bands again for each upload was half of its
pass over the pixels (docs/performance.md, "Hosted evaluation"). `KeptLabels` keeps each label
decoded at the size it is compared at, with its bands, as runs of one value up to a bound on
memory, and checks the file's size, time and inode on every read, so a label replaced on disk is
decoded again.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image

from ..core.boundary import BandPlan
from ..core.runs import Runs
from ..datasets.base import Frame
from ..io.maskio import read_mask


@dataclass(frozen=True)
class Truth:
    """`stored_shape`: the label's (H, W) in its file, which a prediction's size is checked
    against; `mask`: at the size it is compared at; `bands`: its bands in a plan's spaces
    (BandPlan.truth_flags), when kept, else None (the pass finds them)."""

    stored_shape: tuple[int, int]
    mask: np.ndarray
    bands: np.ndarray | None = None


class LabelReader(Protocol):
    def __call__(self, frame: Frame, evaluation_size: tuple[int, int] | None,
                 bands: BandPlan | None) -> Truth: ...


def resize_nearest(mask: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """`mask` at (width, height) `size` by Pillow's NEAREST (pixel centres); untouched at that size."""
    if (mask.shape[1], mask.shape[0]) == size:
        return mask
    return np.asarray(Image.fromarray(mask).resize(size, Image.Resampling.NEAREST))


def evaluated_truth(gt: np.ndarray, evaluation_size: tuple[int, int] | None) -> np.ndarray:
    """The ground truth at the size it is compared at: the benchmark's evaluation size (e.g.
    IDD's 1280x720) when it has one, whatever its aspect (as the reference does), else its own."""
    return gt if evaluation_size is None else resize_nearest(gt, evaluation_size)


def read_truth(frame: Frame, evaluation_size: tuple[int, int] | None, bands: BandPlan | None = None) -> Truth:
    """The frame's label decoded, its bands left to the pass."""
    gt = read_mask(frame.label)
    return Truth(gt.shape, evaluated_truth(gt, evaluation_size))


@dataclass(frozen=True)
class Kept:
    """A kept label: the file's (size, time, inode) it was read at, its stored shape, its mask and
    bands as runs."""

    version: tuple[int, int, int]
    stored_shape: tuple[int, int]
    mask: Runs
    bands: Runs | None

    @property
    def nbytes(self) -> int:
        return self.mask.nbytes + (0 if self.bands is None else self.bands.nbytes)

    def truth(self) -> Truth:
        return Truth(self.stored_shape, self.mask.expanded(), None if self.bands is None else self.bands.expanded())


class KeptLabels:
    """A LabelReader that keeps what it decodes, with its bands, as runs of one value (core/runs.py:
    about a tenth to a thirtieth of their pixels' bytes), while `budget` bytes of runs hold them.
    Each read expands a kept label into new arrays (about the cost of copying them), so nothing a
    caller does to them changes what is kept. The first labels read stay: the frames of a split
    are read in one order every time, so evicting would decode every label again once the split
    outgrows the budget. A label whose file changed (size, time or inode) is read again and
    replaces what was kept. Thread-safe."""

    def __init__(self, budget: int):
        self.budget, self.used = budget, 0
        self._kept: dict[tuple, Kept] = {}
        self._lock = threading.Lock()

    def __call__(self, frame: Frame, evaluation_size: tuple[int, int] | None, bands: BandPlan | None) -> Truth:
        try:
            stat = os.stat(frame.label)
        except OSError:
            return read_truth(frame, evaluation_size)  # which says what is wrong with the file
        key = (os.fspath(frame.label), evaluation_size, None if bands is None else bands.truth_key)
        version = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        kept = self._kept.get(key)
        if kept is not None and kept.version == version:
            return kept.truth()
        truth = read_truth(frame, evaluation_size)
        if self.used - (0 if kept is None else kept.nbytes) >= self.budget:
            return truth  # no room: its bands are the pass's to find
        truth = Truth(truth.stored_shape, truth.mask, None if bands is None else bands.truth_flags(truth.mask))
        fresh = Kept(version, truth.stored_shape, Runs.of(truth.mask), None if truth.bands is None else Runs.of(truth.bands))
        with self._lock:
            stale = self._kept.pop(key, None)  # the file changed (or another thread read it): this replaces it
            self.used -= 0 if stale is None else stale.nbytes
            if self.used + fresh.nbytes <= self.budget:
                self.used += fresh.nbytes
                self._kept[key] = fresh
        return truth
