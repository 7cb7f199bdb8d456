"""Reading and writing images and single-channel masks, with errors that name the file."""

import struct
from pathlib import Path

import imagecodecs
import numpy as np
from PIL import Image, UnidentifiedImageError

from .errors import SegbenchError
from .fileio import atomic_path


def open_image(path: Path) -> Image.Image:
    """Open and fully decode `path`; a missing, unreadable or truncated file is a SegbenchError."""
    try:
        with Image.open(path) as image:  # closes the file even when decoding fails
            image.load()
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found") from None
    except UnidentifiedImageError:
        raise SegbenchError(f"{path}: not a readable image") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise SegbenchError(f"{path}: unreadable or truncated image ({exc})") from None
    return image


MASK_MODES = ("L", "P")  # 8-bit single channel; a palette image is read as its indices


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def decode_grey8_png(path: Path) -> np.ndarray | None:
    """The fast path for the common mask file: an 8-bit greyscale PNG, decoded by imagecodecs.

    imagecodecs (libpng with zlib-ng) decodes these ~30% faster than Pillow, to the same array
    (a test compares both on every mask the project ships and on edge cases). None for anything
    else (palette, other bit depths, transparency, not a PNG, damaged): the caller then decodes
    with Pillow, which reads every mode and words the error for a bad file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found") from None
    except OSError as exc:
        raise SegbenchError(f"{path}: unreadable ({exc.strerror})") from None
    # IHDR is the first chunk: width, height, bit depth, colour type (0 = greyscale).
    if len(data) < 33 or data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR" or data[24:26] != b"\x08\x00":
        return None
    try:
        mask = imagecodecs.png_decode(data)
    except imagecodecs.PngError:
        return None
    width, height = struct.unpack(">II", data[16:24])
    return mask if mask.dtype == np.uint8 and mask.shape == (height, width) else None


WRONG_MODE = {  # what a mask of the wrong mode is told, by the role the file plays
    "mask": "mask must be single-channel 8-bit (mode L or P), got mode {mode}",
    "prediction": "prediction has mode {mode}; a prediction must be an 8-bit single-channel PNG "
    "(mode L, or P read as its indices) holding class ids, not a colour rendering",
}


def read_mask(path: Path, role: str = "mask") -> np.ndarray:
    """A single-channel uint8 mask ('L', or 'P' read as its indices) as an (H, W) array."""
    mask = decode_grey8_png(path)
    if mask is not None:
        return mask
    image = open_image(path)
    if image.mode not in MASK_MODES:
        raise SegbenchError(f"{path}: " + WRONG_MODE[role].format(mode=image.mode))
    return np.asarray(image)


def read_rgb(path: Path) -> np.ndarray:
    """An (H, W, 3) uint8 RGB array; grey or palette images are converted."""
    image = open_image(path)
    if image.mode != "RGB":
        image = image.convert("RGB")
    return np.asarray(image)


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) from the header, without decoding pixels."""
    try:
        with Image.open(path) as image:
            return image.size
    except FileNotFoundError:
        raise SegbenchError(f"{path}: file not found") from None
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise SegbenchError(f"{path}: not a readable image ({exc})") from None


def write_mask(path: Path, mask: np.ndarray) -> None:
    """Write an (H, W) uint8 mask as an 8-bit single-channel PNG, atomically."""
    if mask.dtype != np.uint8 or mask.ndim != 2:
        raise ValueError(f"mask must be a 2-D uint8 array, got {mask.dtype} {mask.shape}")
    with atomic_path(path) as partial:
        Image.fromarray(mask).save(partial, format="PNG")
