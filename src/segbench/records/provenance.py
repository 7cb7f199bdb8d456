"""Dataset and checkpoint identity: SHA-256 manifests, the dataset_id, checkpoint hashes.

A manifest lists every frame with its group (e.g. wall_id), split and the relative path and
SHA-256 of its image and label:

    {"format": "segbench-manifest", "version": 1, "dataset_id": "pv1:<hex>",
     "frames": [{"frame_id": ..., "wall_id": ..., "split": ...,
                 "image": {"path": "images/a.jpg", "sha256": ...},
                 "label": {"path": "labels/a.png", "sha256": ...}}, ...]}

The dataset_id is "<prefix>:" + the SHA-256 (hex) of the canonical serialisation of that frame
list: sorted by frame_id, JSON with sorted keys, separators "," and ":", no ASCII escaping,
encoded as UTF-8. Every changed byte, moved or renamed file, changed split or changed group
therefore changes the id.

A sha256 is null for a file the copy does not have by design: the label of a frame of an
unlabelled split (Frame.labelled false), every image of a copy whose format's layout says
"images": "absent" (IDD's gtFine/ alone). An optional "layout" object of strings records how the
copy is laid out (e.g. {"meta": "annotations/meta.zip", "meta_version": "1.0"}); it is checked by
verification but is not part of the dataset_id, which the frames alone determine.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import atomic_write_text, md5_file, sha256_file
from ..io.oserrors import file_error
from ..io.schemas import compiled, load_schema, validate_compiled

MANIFEST_FORMAT = "segbench-manifest"
MANIFEST_VERSION = 1
IMAGES_ABSENT = ("images", "absent")  # the layout entry of a copy without images


def canonical_json(value: Any) -> bytes:
    """The canonical serialisation every hash in this module is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def checkpoint_sha256(path: Path) -> str:
    """The checkpoint's identity, SHA-256 (hex).

    For a file: the SHA-256 of its bytes. For a folder (e.g. a Hugging Face checkpoint): every
    regular file below it, recursively (hidden files included, symlinked folders not followed),
    as the list [[relative POSIX path, file SHA-256], ...] sorted by path, serialised as
    canonical JSON (sorted keys, separators "," and ":", no ASCII escaping, UTF-8) and hashed
    with SHA-256. Renaming, adding, removing or changing any file changes it.
    A missing path or a folder without files is a SegbenchError.
    """
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    if not path.is_dir():
        raise SegbenchError(f"{path}: checkpoint not found")
    entries = []
    for root, _dirs, files in os.walk(path):
        for name in files:
            file = Path(root) / name
            if file.is_file():
                entries.append([file.relative_to(path).as_posix(), sha256_file(file)])
    if not entries:
        raise SegbenchError(f"{path}: checkpoint folder contains no files")
    entries.sort()
    return hashlib.sha256(canonical_json(entries)).hexdigest()


def dvc_md5(path: Path) -> tuple[str, int]:
    """(DVC 3's hash, size) of a file, or of a folder: `<md5>.dir`, the MD5 of its listing
    [{"md5", "relpath"}, ...] of every file below it sorted by relpath, serialised as DVC does
    (json.dumps with sorted keys), and the files' total size."""
    path = Path(path)
    if not path.is_dir():
        return md5_file(path), path.stat().st_size
    files = sorted((Path(root) / name for root, _, names in os.walk(path) for name in names),
                   key=lambda f: f.relative_to(path).as_posix())
    listing = [{"md5": md5_file(f), "relpath": f.relative_to(path).as_posix()} for f in files]
    digest = hashlib.md5(json.dumps(listing, sort_keys=True).encode(), usedforsecurity=False).hexdigest()
    return digest + ".dir", sum(f.stat().st_size for f in files)


def verify_pin(path: Path) -> None:
    """A file or folder with a DVC pin beside it (`<name>.dvc`) must have the pinned MD5.

    DVC's pins are MD5s (DVC 3 hashes a file's bytes as they are, a folder by its listing): a
    model damaged on disk or restored damaged from a remote is refused here, before it is read.
    """
    pin = Path(path).with_name(Path(path).name + ".dvc")
    if not pin.is_file():
        return
    try:
        outs = yaml.safe_load(pin.read_text(encoding="utf-8"))["outs"]
        want_md5, want_size = outs[0]["md5"], outs[0].get("size")
    except (yaml.YAMLError, KeyError, IndexError, TypeError, UnicodeDecodeError, OSError):
        raise SegbenchError(f"{pin}: not a readable DVC pin (outs[0].md5)") from None
    md5, size = dvc_md5(path)
    if md5 != want_md5:
        raise SegbenchError(
            f"{path}: bytes differ from its DVC pin {pin} (pinned md5 {want_md5}, size {want_size}; it has md5 "
            f"{md5}, size {size}): damaged, or changed without `dvc add {path}`; `dvc pull --force {pin}` restores it"
        )


