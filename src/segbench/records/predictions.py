"""A set of prediction masks named for the frames (segbench.records.intake opens one): its listing
checked against the evaluated frames, a frame's PNG bytes read on demand."""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import refuse


def folders_of(names: Iterable[str]) -> set[str]:
    """Every folder the naming rule uses ('drive/a.png' -> {'drive'})."""
    return {str(parent) for n in names for parent in PurePosixPath(n).parents if str(parent) != "."}


class Predictions(ABC):
    """A validated set of prediction masks: `read(frame)` gives a frame's PNG bytes."""

    source: Path

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool) -> None:
        self.source = Path(source)
        self.expected = {f.prediction: f for f in frames}
        if len(self.expected) != len(frames):
            raise SegbenchError(f"{self.source}: two evaluated frames share a prediction name")
        self.exact = exact

    def where(self, frame: Frame) -> str:
        return f"{self.source}/{frame.prediction}"

    def check_listing(self, present: set[str], kinds: list[str]) -> None:
        """Refuse entries of the wrong kind, and missing (and, when exact, extra) predictions."""
        problems = sorted(kinds)
        problems += [
            f"missing prediction for frame {f.frame_id}: {self.source}/{name}"
            for name, f in sorted(self.expected.items())
            if name not in present
        ]
        if self.exact:
            problems += [
                f"extra file not matching any evaluated frame: {self.source}/{name}"
                for name in sorted(present - set(self.expected))
            ]
        refuse(self.source, "predictions do not match the evaluated frames", problems)

    @abstractmethod
    def read(self, frame: Frame) -> bytes:
        """The frame's mask bytes (at most LIMITS.max_mask_bytes + 1 of them)."""

    @abstractmethod
    def size(self, frame: Frame) -> int:
        """The frame's mask size in bytes, as listed (nothing read)."""

    def check_not_ground_truth(self) -> None:
        """Refuse masks that are byte for byte their frame's ground-truth label (the labels folder
        itself, or a copy of its files), naming the frames. Only a mask of the label's size is
        read, so honest predictions cost one listing; a label re-encoded is not caught (its bytes
        differ: docs/security.md)."""
        copies = [f for _, f in sorted(self.expected.items()) if f.labelled and self.is_label(f)]
        if copies:
            named = [f"frame {f.frame_id}: {self.where(f)} is {f.label}" for f in copies[:20]]
            more = [f"... and {len(copies) - 20} more"] if len(copies) > 20 else []
            raise SegbenchError(
                f"{self.source}: {len(copies)} mask(s) are byte for byte the frames' ground-truth labels; refusing "
                "to score the ground truth as a prediction:\n  " + "\n  ".join(named + more)
            )

    def is_label(self, frame: Frame) -> bool:
        try:
            label = os.stat(frame.label)
        except OSError:
            return False  # no label at hand (an upload checked without data): nothing to compare
        if not stat.S_ISREG(label.st_mode) or label.st_size != self.size(frame):
            return False
        with open(frame.label, "rb") as stream:
            return stream.read() == self.read(frame)

    def close(self) -> None:
        """Release the archive (a folder holds nothing open)."""

    def __enter__(self) -> Predictions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
