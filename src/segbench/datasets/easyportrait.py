"""Reader for the EasyPortrait on-disk format, both releases as they ship.

    <data>/images/<split>/<name>.jpg          RGB portrait            (split: train, val, test)
    <data>/annotations/<split>/<name>.png     single-channel uint8 mask, ids 0..8 (255 ignored)
    <data>/annotations/meta.zip               1.0: the meta file came inside annotations.zip
    <data>/meta.zip                           2.0: the meta file is a download of its own

The meta file lists the frames. It is read from the zip directly (its one .csv member, refused
unread when encrypted or larger than LIMITS.max_text_bytes) or from meta.csv extracted beside the
zip; a zip and a CSV with the same text are one meta file, two different ones are refused. The
release is told by the columns:

    1.0  attachment_id,user_id,data_hash,width,height,brightness,train,test,valid
         (the split is the one of train/test/valid that is True; valid is the val/ folder)
    2.0  image_name,user_id,height,width,set,brightness

Only the frame id, user_id and the split are needed; the other columns are optional, columns may
come in any order and extra ones (e.g. a pandas index) are allowed. frame_id = attachment_id or
image_name (the file stem; a trailing ".jpg" is accepted and dropped), group_id = user_id (users
must not cross splits). The folders may sit in the one folder that unzipping made; split folders
unzipped into the data folder itself, or an images/images/, are refused saying how to unzip. Like
the other readers this one never opens images or masks; the audit checks the files against the
meta (`meta_contradictions`: a frame whose files are in another split's folder). A split with no
mask at all in annotations/<split>/ (a test split given out for an upload) is unlabelled: its
frames are inferred and exported, never scored (base.mark_unlabelled_splits).
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import SegbenchError
from ..io.limits import LIMITS
from ..io.unpacked import unpacked_root
from .base import Frame, mark_unlabelled_splits
from .format import DatasetFormat, FormatFinding
from .listing import Columns, ListedFrame, listed_frames, parse_rows, read_text

IMAGES_DIR = "images"
LABELS_DIR = "annotations"
IMAGE_SUFFIX = ".jpg"
LABEL_SUFFIX = ".png"
# Where each release puts its meta file, as shipped (the zip) and as extracted (the CSV).
META_ZIPS = {"1.0": Path(LABELS_DIR) / "meta.zip", "2.0": Path("meta.zip")}
META_FILES = (META_ZIPS["1.0"], META_ZIPS["1.0"].with_suffix(".csv"), META_ZIPS["2.0"], META_ZIPS["2.0"].with_suffix(".csv"))
SPLIT_COLUMNS_1_0 = (("train", "train"), ("valid", "val"), ("test", "test"))  # 1.0 column -> folder
SPLIT_FOLDERS = tuple(folder for _column, folder in SPLIT_COLUMNS_1_0)
ROOT_ENTRIES = (IMAGES_DIR, LABELS_DIR, *sorted(p.name for p in META_FILES if len(p.parts) == 1))  # what marks a root
MEMBERS_SHOWN = 10  # of a zip without one CSV (say, images.zip given for meta.zip)
LAYOUT = "images/<split>/*.jpg, annotations/<split>/*.png and annotations/meta.zip (1.0) or meta.zip (2.0)"


def _flag(values: dict[str, str], column: str) -> bool:
    value = values[column]
    if value in ("True", "true", "1"):
        return True
    if value in ("False", "false", "0"):
        return False
    raise ValueError(f"{column} is {value!r}, expected True or False")


def _split_1_0(values: dict[str, str]) -> str:
    """The 1.0 split: the one of the boolean columns train, test, valid that is True."""
    chosen = [split for column, split in SPLIT_COLUMNS_1_0 if _flag(values, column)]
    if len(chosen) != 1:
        flags = ", ".join(f"{c}={values[c]}" for c, _ in SPLIT_COLUMNS_1_0)
        raise ValueError(f"{flags}: exactly one of train, test, valid must be True")
    return chosen[0]


@dataclass(frozen=True)
class Release:
    version: str
    columns: tuple[str, ...]  # every column the release ships
    required: tuple[str, ...]  # those the reader needs
    listing: Columns
    split_of: Callable[[dict[str, str]], str] | None


RELEASES = (
    Release("1.0", ("attachment_id", "user_id", "data_hash", "width", "height", "brightness", "train", "test", "valid"),
            ("attachment_id", "user_id", "train", "test", "valid"),
            Columns(frame_id="attachment_id", group="user_id", split="train/test/valid"), _split_1_0),
    Release("2.0", ("image_name", "user_id", "height", "width", "set", "brightness"),
            ("image_name", "user_id", "set"), Columns(frame_id="image_name", group="user_id", split="set"), None),
)


def release_of(header: tuple[str, ...]) -> Release | None:
    """The release whose frame-id column the header has (None for neither or both)."""
    found = [r for r in RELEASES if r.listing.frame_id in header]
    return found[0] if len(found) == 1 else None


def _check_header(header: tuple[str, ...]) -> str | None:
    release = release_of(header)
    if release is None:
        return " or ".join(f"the {r.version} columns {','.join(r.columns)}" for r in RELEASES)
    missing = [c for c in release.required if c not in header]
    if missing:
        return f"the {release.version} columns {','.join(release.columns)} (missing: {','.join(missing)})"
    return None


@dataclass(frozen=True)
class Meta:
    path: Path  # the file read, relative to the dataset root
    source: str  # how errors name it
    text: str


def _member_bytes(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The meta member's bytes, refused unread when it is encrypted or its stated size is above
    LIMITS.max_text_bytes (zipfile reads a member no further than its stated size)."""
    where = f"{path} (member {info.filename})"
    if info.flag_bits & 0x1:
        raise SegbenchError(f"{where}: refused: an encrypted member (the meta file ships unencrypted)")
    if info.file_size > LIMITS.max_text_bytes:
        raise SegbenchError(
            f"{where}: {info.file_size} bytes uncompressed, more than the limit of {LIMITS.max_text_bytes}"
        )
    return archive.read(info)