def dataset_id(frame_entries: Sequence[Mapping[str, Any]], id_prefix: str) -> str:
    """`id_prefix` + ":" + SHA-256 of the canonical serialisation of the frames, sorted by frame_id."""
    ordered = sorted(frame_entries, key=lambda e: e["frame_id"])
    return f"{id_prefix}:{hashlib.sha256(canonical_json(ordered)).hexdigest()}"


def _relative(path: Path, data_dir: Path) -> str:
    try:
        return Path(path).relative_to(data_dir).as_posix()
    except ValueError:
        raise SegbenchError(f"{path}: not inside the data folder {data_dir}") from None


def _entry(frame: Frame, data_dir: Path, group_key: str, image_sha: str | None, label_sha: str | None) -> dict:
    return {
        "frame_id": frame.frame_id,
        group_key: frame.group_id,
        "split": frame.split,
        "image": {"path": _relative(frame.image, data_dir), "sha256": image_sha},
        "label": {"path": _relative(frame.label, data_dir), "sha256": label_sha},
    }


# How a file's SHA-256 is found: read here, or kept between starts (the workflow's digests).
Hasher = Callable[[Path], str]


def _sha_or_none(path: Path, sha256: Hasher = sha256_file) -> str | None:
    return sha256(path) if Path(path).is_file() else None


def _not_a_file(path: Path) -> str:
    """Why a path that should be a file has no SHA-256: 'missing', or what is there instead."""
    path = Path(path)
    if path.is_dir():
        return "a folder, not a file"
    return "not a regular file" if os.path.lexists(path) else "missing"


def _absent_by_design(frame: Frame, layout: Mapping[str, str]) -> tuple[bool, bool]:
    """(image, label): whether the copy has no such file by design (see the module's docstring)."""
    return layout.get(IMAGES_ABSENT[0]) == IMAGES_ABSENT[1], not frame.labelled


def build_manifest(
    data_dir: Path,
    frames: Sequence[Frame],
    id_prefix: str = "pv1",
    group_key: str = "wall_id",
    layout: Mapping[str, str] | None = None,
    sha256: Hasher = sha256_file,
) -> dict:
    """The manifest of `frames` as they are on disk now; every missing file is named in one error.

    `layout` is the format's (DatasetFormat.layout); it says which files may be absent.
    """
    data_dir = Path(data_dir)
    layout = dict(layout or {})
    entries = []
    missing = []
    for frame in sorted(frames, key=lambda f: f.frame_id):
        image_sha, label_sha = _sha_or_none(frame.image, sha256), _sha_or_none(frame.label, sha256)
        missing += [
            f"{p} (frame {frame.frame_id!r})" + ("" if not os.path.lexists(p) else f": {_not_a_file(p)}")
            for p, s, absent in zip((frame.image, frame.label), (image_sha, label_sha), _absent_by_design(frame, layout))
            if s is None and not absent
        ]
        entries.append(_entry(frame, data_dir, group_key, image_sha, label_sha))
    if missing:
        raise SegbenchError(
            f"cannot build the data manifest of {data_dir}: {len(missing)} file(s) missing:\n  " + "\n  ".join(missing)
        )
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "dataset_id": dataset_id(entries, id_prefix),
        "frames": entries,
    }
    if layout:
        manifest["layout"] = layout
    return manifest


