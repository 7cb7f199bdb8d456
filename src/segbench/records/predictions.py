"""A set of prediction masks named for the frames (segbench.records.intake opens one): its listing
checked against the evaluated frames, a frame's PNG bytes read on demand."""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import REFUSED_ENTRY
from ..io.problems import Problems

MISSING = "missing predictions"
EXTRA = "extra files"
GROUND_TRUTH = "masks that are their frame's ground-truth label byte for byte (never scored as a prediction)"
REFUSED = "predictions refused"  # what a refusal of predictions says after their path


def folders_of(names: Iterable[str]) -> set[str]:
    """Every folder the naming rule uses ('drive/a.png' -> {'drive'}, 'a/b/c.png' -> {'a/b', 'a'}):
    the names are relative, of parts neither empty nor '.' (io.archives.bad_name), so a folder
    is a name's text before one of its slashes (string operations: pathlib's cost a 1,600-frame
    upload's listing 10 ms)."""
    folders: set[str] = set()
    for name in names:
        folder = name.rpartition("/")[0]
        while folder and folder not in folders:  # a folder's own folders are in once it is
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    return folders


class Predictions(ABC):
    """A validated set of prediction masks: `read(frame)` gives a frame's PNG bytes.

    Given `problems`, the listing's are added to it for the caller to refuse with its own (every
    problem of an upload in one error) and only the frames `listed` are to be read; without, the
    listing's problems are refused at once."""

    source: Path

    def __init__(self, source: Path, frames: Sequence[Frame], exact: bool, problems: Problems | None = None) -> None:
        self.source = Path(source)
        self.expected = {f.prediction: f for f in frames}
        if len(self.expected) != len(frames):
            raise SegbenchError(f"{self.source}: two evaluated frames share a prediction name")
        self.exact = exact
        self.problems = Problems() if problems is None else problems
        self.gathered = problems is not None
        self.unreadable: set[str] = set()  # prediction names missing or refused by the listing

    def where(self, frame: Frame) -> str:
        return f"{self.source}/{frame.prediction}"

    def listed(self, frame: Frame) -> bool:
        """Whether the listing found the frame's mask, a plain entry within the limits."""
        return frame.prediction not in self.unreadable

    def refuse_entry(self, name: str, message: str) -> None:
        """An entry of the wrong kind (a link, a nested folder, a bad name): a problem, never read."""
        self.problems.add(REFUSED_ENTRY, message)
        self.unreadable.add(name)

    def check_listing(self, present: set[str]) -> None:
        """Missing (and, when exact, extra) predictions; refused at once unless they are gathered."""
        for name, f in sorted(self.expected.items()):
            if name not in present:
                self.problems.add(MISSING, f"missing prediction for frame {f.frame_id}: {self.source}/{name}")
                self.unreadable.add(name)
        if self.exact:
            for name in sorted(present - set(self.expected)):
                self.problems.add(EXTRA, f"extra file not matching any evaluated frame: {self.source}/{name}")
        if not self.gathered:
            self.problems.refuse(self.source, REFUSED)

    @abstractmethod
    def read(self, frame: Frame) -> bytes:
        """The frame's mask bytes (at most LIMITS.max_mask_bytes + 1 of them)."""

    @abstractmethod
    def size(self, frame: Frame) -> int:
        """The frame's mask size in bytes, as listed (nothing read)."""

    def check_not_ground_truth(self) -> None:
        """Masks that are byte for byte their frame's ground-truth label (the labels folder
        itself, or a copy of its files), each a problem (refused at once unless problems are
        gathered): the ground truth is never scored as a prediction. Only a mask of the label's
        size is read, so honest predictions cost one listing; a label re-encoded is not caught
        (its bytes differ: docs/security.md)."""
        for _, f in sorted(self.expected.items()):
            if f.labelled and self.listed(f) and self.is_label(f):
                self.problems.add(GROUND_TRUTH, f"frame {f.frame_id}: {self.where(f)} is {f.label}")
        if not self.gathered:
            self.problems.refuse(self.source, REFUSED)

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
