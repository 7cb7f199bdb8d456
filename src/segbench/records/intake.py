"""Predictions from strangers: a folder or an archive (zip, tar, tar.gz) of masks, read safely.

A participant's predictions are checked before any pixel is decoded and without extracting
anything to disk:

- the entries: only regular files, named exactly as the dataset format names the frames'
  predictions (Frame.prediction), in no folder the naming does not use; symbolic links, hard
  links (a file with more than one name may be the ground truth under another name), devices,
  pipes, nested folders, absolute names and `..` are refused, each named;
- for an archive also the count, each entry's and the total uncompressed size, and the
  compression ratio (a zip or tar bomb), before reading a member; every zip member's CRC is
  checked as it is read;
- each mask's PNG header: an 8-bit single-channel PNG (greyscale or palette) at the ground
  truth's size, or at a size the protocol resizes from (same aspect ratio; any size for a
  benchmark with an evaluation size) no larger than LIMITS.max_rescale times the ground truth
  (or the evaluation size) on each side, and (where the aspect must be kept) no smaller than
  1/LIMITS.max_rescale of it.

The limits are the settings in `LIMITS` (docs/security.md). Archives are files, so their
checkpoint_sha256 is the SHA-256 of the archive's bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..datasets.base import Frame
from ..errors import SegbenchError
from ..io.archives import ARCHIVE_SUFFIXES, is_archive
from ..io.limits import LIMITS
from ..io.maskio import PngHeader, decode_mask, png_header
from ..io.problems import Problem, Problems, kind_of
from .prediction_archive import ArchivePredictions
from .prediction_folder import FolderPredictions
from .predictions import Predictions

# The kinds of problem a mask has (segbench.io.problems): one refusal lists each kind apart.
UNREADABLE = "unreadable masks"
NOT_PNG = "not PNG files"
NOT_8BIT_GREY = "not 8-bit single-channel PNGs"
WRONG_SIZE = "masks of a size not accepted"
UNDECODABLE = "damaged or undecodable PNGs"
OUTSIDE_SPACE = "masks with values outside the label space"


def open_predictions(source: Path, frames: Sequence[Frame], exact: bool = True,
                     problems: Problems | None = None) -> Predictions:
    """The predictions of `frames` in a folder or archive, their listing checked.

    `exact`: the listing must hold these frames' masks and nothing else (the whole split);
    otherwise only these frames' entries are checked (one shard of a split checked exactly before).
    `problems`: where the listing's problems are gathered, for the caller to refuse with the
    masks' (Predictions); without, they are refused at once.
    """
    source = Path(source)
    if is_archive(source):
        return ArchivePredictions(source, frames, exact, problems)
    if source.is_file():
        raise SegbenchError(
            f"{source}: a predictions file must be an archive ({', '.join(ARCHIVE_SUFFIXES)}); "
            "a predictions folder must be a folder"
        )
    return FolderPredictions(source, frames, exact, problems)


def mask_bytes(predictions: Predictions, frame: Frame) -> bytes:
    """A frame's mask bytes; a failure to read them is a Problem of kind UNREADABLE."""
    with kind_of(UNREADABLE):
        return predictions.read(frame)


def mask_header(data: bytes, where: str) -> PngHeader:
    """A mask's PNG header; bytes that are no PNG are a Problem of kind NOT_PNG."""
    with kind_of(NOT_PNG):
        return png_header(data, where)


def check_prediction_header(
    data: bytes, where: str, gt_size: tuple[int, int], evaluation_size: tuple[int, int] | None,
    gt_name: str = "a ground truth",
) -> None:
    """Refuse a mask whose PNG header is not 8-bit single channel or whose size the protocol does
    not resize from, before decoding it, each a Problem of its kind. Sizes are (width, height);
    `gt_name` says in the errors what `gt_size` is the size of."""
    header = mask_header(data, where)
    if not header.single_channel_8bit:
        raise Problem(
            NOT_8BIT_GREY,
            f"{where}: prediction is a {header.describe()} PNG; a prediction must be an 8-bit single-channel "
            "PNG (greyscale, or palette read as its indices) holding class ids, not a colour rendering"
        )
    if header.size == gt_size:
        return
    reference = evaluation_size or gt_size
    bound = (LIMITS.max_rescale * max(reference[0], gt_size[0]), LIMITS.max_rescale * max(reference[1], gt_size[1]))
    if header.width > bound[0] or header.height > bound[1]:
        raise Problem(
            WRONG_SIZE,
            f"{where}: prediction is {header.width}x{header.height}; the largest accepted for {gt_name} of "
            f"{gt_size[0]}x{gt_size[1]} is {bound[0]}x{bound[1]} (at most {LIMITS.max_rescale}x each side)"
        )
    # A uniform rescale shrinks by at most the same factor: below it the aspect check says nothing (1x1 has
    # every aspect). A benchmark with an evaluation size resizes any size to it, only a side of 0 is no mask.
    least = (1, 1) if evaluation_size else tuple(max(1, side // LIMITS.max_rescale) for side in gt_size)
    if header.width < least[0] or header.height < least[1]:
        raise Problem(
            WRONG_SIZE,
            f"{where}: prediction is {header.width}x{header.height}; the smallest accepted for {gt_name} of "
            f"{gt_size[0]}x{gt_size[1]} is {least[0]}x{least[1]} (at least 1/{LIMITS.max_rescale} of each side)"
        )
    if evaluation_size is None and not same_aspect(header.size, gt_size):
        raise Problem(
            WRONG_SIZE,
            f"{where}: prediction is {header.width}x{header.height} but the ground truth is "
            f"{gt_size[0]}x{gt_size[1]}: not the same aspect ratio, so it cannot be resized to it"
        )


def same_aspect(size: tuple[int, int], target: tuple[int, int]) -> bool:
    """Whether `size` is `target` scaled uniformly, up to rounding of one side."""
    (w, h), (tw, th) = size, target
    return round(w * th / tw) == h or round(h * tw / th) == w


def read_prediction(
    predictions: Predictions, frame: Frame, gt_shape: tuple[int, int], evaluation_size: tuple[int, int] | None
) -> np.ndarray:
    """A frame's predicted mask of class ids, its header checked against the ground truth's
    (height, width) `gt_shape` before it is decoded; every failure a Problem of its kind."""
    data = mask_bytes(predictions, frame)
    where = predictions.where(frame)
    check_prediction_header(data, where, (gt_shape[1], gt_shape[0]), evaluation_size)
    with kind_of(UNDECODABLE):
        return decode_mask(data, where, role="prediction")
