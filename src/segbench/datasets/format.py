"""What every on-disk format's reader provides: the one interface the rest of segbench uses.

A reader module (painting_vision.py, idd.py, easyportrait.py) ends with a FORMAT instance. The
audit, provenance and the workflow's plan only ever call these functions, so a new format is a
new reader module plus one line in datasets/__init__.py; nothing in scoring or audit changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .base import Frame


@dataclass(frozen=True)
class FormatFinding:
    """A format-specific audit finding (e.g. an IDD mask out of date with its polygons)."""

    code: str
    severity: str  # "error" or "warning"
    message: str
    frames: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()


def frame_png(frame_id: str) -> str:
    """The default prediction name of a frame (Frame.prediction's default)."""
    return f"{frame_id}.png"


def no_findings(data_dir: Path, frames: Sequence[Frame]) -> list[FormatFinding]:
    return []


def no_layout(data_dir: Path) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class DatasetFormat:
    name: str
    # What lists the frames, as the audit names it ("frames.csv", "meta.csv", ...).
    listing: str
    # Every frame, sorted by frame_id. Raises SegbenchError naming the file for a malformed
    # listing; never opens images or labels (a missing file is a finding of the audit).
    read_frames: Callable[[Path, Sequence[str]], list[Frame]]
    # The paths a frame's image may have, in order of preference; two existing is an audit error.
    image_candidates: Callable[[Path, Frame], list[Path]]
    # Entries of the data folder that belong to no frame (the audit reports each as an error).
    list_unlisted_files: Callable[[Path, Sequence[Frame]], list[Path]]
    # The files that list the frames or that the labels are made from (the workflow's inputs
    # beside images and labels), given the frames' label paths (strings: the workflow's plan
    # passes 20,000 of them at every start, and only IDD's polygons need them as paths).
    index_files: Callable[[Path, Sequence[str | Path]], list[Path]]
    # Checks only this format needs, run by the audit after the common ones.
    extra_findings: Callable[[Path, Sequence[Frame]], list[FormatFinding]] = no_findings
    # A frame's prediction mask name inside a predictions folder or upload (Frame.prediction),
    # from its frame_id alone: what an upload is checked against without the data.
    prediction_name: Callable[[str], str] = frame_png
    # What the manifest records about how this copy is laid out, beside its frames (e.g. which
    # release's meta file listed them, or that the images are absent); empty for most formats.
    layout: Callable[[Path], dict[str, str]] = no_layout
