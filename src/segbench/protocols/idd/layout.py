"""Where an IDD20K download's folders are: gtFine/ and leftImg8bit/ in the data folder, or in
the one folder that unpacking an archive made (Part I unpacks to IDD_Segmentation/, Part II to
idd20kII/; extracted into one folder with their top folders stripped, the two merge)."""

from __future__ import annotations

from pathlib import Path

from ...io.unpacked import unpacked_root

GT_DIR = "gtFine"
IMAGES_DIR = "leftImg8bit"
LAYOUT = (
    f"{GT_DIR}/<split>/<drive>/<img_id>_gtFine_polygons.json and {IMAGES_DIR}/<split>/<drive>/<img_id>_leftImg8bit.* "
    "of both parts in one folder"
)


def dataset_root(data_dir: Path) -> Path:
    """The folder holding gtFine/ (and leftImg8bit/, where the images were downloaded)."""
    return unpacked_root(data_dir, (GT_DIR, IMAGES_DIR), LAYOUT)
