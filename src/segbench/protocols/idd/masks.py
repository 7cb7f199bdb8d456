"""Level-3 ground-truth masks from IDD's polygon annotations, drawn as the reference draws them.

    gtFine/<split>/<drive>/<img_id>_gtFine_polygons.json  ->  <img_id>_gtFine_labellevel3Ids.png

Each mask is an 8-bit 'L' image of the JSON's imgWidth x imgHeight, filled with 255 (unlabelled),
then every object is drawn in JSON order (later objects over earlier ones) with
`ImageDraw.polygon(points, fill=level3Id)` and no outline. Skipped: deleted objects and polygons
of fewer than 3 points. A label not in the table loses a trailing "group" ("cargroup" -> "car");
one still unknown is an error naming the file and the label. Void labels (ego vehicle, out of
roi, license plate, ...) have level3Id 255, so they are drawn as 255 over what lies beneath.

Polygon edges depend on Pillow's rasteriser, which has changed between versions, so the Pillow
version is recorded beside the masks in gtFine/labellevel3Ids.segbench.json, with the SHA-256 of
every polygon file and mask, so the audit can tell a mask out of date with its polygons.

    python -m segbench.protocols.idd.masks --data DIR     # every gtFine/*/*/*_gtFine_polygons.json under DIR
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import PIL
from PIL import Image, ImageDraw

from ... import __version__
from ...errors import SegbenchError
from ...io.fileio import atomic_write_text, read_bounded, sha256_file
from ...io.limits import LIMITS
from ...io.maskio import write_mask
from ...io.oserrors import file_error
from ...io.parallel import workers
from .layout import dataset_root
from .table import LabelTable, load_table

POLYGONS_SUFFIX = "_gtFine_polygons.json"
MASK_SUFFIX = "_gtFine_labellevel3Ids.png"
POLYGONS_GLOB = f"gtFine/*/*/*{POLYGONS_SUFFIX}"
RECORD = Path("gtFine") / "labellevel3Ids.segbench.json"
RECORD_FORMAT = "segbench-idd-masks"
GROUP_SUFFIX = "group"


def mask_path(polygons: Path) -> Path:
    return polygons.with_name(polygons.name.removesuffix(POLYGONS_SUFFIX) + MASK_SUFFIX)


def polygons_path(mask: Path) -> Path:
    return mask.with_name(mask.name.removesuffix(MASK_SUFFIX) + POLYGONS_SUFFIX)


def level3_value(table: LabelTable, name: str, where: str) -> int:
    """The level3Id a label is drawn with; an unknown label loses a trailing "group" first."""
    label = table.label(name)
    if label is None and name.endswith(GROUP_SUFFIX):
        label = table.label(name.removesuffix(GROUP_SUFFIX))
    if label is None:
        raise SegbenchError(f"{where}: unknown label '{name}' (not in the IDD label table, even without a trailing 'group')")
    return label.level3


def _finite(value: Any) -> bool:
    """A number a polygon may hold: an int or a float, not NaN or infinite, not beyond a float."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer of more digits than a float holds (Pillow refuses it untidily)
        return False


def _point(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, list) or len(value) != 2 or not all(_finite(v) for v in value):
        raise SegbenchError(f"{where}: a polygon point must be [x, y] finite numbers, got {value!r}")
    return (value[0], value[1])  # ints stay ints, floats stay floats: Pillow rounds them its own way


def _size(doc: dict[str, Any], key: str, where: str) -> int:
    try:
        value = int(doc[key])
    except KeyError:
        raise SegbenchError(f"{where}: field '{key}' is missing") from None
    except (TypeError, ValueError):
        raise SegbenchError(f"{where}: field '{key}' must be an integer, got {doc[key]!r}") from None
    if not 1 <= value <= LIMITS.max_mask_side:
        raise SegbenchError(f"{where}: field '{key}' must be from 1 to {LIMITS.max_mask_side}, got {value}")
    return value


def rasterise(doc: Any, table: LabelTable, where: str) -> np.ndarray:
    """The (imgHeight, imgWidth) uint8 level-3 mask of one parsed polygon JSON."""
    if not isinstance(doc, dict) or not isinstance(doc.get("objects"), list):
        raise SegbenchError(f"{where}: expected an object with a list 'objects'")
    image = Image.new("L", (_size(doc, "imgWidth", where), _size(doc, "imgHeight", where)), table.void)
    draw = ImageDraw.Draw(image)
    for index, obj in enumerate(doc["objects"]):
        at = f"{where}: objects/{index}"
        if not isinstance(obj, dict) or not isinstance(obj.get("label"), str) or not isinstance(obj.get("polygon"), list):
            raise SegbenchError(f"{at}: an object needs a string 'label' and a list 'polygon'")
        if obj.get("deleted", 0) or len(obj["polygon"]) < 3:
            continue
        points = [_point(p, f"{at}/polygon/{i}") for i, p in enumerate(obj["polygon"])]
        draw.polygon(points, fill=level3_value(table, obj["label"], at))
    return np.asarray(image)


def read_polygons(path: Path) -> Any:
    """A polygon file's JSON, at most LIMITS.max_text_bytes."""
    try:
        return json.loads(read_bounded(path, LIMITS.max_text_bytes).decode("utf-8"))
    except OSError as exc:
        raise file_error(exc, path) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SegbenchError(f"{path}: not a JSON polygon file ({exc})") from None


def mask_of(path: Path, table: LabelTable | None = None) -> np.ndarray:
    """The level-3 mask of the polygon file at `path`."""
    return rasterise(read_polygons(path), table or load_table(), str(path))


def write_masks(data_dir: Path) -> dict[str, Any]:
    """Draw every gtFine/*/*/*_gtFine_polygons.json of `data_dir` (or of the one folder unpacking
    made in it) next to it, and write the record.

    The first unknown label or malformed file stops the run (no mask is left half-written, and
    the record is written only when every mask is). Returns the record.
    """
    data_dir = dataset_root(data_dir)
    sources = sorted(data_dir.glob(POLYGONS_GLOB))
    if not sources:
        raise SegbenchError(f"{data_dir}: no {POLYGONS_GLOB} to draw")
    table = load_table()

    def draw(path: Path) -> tuple[str, dict[str, str]]:
        write_mask(mask_path(path), mask_of(path, table))
        entry = {"polygons_sha256": sha256_file(path), "mask_sha256": sha256_file(mask_path(path))}
        return mask_path(path).relative_to(data_dir / "gtFine").as_posix(), entry

    with ThreadPoolExecutor(workers()) as pool:
        masks = dict(pool.map(draw, sources))
    record = {
        "format": RECORD_FORMAT,
        "version": 1,
        "id_type": "level3Id",
        "pillow": PIL.__version__,
        "segbench": __version__,
        "label_table": table.version,
        "masks": masks,
    }
    atomic_write_text(data_dir / RECORD, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def read_record(data_dir: Path) -> dict[str, Any] | None:
    """The record written with the masks, None when there is none; a broken one is an error."""
    path = Path(data_dir) / RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SegbenchError(f"{path}: not JSON ({exc})") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or not isinstance(record.get("masks"), dict):
        raise SegbenchError(f"{path}: not a {RECORD_FORMAT} record")
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m segbench.protocols.idd.masks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="IDD root (holds gtFine/)")
    args = parser.parse_args(argv)
    try:
        record = write_masks(args.data)
    except SegbenchError as exc:
        print(f"segbench: error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(record['masks'])} level-3 masks written with Pillow {record['pillow']}; record: {dataset_root(args.data) / RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
