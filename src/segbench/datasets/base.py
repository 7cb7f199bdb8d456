"""The frame record every dataset reader produces."""

from collections.abc import Mapping
from dataclasses import dataclass, field
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
