"""The frame record every dataset reader produces."""

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Frame:
    frame_id: str  # unique within the dataset; also the prediction file's stem
    group_id: str  # the independent unit that must not cross splits (wall, drive, user)
    split: str
    image: Path  # absolute or relative to the working directory
    label: Path
