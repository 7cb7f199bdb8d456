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

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.fileio import BLOCK, atomic_write_text, sha256_file

MANIFEST_FORMAT = "segbench-manifest"
MANIFEST_VERSION = 1
_FILE_KEYS = {"path", "sha256"}
_TOP_KEYS = {"format", "version", "dataset_id", "frames"}
_OPTIONAL_TOP_KEYS = {"layout"}
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


def verify_pin(path: Path) -> None:
    """A file with a DVC pin beside it (`<file>.dvc`) must have the pinned size and MD5.

    DVC's pins are MD5s (DVC 3 hashes a file's bytes as they are): a file damaged on disk or
    restored damaged from a remote is refused here, before it is read as a model.
    """
    pin = Path(path).with_name(Path(path).name + ".dvc")
    if not pin.is_file():
        return
    try:
        outs = yaml.safe_load(pin.read_text(encoding="utf-8"))["outs"]
        want_md5, want_size = outs[0]["md5"], outs[0].get("size")
    except (yaml.YAMLError, KeyError, IndexError, TypeError, UnicodeDecodeError, OSError):
        raise SegbenchError(f"{pin}: not a readable DVC pin (outs[0].md5)") from None
    size = Path(path).stat().st_size
    if want_size is not None and size != want_size:
        intact = False  # no need to read it through
    else:
        digest = hashlib.md5(usedforsecurity=False)
        with Path(path).open("rb") as stream:
            while block := stream.read(BLOCK):
                digest.update(block)
        intact = digest.hexdigest() == want_md5
    if not intact:
        raise SegbenchError(
            f"{path}: bytes differ from its DVC pin {pin} (pinned md5 {want_md5}, size {want_size}; the file has "
            f"size {size}): damaged, or changed without `dvc add {path}`; `dvc pull --force {pin}` restores it"
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


def _sha_or_none(path: Path) -> str | None:
    return sha256_file(path) if Path(path).is_file() else None


def _absent_by_design(frame: Frame, layout: Mapping[str, str]) -> tuple[bool, bool]:
    """(image, label): whether the copy has no such file by design (see the module's docstring)."""
    return layout.get(IMAGES_ABSENT[0]) == IMAGES_ABSENT[1], not frame.labelled


def build_manifest(
    data_dir: Path,
    frames: Sequence[Frame],
    id_prefix: str = "pv1",
    group_key: str = "wall_id",
    layout: Mapping[str, str] | None = None,
) -> dict:
    """The manifest of `frames` as they are on disk now; every missing file is named in one error.

    `layout` is the format's (DatasetFormat.layout); it says which files may be absent.
    """
    data_dir = Path(data_dir)
    layout = dict(layout or {})
    entries = []
    missing = []
    for frame in sorted(frames, key=lambda f: f.frame_id):
        image_sha, label_sha = _sha_or_none(frame.image), _sha_or_none(frame.label)
        missing += [
            f"{p} (frame {frame.frame_id!r})" + (": a folder, not a file" if Path(p).is_dir() else "")
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


_HEX_DIGITS = frozenset("0123456789abcdef")


def _is_sha256(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and _HEX_DIGITS.issuperset(value)


def _check_frame_entry(entry: Any, where: str, group_key: str) -> None:
    if not isinstance(entry, dict):
        raise SegbenchError(f"{where}: expected an object, got {type(entry).__name__}")
    expected = {"frame_id", group_key, "split", "image", "label"}
    if set(entry) != expected:
        missing, extra = sorted(expected - set(entry)), sorted(set(entry) - expected)
        raise SegbenchError(f"{where}: fields missing {missing}, unexpected {extra}")
    for key in ("frame_id", group_key, "split"):
        if not isinstance(entry[key], str) or not entry[key]:
            raise SegbenchError(f"{where}: field '{key}' must be a non-empty string, got {entry[key]!r}")
    for key in ("image", "label"):
        file = entry[key]
        if not isinstance(file, dict) or set(file) != _FILE_KEYS:
            raise SegbenchError(
                f"{where}: field '{key}' must be an object with exactly the fields {sorted(_FILE_KEYS)}"
            )
        if not isinstance(file["path"], str) or not file["path"]:
            raise SegbenchError(f"{where}: field '{key}/path' must be a non-empty string, got {file['path']!r}")
        if file["sha256"] is not None and not _is_sha256(file["sha256"]):
            raise SegbenchError(
                f"{where}: field '{key}/sha256' must be 64 lowercase hex digits or null, got {file['sha256']!r}"
            )


def read_manifest(path: Path, id_prefix: str = "pv1", group_key: str = "wall_id") -> dict:
    """Read and check a manifest: format, version, fields, and a dataset_id that matches its frames."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SegbenchError(f"{path}: data manifest not found") from None
    except UnicodeDecodeError:
        raise SegbenchError(f"{path}: data manifest is not UTF-8 text") from None
    except OSError as exc:
        raise SegbenchError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(manifest, dict):
        raise SegbenchError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise SegbenchError(f"{path}: field 'format' is {manifest.get('format')!r}, expected {MANIFEST_FORMAT!r}")
    if manifest.get("version") != MANIFEST_VERSION:
        raise SegbenchError(f"{path}: field 'version' is {manifest.get('version')!r}, expected {MANIFEST_VERSION}")
    if not _TOP_KEYS <= set(manifest) <= _TOP_KEYS | _OPTIONAL_TOP_KEYS:
        missing, extra = sorted(_TOP_KEYS - set(manifest)), sorted(set(manifest) - _TOP_KEYS - _OPTIONAL_TOP_KEYS)
        raise SegbenchError(f"{path}: fields missing {missing}, unexpected {extra}")
    stated = manifest["dataset_id"]
    if not isinstance(stated, str) or not stated.startswith(f"{id_prefix}:"):
        raise SegbenchError(
            f"{path}: field 'dataset_id' is {stated!r}, expected '{id_prefix}:<sha256>': the manifest of another "
            "benchmark (or of none)"
        )
    layout = manifest.get("layout", {})
    if not isinstance(layout, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in layout.items()):
        raise SegbenchError(f"{path}: field 'layout' must be an object of strings, got {layout!r}")
    frames = manifest["frames"]
    if not isinstance(frames, list):
        raise SegbenchError(f"{path}: field 'frames' must be a list")
    seen: set[str] = set()
    for i, entry in enumerate(frames):
        _check_frame_entry(entry, f"{path}: frames/{i}", group_key)
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
) -> str:
    """Check the files on disk against the manifest; return the dataset_id when they match.

    On any mismatch raise one SegbenchError that lists every difference: a frame in only one of
    the two, a changed split or group, a file with changed bytes (both SHA-256 prefixes), a
    missing file, a file at another path, another layout (`layout`: the format's for the data).
    """
    data_dir = Path(data_dir)
    layout = dict(layout or {})
    expected = {e["frame_id"]: e for e in manifest["frames"]}
    actual = {f.frame_id: _entry(f, data_dir, group_key, _sha_or_none(f.image), _sha_or_none(f.label)) for f in frames}
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
                problems.append(f"{h['path']}: missing (frame {frame_id!r}; manifest sha256 {_short(w['sha256'])})")
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
