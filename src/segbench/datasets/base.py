"""The frame record every dataset reader produces."""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path


@dataclass(frozen=True)
class Frame:
    frame_id: str  # unique within the dataset
    group_id: str  # the independent unit that must not cross splits (wall, drive, user)
    split: str
    image: Path  # absolute or relative to the working directory
    label: Path  # for an unlabelled frame, where its label would be (nothing is there)
    # The prediction mask's path inside a predictions folder: the format's naming rule, which
    # inference writes and scoring reads. By default "<frame_id>.png".
    prediction: str = ""
    # False for a frame of a split that ships without labels (IDD20K's test split): it can be
    # inferred and exported, never audited for its label or scored.
    labelled: bool = True
    # What the dataset says about the frame beyond its files (EasyPortrait's meta columns, Painting
    # Vision's extra frames.csv columns, IDD's part): column -> text, what slices are made of.
    meta: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.prediction:
            object.__setattr__(self, "prediction", f"{self.frame_id}.png")


def mark_unlabelled_splits(frames: Sequence[Frame]) -> list[Frame]:
    """The frames, those of a split without a single label file marked unlabelled (a public test
    split, shipped without labels). A split with some labels missing stays labelled: the audit
    and the manifest name each frame whose label is missing. Anything at a label's path (a folder,
    a broken link) counts as there, for those checks to name it."""
    labelled_splits = {f.split for f in frames if os.path.lexists(f.label)}
    return [f if f.split in labelled_splits else replace(f, labelled=False) for f in frames]
