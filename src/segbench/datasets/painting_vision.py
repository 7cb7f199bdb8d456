"""Reader for the Painting Vision on-disk format.

    <data>/images/<frame_id>.jpg|.png   RGB frame
    <data>/labels/<frame_id>.png        single-channel uint8 label
    <data>/frames.csv                   frame_id,wall_id,split[,metadata columns...]

The reader parses frames.csv strictly (datasets.listing) and builds Frame records (group_id =
wall_id; columns after the first three, e.g. `lighting`, are the frame's metadata). It never
opens images or labels: a missing, extra or broken file is a finding of the audit, not a reason
to stop reading. It only decides which file a frame's image is (the .jpg or the .png that exists),
and whether a split is unlabelled: one without a single file in labels/ (a test split given out
for an upload) has its frames inferred and exported, never scored (base.mark_unlabelled_splits).
The three may sit in the one folder that unzipping made (io.unpacked); two such folders are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError
from ..io.unpacked import unpacked_root
from .base import Frame, mark_unlabelled_splits
from .format import DatasetFormat
from .listing import Columns, read_listing

FRAMES_CSV = "frames.csv"
IMAGES_DIR = "images"
LABELS_DIR = "labels"
HEADER = ("frame_id", "wall_id", "split")
IMAGE_SUFFIXES = (".jpg", ".png")  # the first is the default when neither file exists
LABEL_SUFFIX = ".png"
LAYOUT = f"{IMAGES_DIR}/<frame_id>.jpg|.png, {LABELS_DIR}/<frame_id>.png and {FRAMES_CSV}"


def image_candidates(root: Path, frame_id: str) -> list[Path]:
    """Every path the frame's image may have, in order of preference."""
    return [root / IMAGES_DIR / f"{frame_id}{suffix}" for suffix in IMAGE_SUFFIXES]


def existing_images(root: Path, frame_id: str) -> list[Path]:
    """The candidate image files of a frame that exist (two of them is an audit error)."""
    return [p for p in image_candidates(root, frame_id) if p.is_file()]


def label_path(root: Path, frame_id: str) -> Path:
    return root / LABELS_DIR / f"{frame_id}{LABEL_SUFFIX}"


def _image_path(root: Path, frame_id: str) -> Path:
    found = existing_images(root, frame_id)
    return found[0] if found else image_candidates(root, frame_id)[0]


def _check_header(header: tuple[str, ...]) -> str | None:
    """The three columns first; any further ones (say, the room type or the lighting) are the
    frames' metadata, each named once."""
    extra = header[len(HEADER):]
    if header[: len(HEADER)] == HEADER and all(extra) and len(set(extra)) == len(extra) and not set(extra) & set(HEADER):
        return None
    return f"'{','.join(HEADER)}' and optionally further, distinct, named metadata columns"


def dataset_root(data_dir: Path) -> Path:
    """The folder holding frames.csv, images/ and labels/: `data_dir` or its one sub-folder that does."""
    return unpacked_root(data_dir, (FRAMES_CSV, IMAGES_DIR, LABELS_DIR), LAYOUT)


def read_frames(data_dir: Path, splits: Sequence[str]) -> list[Frame]:
    """Every frame listed in frames.csv (in <data_dir> or its one sub-folder), sorted by frame_id.

    Raises SegbenchError naming the file and line for a missing data folder or frames.csv, a
    wrong header, a wrong number of columns, an empty, unsafe or duplicate frame_id, an empty
    wall_id, a value with surrounding white space, or a split not in `splits`.
    """
    root = dataset_root(data_dir)
    listed = read_listing(
        root / FRAMES_CSV,
        Columns(*HEADER),
        splits,
        f"every Painting Vision dataset needs {FRAMES_CSV}",
        _check_header,
    )
    frames = [
        Frame(
            frame_id=row.frame_id,
            group_id=row.group,
            split=row.split,
            image=_image_path(root, row.frame_id),
            label=label_path(root, row.frame_id),
            meta=row.meta,
        )
        for row in listed
    ]
    return sorted(mark_unlabelled_splits(frames), key=lambda f: f.frame_id)


def list_unlisted_files(data_dir: Path, frames: Sequence[Frame]) -> list[Path]:
    """Entries of images/ and labels/ that belong to no listed frame, sorted.

    A frame owns images/<id>.jpg, images/<id>.png and labels/<id>.png. Anything else there (other
    suffixes, sub-folders, hidden files) is reported: the audit treats it as an error.
    """
    root = dataset_root(data_dir)
    owned: set[Path] = set()
    for frame in frames:
        owned.update(image_candidates(root, frame.frame_id))
        owned.add(label_path(root, frame.frame_id))
    unlisted: list[Path] = []
    for sub in (IMAGES_DIR, LABELS_DIR):
        folder = root / sub
        if folder.is_dir():
            unlisted.extend(p for p in folder.iterdir() if p not in owned)
    return sorted(unlisted)


def _frame_image_candidates(data_dir: Path, frame: Frame) -> list[Path]:
    return image_candidates(dataset_root(data_dir), frame.frame_id)


def _index_files(data_dir: Path, labels: Sequence[str | Path]) -> list[Path]:
    """frames.csv (in the data folder itself when there is no dataset yet, as before `dvc pull`)."""
    try:
        return [dataset_root(data_dir) / FRAMES_CSV]
    except SegbenchError:
        return [Path(data_dir) / FRAMES_CSV]


FORMAT = DatasetFormat(
    name="painting-vision",
    listing=FRAMES_CSV,
    read_frames=read_frames,
    image_candidates=_frame_image_candidates,
    list_unlisted_files=list_unlisted_files,
    index_files=_index_files,
)