def write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    """Write the manifest as JSON (sorted keys, indent 2, trailing newline), atomically."""
    atomic_write_text(path, json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


@cache
def manifest_schema(group_key: str) -> dict[str, Any]:
    """The manifest's schema with the benchmark's group field (e.g. wall_id) required in each frame."""
    schema = copy.deepcopy(load_schema("manifest"))
    frame = schema["$defs"]["frame"]
    frame["properties"][group_key] = {"$ref": "#/$defs/name"}
    frame["required"].append(group_key)
    return schema


@cache
def manifest_check(group_key: str) -> Callable[[Any], Any]:
    return compiled(manifest_schema(group_key))


def read_manifest(path: Path, id_prefix: str = "pv1", group_key: str = "wall_id") -> dict:
    """Read and check a manifest: its schema (workflow/schemas/manifest.schema.json, with the
    benchmark's group field), unique frame ids, and a dataset_id that matches its frames."""
    return check_manifest(read_manifest_text(path), path, id_prefix, group_key)


def read_manifest_text(path: Path) -> str:
    """A manifest file's text, with an error naming the file when it cannot be read."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, path, "data manifest") from None


def check_manifest(text: str, path: Path, id_prefix: str = "pv1", group_key: str = "wall_id") -> dict:
    """read_manifest's checks of a manifest's text read from `path` (named in the errors)."""
    path = Path(path)
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    # Another benchmark's manifest fails the schema too (its frames have another group field):
    # the dataset_id's prefix says what it is, so it is checked first.
    stated = manifest.get("dataset_id") if isinstance(manifest, dict) else None
    if isinstance(stated, str) and not stated.startswith(f"{id_prefix}:"):
        raise SegbenchError(
            f"{path}: field 'dataset_id' is {stated!r}, expected '{id_prefix}:<sha256>': the manifest of another "
            "benchmark (or of none)"
        )
    # compiled: the workflow's plan reads the manifest at every start
    validate_compiled(manifest, "manifest", path, manifest_schema(group_key), manifest_check(group_key))
    frames = manifest["frames"]
    seen: set[str] = set()
    for i, entry in enumerate(frames):
        if entry["frame_id"] in seen:
            raise SegbenchError(f"{path}: frames/{i}: duplicate frame_id {entry['frame_id']!r}")
        seen.add(entry["frame_id"])
    computed = dataset_id(frames, id_prefix)
    if stated != computed:
        raise SegbenchError(
            f"{path}: field 'dataset_id' is {stated}, but its own frame list hashes to {computed}; "
            "the manifest was edited or corrupted"
        )
    return manifest


def _short(sha: str | None) -> str:
    return "(missing)" if sha is None else sha[:12]


def verify_manifest(
    manifest: Mapping[str, Any],
    data_dir: Path,
    frames: Sequence[Frame],
    id_prefix: str = "pv1",
    group_key: str = "wall_id",
    manifest_path: Path | None = None,
    layout: Mapping[str, str] | None = None,
    sha256: Hasher = sha256_file,
) -> str:
    """Check the files on disk against the manifest; return the dataset_id when they match.

    On any mismatch raise one SegbenchError that lists every difference: a frame in only one of
    the two, a changed split or group, a file with changed bytes (both SHA-256 prefixes), a
    missing file, a file at another path, another layout (`layout`: the format's for the data).
    """
    data_dir = Path(data_dir)
    layout = dict(layout or {})
    expected = {e["frame_id"]: e for e in manifest["frames"]}
    actual = {f.frame_id: _entry(f, data_dir, group_key, _sha_or_none(f.image, sha256), _sha_or_none(f.label, sha256))
              for f in frames}
    problems: list[str] = []
    stated_layout = manifest.get("layout", {})
    for key in sorted(stated_layout.keys() | layout.keys()):
        if stated_layout.get(key) != layout.get(key):
            problems.append(f"layout {key} is {layout.get(key)!r}, the manifest says {stated_layout.get(key)!r}")
    for frame_id in sorted(expected.keys() | actual.keys()):
        want, have = expected.get(frame_id), actual.get(frame_id)
        if have is None:
            problems.append(f"frame {frame_id!r}: in the manifest but not in the data's frame list")
            continue
        if want is None:
            problems.append(f"frame {frame_id!r}: in the data's frame list but not in the manifest")
            continue
        for key in ("split", group_key):
            if want.get(key) != have[key]:
                problems.append(f"frame {frame_id!r}: {key} is {have[key]!r}, the manifest says {want.get(key)!r}")
        for key in ("image", "label"):
            w, h = want[key], have[key]
            if w["path"] != h["path"]:
                problems.append(f"frame {frame_id!r}: {key} is {h['path']}, the manifest says {w['path']}")
            if h["sha256"] is None and w["sha256"] is not None:
                problems.append(f"{h['path']}: {_not_a_file(data_dir / h['path'])} (frame {frame_id!r}; manifest sha256 "
                                f"{_short(w['sha256'])})")
            elif w["sha256"] != h["sha256"]:
                problems.append(
                    f"{h['path']}: bytes changed (frame {frame_id!r}; manifest sha256 {_short(w['sha256'])}, "
                    f"on disk {_short(h['sha256'])})"
                )
    computed = dataset_id(list(actual.values()), id_prefix)
    if not problems and manifest.get("dataset_id") != computed:
        problems.append(f"dataset_id: the manifest says {manifest.get('dataset_id')}, the data hashes to {computed}")
    if problems:
        source = f" {manifest_path}" if manifest_path is not None else ""
        raise SegbenchError(
            f"the data in {data_dir} does not match the data manifest{source} ({len(problems)} difference(s)); "
            "refusing to evaluate:\n  " + "\n  ".join(problems)
        )
    return computed
