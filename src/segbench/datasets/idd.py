"""Reader for the India Driving Dataset (IDD20K) on-disk format.

    <data>/gtFine/<split>/<drive>/<img_id>_gtFine_polygons.json      the annotation (lists the frame)
    <data>/gtFine/<split>/<drive>/<img_id>_gtFine_labellevel3Ids.png  its level-3 mask (segbench.protocols.idd.masks)
    <data>/leftImg8bit/<split>/<drive>/<img_id>_leftImg8bit.png|.jpg  the image (Part I .png, Part II .jpg)
    <data>/gtFine/labellevel3Ids.segbench.json                        how the masks were made (Pillow version)

IDD20K Part I and Part II are extracted into one folder (the challenge's instruction), so that
their gtFine/ and leftImg8bit/ merge; the two may also sit in the one folder that unpacking made
(segbench.protocols.idd.layout). A frame is one polygon file: frame_id "<drive>/<img_id>", group_id the
drive (drives must not cross splits), label the mask beside the JSON. Its prediction is named as
in the challenge's submission format, "<drive>/<img_id>_gtFine_labellevel3Ids.png". Like the
other readers this one never opens images or masks: a missing file is a finding of the audit.

Images are needed for inference only: without leftImg8bit/ the frames come from gtFine/ alone
and can be audited and scored (the layout says "images": "absent"). A benchmark split with
images but no gtFine/<split> (the public test split) is unlabelled: one frame per image, to be
inferred and exported, never scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import SegbenchError
from ..io.fileio import sha256_file
from ..protocols.idd.layout import GT_DIR, IMAGES_DIR, dataset_root
from ..protocols.idd.masks import MASK_SUFFIX, POLYGONS_GLOB, POLYGONS_SUFFIX, RECORD, polygons_path, read_record
from .base import Frame
from .format import DatasetFormat, FormatFinding

IMAGE_SUFFIX = "_leftImg8bit"
IMAGE_EXTENSIONS = (".png", ".jpg")  # the first is the default when neither file exists
PARTS = {".png": "I", ".jpg": "II"}  # IDD20K Part I ships PNG images, Part II JPEG
GT_FILE_INFIX = "_gtFine_"  # any <img_id>_gtFine_* file belongs to its frame (other id types, colours)
IMAGES_ABSENT = {"images": "absent"}


def _image_candidates(root: Path, split: str, drive: str, img_id: str) -> list[Path]:
    folder = root / IMAGES_DIR / split / drive
    return [folder / f"{img_id}{IMAGE_SUFFIX}{ext}" for ext in IMAGE_EXTENSIONS]


def _parts(frame: Frame) -> tuple[str, str]:
    drive, img_id = frame.frame_id.split("/")
    return drive, img_id


def frame_image_candidates(data_dir: Path, frame: Frame) -> list[Path]:
    return _image_candidates(dataset_root(data_dir), frame.split, *_parts(frame))


def _frame(root: Path, split: str, drive: str, img_id: str, labelled: bool) -> Frame:
    candidates = _image_candidates(root, split, drive, img_id)
    found = [p for p in candidates if p.is_file()]
    return Frame(
        frame_id=f"{drive}/{img_id}",
        group_id=drive,
        split=split,
        image=found[0] if found else candidates[0],
        # Which part of IDD20K the frame came from, told by its image's format (no image: unknown).
        meta={"part": PARTS[found[0].suffix]} if found else {},
        label=root / GT_DIR / split / drive / f"{img_id}{MASK_SUFFIX}",
        prediction=prediction_name(f"{drive}/{img_id}"),
        labelled=labelled,
    )


def _listed(root: Path, split: str) -> list[tuple[Path, str, str, bool]]:
    """(source file, drive, img_id, labelled) of a split: its polygon files, else its images."""
    if (root / GT_DIR / split).is_dir():
        return [(p, p.parent.name, p.name.removesuffix(POLYGONS_SUFFIX), True)
                for p in sorted((root / GT_DIR / split).glob(f"*/*{POLYGONS_SUFFIX}"))]
    return [(p, p.parent.name, p.name.removesuffix(p.suffix).removesuffix(IMAGE_SUFFIX), False)
            for ext in IMAGE_EXTENSIONS
            for p in sorted((root / IMAGES_DIR / split).glob(f"*/*{IMAGE_SUFFIX}{ext}"))]


def read_frames(data_dir: Path, splits: Sequence[str]) -> list[Frame]:
    """Every polygon file under gtFine/<split>/<drive>/ for the benchmark's splits (every image of
    an unlabelled split), sorted by frame_id."""
    root = dataset_root(data_dir)
    if not (root / GT_DIR).is_dir():
        raise SegbenchError(f"{root / GT_DIR}: not found (an IDD dataset holds {POLYGONS_GLOB})")
    frames: dict[str, Frame] = {}
    for split in splits:
        for source, drive, img_id, labelled in _listed(root, split):
            frame = _frame(root, split, drive, img_id, labelled)
            if frame.frame_id in frames:
                first = frames[frame.frame_id]
                if first.split == split:
                    continue  # an unlabelled frame with a .png and a .jpg: the audit reports the two images
                raise SegbenchError(
                    f"{source}: frame {frame.frame_id} is also {polygons_path(first.label) if first.labelled else first.image}: "
                    f"drive '{drive}' is in splits '{first.split}' and '{split}' with the same image id"
                )
            frames[frame.frame_id] = frame
    return [frames[k] for k in sorted(frames)]


def layout(data_dir: Path) -> dict[str, str]:
    """{"images": "absent"} for a copy of gtFine/ alone (it can be scored, not inferred)."""
    return {} if (dataset_root(data_dir) / IMAGES_DIR).is_dir() else dict(IMAGES_ABSENT)


def list_unlisted_files(data_dir: Path, frames: Sequence[Frame]) -> list[Path]:
    """Entries of gtFine/ and leftImg8bit/ that belong to no frame, sorted.

    A frame owns its image candidates and every <img_id>_gtFine_* file beside its polygons (other
    id types, colour renderings). Anything else in a split of the frames (a stray image, a drive
    without annotations, a split folder of gtFine/ without frames) is reported; images of a split
    that is neither annotated nor the benchmark's are left alone.
    """
    base = dataset_root(data_dir)
    splits = {f.split for f in frames}
    owned: set[Path] = {base / RECORD}
    gt_files: dict[Path, set[str]] = {}  # drive folder of gtFine/ -> the file-name prefixes its frames own
    image_drives: set[Path] = set()
    for frame in frames:
        drive, img_id = _parts(frame)
        candidates = _image_candidates(base, frame.split, drive, img_id)
        owned.update(candidates)
        image_drives.add(candidates[0].parent)
        if frame.labelled:
            gt_files.setdefault(base / GT_DIR / frame.split / drive, set()).add(f"{img_id}{GT_FILE_INFIX}")
    unlisted: list[Path] = []
    for top_name, drives in ((GT_DIR, set(gt_files)), (IMAGES_DIR, image_drives)):
        top = base / top_name
        if not top.is_dir():
            continue
        for split_dir in top.iterdir():
            if split_dir in owned:
                continue
            if split_dir.name not in splits or not split_dir.is_dir():
                unannotated = top_name == IMAGES_DIR and not (base / GT_DIR / split_dir.name).exists()
                if not unannotated:
                    unlisted.append(split_dir)
                continue
            for drive_dir in split_dir.iterdir():
                if drive_dir not in drives or not drive_dir.is_dir():
                    unlisted.append(drive_dir)
                    continue
                prefixes = gt_files.get(drive_dir, set())
                unlisted += [
                    entry
                    for entry in drive_dir.iterdir()
                    if entry not in owned and not any(entry.name.startswith(p) for p in prefixes)
                ]
    return sorted(unlisted)


def index_files(data_dir: Path, labels: Sequence[str | Path]) -> list[Path]:
    """The polygon files the masks are drawn from (none for a frame of an unlabelled split).

    Before `dvc pull` there is no dataset to tell the splits apart: every label's polygons then.
    """
    polygons = [polygons_path(Path(label)) for label in labels]
    if not Path(data_dir).is_dir():
        return polygons
    return [p for p in polygons if p.parent.parent.is_dir()]


def mask_provenance(data_dir: Path, frames: Sequence[Frame]) -> list[FormatFinding]:
    """Masks must be those drawn from the polygons on disk, as recorded when they were drawn."""
    base = dataset_root(data_dir)
    try:
        record = read_record(base)
    except SegbenchError as exc:
        return [FormatFinding("label-provenance", "error", str(exc))]
    if record is None:
        return [
            FormatFinding(
                "label-provenance",
                "warning",
                f"{RECORD.as_posix()} not found: the masks were not drawn by `python -m segbench.protocols.idd.masks`, so the "
                "Pillow version that drew their polygon edges is unknown and they are not checked against the polygons",
            )
        ]
    findings = []
    for frame in frames:
        polygons = polygons_path(frame.label)
        if not frame.label.is_file() or not polygons.is_file():
            continue  # an unlabelled frame, or a missing mask that the common checks report
        key = frame.label.relative_to(base / GT_DIR).as_posix()
        entry = record["masks"].get(key)
        problem = None
        if entry is None:
            problem = "is not in the record of the drawn masks"
        elif entry.get("polygons_sha256") != sha256_file(polygons):
            problem = f"is out of date: {polygons.name} changed after the mask was drawn"
        elif entry.get("mask_sha256") != sha256_file(frame.label):
            problem = "changed after it was drawn"
        if problem:
            findings.append(
                FormatFinding(
                    "label-provenance",
                    "error",
                    f"frame '{frame.frame_id}': mask {GT_DIR}/{key} {problem}; redraw the masks with "
                    "`python -m segbench.protocols.idd.masks --data DIR`",
                    (frame.frame_id,),
                    (frame.group_id,),
                )
            )
    return findings


def prediction_name(frame_id: str) -> str:
    """The challenge's naming: <drive>/<image id>_gtFine_labellevel3Ids.png."""
    return f"{frame_id}{MASK_SUFFIX}"


FORMAT = DatasetFormat(
    name="idd",
    listing=POLYGONS_GLOB,
    read_frames=read_frames,
    image_candidates=frame_image_candidates,
    list_unlisted_files=list_unlisted_files,
    index_files=index_files,
    extra_findings=mask_provenance,
    prediction_name=prediction_name,
    layout=layout,
)