def _zip_text(path: Path) -> tuple[str, str]:
    """(source name, text) of the zip's one CSV member."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [
                m for m in archive.namelist()
                if m.lower().endswith(".csv") and not any(part.startswith(("__MACOSX", ".")) for part in PurePosixPath(m).parts)
            ]
            if len(members) != 1:
                names = archive.namelist()
                shown = ", ".join(names[:MEMBERS_SHOWN]) + (f", ... ({len(names)} in all)" if len(names) > MEMBERS_SHOWN else "")
                raise SegbenchError(
                    f"{path}: expected one .csv member (the meta file), found {len(members)}: {shown or 'an empty zip'}"
                )
            data = _member_bytes(path, archive, archive.getinfo(members[0]))
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise SegbenchError(f"{path}: not a readable zip ({exc})") from None
    source = f"{path} (member {members[0]})"
    try:
        return source, data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SegbenchError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def find_meta(root: Path) -> Meta:
    """The meta file of the dataset at `root`: the shipped zip or its extracted CSV, exactly one text."""
    found = []
    for relative in META_FILES:
        path = root / relative
        if path.is_file():
            source, text = _zip_text(path) if path.suffix == ".zip" else (str(path), read_text(path, ""))
            found.append(Meta(relative, source, text))
    if not found:
        raise SegbenchError(
            f"{root}: no meta file; expected one of {', '.join(p.as_posix() for p in META_FILES)} "
            "(every EasyPortrait dataset needs the meta file that lists its frames)"
        )
    if len({m.text for m in found}) > 1:
        raise SegbenchError(
            f"{root}: {len(found)} different meta files ({', '.join(m.path.as_posix() for m in found)}); keep the one "
            "that came with the download"
        )
    return found[0]


def _refuse_lost_folders(folder: Path) -> None:
    """Refuse images.zip and annotations.zip unzipped so that images/ and annotations/ are lost or doubled.

    The README shows their members as train/, val/, test/ (and 1.0's meta.zip) with no top folder:
    unzipped into the data folder itself, the images and the masks of a split share one folder.
    """
    loose = [split for split in SPLIT_FOLDERS if (folder / split).is_dir()]
    if loose and not (folder / IMAGES_DIR).is_dir():
        raise SegbenchError(
            f"{folder}: {', '.join(s + '/' for s in loose)} lie in the data folder itself (images.zip and annotations.zip "
            f"unzipped into it; their members are <split>/...); expected {LAYOUT}: unzip images.zip -d "
            f"{folder / IMAGES_DIR} and annotations.zip -d {folder / LABELS_DIR}"
        )
    for sub in (IMAGES_DIR, LABELS_DIR):
        if (folder / sub / sub).is_dir():
            raise SegbenchError(
                f"{folder / sub / sub}: {sub}.zip has a top folder {sub}/ and was unzipped into {folder / sub}; expected "
                f"{sub}/<split>/...: unzip it into {folder} instead"
            )


def dataset_root(data_dir: Path) -> Path:
    data_dir = Path(data_dir)
    if data_dir.is_dir():
        _refuse_lost_folders(data_dir)
    root = unpacked_root(data_dir, ROOT_ENTRIES, LAYOUT)
    if root != data_dir:
        _refuse_lost_folders(root)
    return root


@dataclass(frozen=True)
class Listing:
    root: Path
    meta: Meta
    release: Release
    frames: list[ListedFrame]


def _parsed(root: Path) -> tuple[Meta, list[tuple[int, list[str]]], Release | None]:
    meta = find_meta(root)
    rows = parse_rows(meta.text, meta.source)
    return meta, rows, release_of(tuple(rows[0][1])) if rows else None


def read_listing(data_dir: Path, splits: Sequence[str]) -> Listing:
    root = dataset_root(data_dir)
    meta, rows, release = _parsed(root)
    chosen = release or RELEASES[0]  # none: listed_frames refuses the header
    frames = listed_frames(meta.source, rows, chosen.listing, splits, _check_header, _frame_id, chosen.split_of,
                           chosen.required)
    return Listing(root, meta, chosen, frames)


def _frame_id(name: str) -> str:
    return name.removesuffix(IMAGE_SUFFIX)


def _image(root: Path, split: str, frame_id: str) -> Path:
    return root / IMAGES_DIR / split / f"{frame_id}{IMAGE_SUFFIX}"


def _label(root: Path, split: str, frame_id: str) -> Path:
    return root / LABELS_DIR / split / f"{frame_id}{LABEL_SUFFIX}"


def read_frames(data_dir: Path, splits: Sequence[str]) -> list[Frame]:
    """Every frame the meta file lists, sorted by frame_id."""
    listing = read_listing(data_dir, splits)
    frames = [
        Frame(
            frame_id=row.frame_id,
            group_id=row.group,
            split=row.split,
            image=_image(listing.root, row.split, row.frame_id),
            label=_label(listing.root, row.split, row.frame_id),
            meta=row.meta,  # brightness, width, height (and 1.0's data_hash), any other column shipped
        )
        for row in listing.frames
    ]
    return sorted(mark_unlabelled_splits(frames), key=lambda f: f.frame_id)


def layout(data_dir: Path) -> dict[str, str]:
    """Which meta file was read and which release its columns are (recorded in the manifest)."""
    root = dataset_root(data_dir)
    meta, _rows, release = _parsed(root)
    if release is None:
        raise SegbenchError(f"{meta.source}: line 1: the header is neither release's; expected {_check_header(())}")
    return {"meta": (root / meta.path).relative_to(Path(data_dir)).as_posix(), "meta_version": release.version}


def frame_image_candidates(data_dir: Path, frame: Frame) -> list[Path]:
    return [frame.image]


def _misplaced(root: Path, frame: Frame) -> str | None:
    """The other split whose folders hold the frame's files, when its own do not."""
    if frame.image.is_file() or frame.label.is_file():
        return None
    for split_dir in sorted((root / IMAGES_DIR).glob("*/")) + sorted((root / LABELS_DIR).glob("*/")):
        if split_dir.name != frame.split and (
            _image(root, split_dir.name, frame.frame_id).is_file() or _label(root, split_dir.name, frame.frame_id).is_file()
        ):
            return split_dir.name
    return None


def list_unlisted_files(data_dir: Path, frames: Sequence[Frame]) -> list[Path]:
    """Entries of images/ and annotations/ (and of their split folders) that belong to no listed frame.

    The meta file is owned; so are the files of a frame that sit in another split's folder
    (meta_contradictions reports that frame instead).
    """
    root = dataset_root(data_dir)
    owned = {p for f in frames for p in (f.image, f.label)}
    owned |= {root / p for p in META_FILES}
    for frame in frames:
        other = _misplaced(root, frame)
        if other is not None:
            owned |= {_image(root, other, frame.frame_id), _label(root, other, frame.frame_id)}
    split_dirs = {p.parent for f in frames for p in (f.image, f.label)}
    unlisted: list[Path] = []
    for sub in (IMAGES_DIR, LABELS_DIR):
        folder = root / sub
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            if entry in owned:
                continue
            if entry not in split_dirs:
                unlisted.append(entry)
            else:
                unlisted.extend(p for p in entry.iterdir() if p not in owned)
    return sorted(unlisted)


def meta_contradictions(data_dir: Path, frames: Sequence[Frame]) -> list[FormatFinding]:
    """A frame the meta puts in one split whose files are in another split's folders."""
    root = dataset_root(data_dir)
    meta = find_meta(root).path.as_posix()
    findings = []
    for frame in frames:
        other = _misplaced(root, frame)
        if other is not None:
            findings.append(
                FormatFinding(
                    "meta-contradicts-folders",
                    "error",
                    f"frame '{frame.frame_id}': {meta} puts it in split '{frame.split}', but its files are in "
                    f"{IMAGES_DIR}/{other}/ or {LABELS_DIR}/{other}/",
                    (frame.frame_id,),
                    (frame.group_id,),
                )
            )
    return findings


def index_files(data_dir: Path, labels: Sequence[str | Path]) -> list[Path]:
    """The meta file (the 1.0 place when there is no dataset yet, as before `dvc pull`)."""
    try:
        root = dataset_root(data_dir)
        return [root / find_meta(root).path]
    except SegbenchError:
        return [Path(data_dir) / META_ZIPS["1.0"]]


FORMAT = DatasetFormat(
    name="easyportrait",
    listing="the meta file",
    read_frames=read_frames,
    image_candidates=frame_image_candidates,
    list_unlisted_files=list_unlisted_files,
    index_files=index_files,
    extra_findings=meta_contradictions,
    layout=layout,
)
