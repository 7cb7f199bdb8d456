"""Reading and writing images and single-channel masks, with errors that name the file."""

import io
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import imagecodecs
import numpy as np
from PIL import Image, UnidentifiedImageError

from ..errors import SegbenchError
from .fileio import atomic_path
from .oserrors import file_error, from_the_file_system


def open_image(source: Path | BinaryIO, name: Path | str | None = None) -> Image.Image:
    """Open and fully decode `source` (a path, or a stream whose errors name `name`); a missing,
    unreadable or truncated file is a SegbenchError."""
    path = source if name is None else name
    try:
        with Image.open(source) as image:  # closes the file even when decoding fails
            image.load()
    except UnidentifiedImageError:
        raise SegbenchError(f"{path}: not a readable image") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        if from_the_file_system(exc):
            raise file_error(exc, path) from None
        raise SegbenchError(f"{path}: unreadable or truncated image ({exc})") from None
    return image


MASK_MODES = ("L", "P")  # 8-bit single channel; a palette image is read as its indices


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOUR_TYPES = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale with alpha", 6: "RGBA"}


@dataclass(frozen=True)
class PngHeader:
    """A PNG's IHDR chunk (the first chunk): what the file claims before any pixel is decoded."""

    width: int
    height: int
    bit_depth: int
    colour_type: int

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    @property
    def single_channel_8bit(self) -> bool:
        return self.bit_depth == 8 and self.colour_type in (0, 3)

    def describe(self) -> str:
        return f"{self.width}x{self.height}, {self.bit_depth}-bit {COLOUR_TYPES.get(self.colour_type, 'unknown colour type')}"


def png_header(data: bytes, name: Path | str) -> PngHeader:
    """The IHDR of PNG bytes `data`; anything that is not a PNG is a SegbenchError naming `name`."""
    if len(data) < 33 or data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise SegbenchError(f"{name}: not a PNG file (no PNG signature and IHDR header)")
    width, height, bit_depth, colour_type = struct.unpack(">IIBB", data[16:26])
    return PngHeader(width, height, bit_depth, colour_type)


def read_bytes(path: Path) -> bytes:
    """A file's bytes, every failure a SegbenchError naming it."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise file_error(exc, path) from None


def decode_grey8_png(data: bytes) -> np.ndarray | None:
    """The fast path for the common mask file: an 8-bit greyscale PNG, decoded by imagecodecs.

    imagecodecs (libpng with zlib-ng) decodes these ~30% faster than Pillow, to the same array
    (a test compares both on every mask the project ships and on edge cases). None for anything
    else (palette, other bit depths, transparency, not a PNG, damaged): the caller then decodes
    with Pillow, which reads every mode and words the error for a bad file.
    """
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


def check_png_crcs(data: bytes, name: Path | str) -> None:
    """Refuse a PNG any of whose chunks fails its CRC-32. libpng (the fast path) checks them;
    Pillow does not check the image data's (IDAT), so a damaged file would be read as if intact.
    Anything that is not a whole PNG is left to the decoder, which words its error."""
    if data[:8] != PNG_SIGNATURE:
        return
    view = memoryview(data)
    start = 8
    while start + 12 <= len(data):
        (length,) = struct.unpack(">I", view[start : start + 4])
        end = start + 12 + length
        if end > len(data):
            return
        kind = bytes(view[start + 4 : start + 8])
        if zlib.crc32(view[start + 4 : end - 4]) != struct.unpack(">I", view[end - 4 : end])[0]:
            raise SegbenchError(f"{name}: damaged PNG: the CRC of its {kind.decode('latin-1')} chunk is wrong")
        if kind == b"IEND":
            return
        start = end


def decode_mask(data: bytes, name: Path | str, role: str = "mask") -> np.ndarray:
    """Mask bytes as an (H, W) uint8 array ('L', or 'P' read as its indices); errors name `name`.
    A PNG with a damaged chunk (its CRC wrong) is refused, whichever decoder reads it."""
    mask = decode_grey8_png(data)
    if mask is not None:
        return mask
    check_png_crcs(data, name)
    image = open_image(io.BytesIO(data), name)
    if image.mode not in MASK_MODES:
        raise SegbenchError(f"{name}: " + WRONG_MODE[role].format(mode=image.mode))
    return np.asarray(image)


def read_mask(path: Path, role: str = "mask") -> np.ndarray:
    """A single-channel uint8 mask ('L', or 'P' read as its indices) as an (H, W) array."""
    return decode_mask(read_bytes(path), path, role)


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
    except (OSError, Image.DecompressionBombError) as exc:  # UnidentifiedImageError is an OSError
        if from_the_file_system(exc):
            raise file_error(exc, path) from None
        raise SegbenchError(f"{path}: not a readable image ({exc})") from None


def write_mask(path: Path, mask: np.ndarray) -> None:
    """Write an (H, W) uint8 mask as an 8-bit single-channel PNG, atomically."""
    if mask.dtype != np.uint8 or mask.ndim != 2:
        raise ValueError(f"mask must be a 2-D uint8 array, got {mask.dtype} {mask.shape}")
    with atomic_path(path) as partial:
        Image.fromarray(mask).save(partial, format="PNG")
