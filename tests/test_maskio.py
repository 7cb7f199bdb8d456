"""The fast PNG path (imagecodecs) decodes masks bit for bit as Pillow does, and defers otherwise."""

import io
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.errors import SegbenchError
from segbench.io.maskio import decode_grey8_png, decode_mask, read_mask

ROOT = Path(__file__).resolve().parents[1]


def pillow(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image)


def test_every_mask_the_project_ships_decodes_as_with_pillow():
    masks = [p for folder in ("data/labels", "data-idd/gtFine", "data-easyportrait/annotations") for p in (ROOT / folder).rglob("*.png")]
    assert len(masks) >= 80, "the DVC-pinned datasets are not pulled (make setup)"
    for path in masks:
        fast = decode_grey8_png(path.read_bytes())
        assert fast is not None, path  # all of them are 8-bit greyscale: the fast path applies
        np.testing.assert_array_equal(fast, pillow(path), err_msg=str(path))


def save(tmp_path: Path, name: str, image: Image.Image, **options) -> Path:
    path = tmp_path / name
    image.save(path, **options)
    return path


@pytest.fixture
def values() -> np.ndarray:
    rng = np.random.default_rng(2)
    return rng.integers(0, 256, (37, 53), dtype=np.uint8)  # odd size, the whole byte range


def test_8bit_grey_plain_optimised_and_unfiltered(tmp_path, values):
    for name, options in [("plain.png", {}), ("optimised.png", {"optimize": True}), ("level0.png", {"compress_level": 0})]:
        path = save(tmp_path, name, Image.fromarray(values), **options)
        np.testing.assert_array_equal(decode_grey8_png(path.read_bytes()), values)


def adam7_png(values: np.ndarray) -> bytes:
    """An Adam7-interlaced 8-bit greyscale PNG, written by hand (Pillow cannot write one)."""
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    rows = [b"\x00" + row.tobytes() for x0, y0, dx, dy in passes for row in values[y0::dy, x0::dx] if row.size]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", values.shape[1], values.shape[0], 8, 0, 0, 0, 1)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b"")


def test_adam7_interlaced_grey(tmp_path, values):
    path = tmp_path / "interlaced.png"
    path.write_bytes(adam7_png(values))
    assert pillow(path).shape == values.shape
    np.testing.assert_array_equal(pillow(path), values)
    np.testing.assert_array_equal(decode_grey8_png(path.read_bytes()), values)


def test_palette_masks_are_read_as_their_indices_by_pillow(tmp_path, values):
    image = Image.fromarray(values, mode="L").convert("P")  # identity-like palette, indices kept
    image.putpalette([c for v in range(256) for c in (v, 255 - v, 0)])
    path = save(tmp_path, "palette.png", image)
    assert decode_grey8_png(path.read_bytes()) is None  # imagecodecs would expand the palette to colours
    np.testing.assert_array_equal(read_mask(path), pillow(path))
    np.testing.assert_array_equal(read_mask(path, role="prediction"), pillow(path))


def test_grey_with_transparency_goes_to_pillow(tmp_path, values):
    path = save(tmp_path, "trns.png", Image.fromarray(values), transparency=5)
    assert decode_grey8_png(path.read_bytes()) is None  # imagecodecs adds an alpha channel
    np.testing.assert_array_equal(read_mask(path), values)


def test_other_bit_depths_and_colour_are_refused_as_before(tmp_path, values):
    sixteen = save(tmp_path, "sixteen.png", Image.fromarray(values.astype(np.uint16) * 200))
    colour = save(tmp_path, "colour.png", Image.fromarray(np.stack([values] * 3, axis=-1)))
    bilevel = save(tmp_path, "bilevel.png", Image.fromarray(values > 127))
    for path in (sixteen, colour, bilevel):
        assert decode_grey8_png(path.read_bytes()) is None
        with pytest.raises(SegbenchError, match=f"{path.name}: mask must be single-channel 8-bit"):
            read_mask(path)
    with pytest.raises(SegbenchError, match="colour.png: prediction has mode RGB"):
        read_mask(colour, role="prediction")


def test_damaged_files_get_pillows_error_naming_the_file(tmp_path, values):
    good = save(tmp_path, "good.png", Image.fromarray(values))
    data = good.read_bytes()
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(data[: len(data) // 2])
    corrupt = tmp_path / "corrupt.png"
    corrupt.write_bytes(data[:60] + bytes(b ^ 0x5A for b in data[60:120]) + data[120:])
    for path, message in ((truncated, "unreadable or truncated image"),
                          (corrupt, "damaged PNG: the CRC of its IDAT chunk is wrong")):
        assert decode_grey8_png(path.read_bytes()) is None
        with pytest.raises(SegbenchError, match=f"{path.name}: {message}"):
            read_mask(path)
    with pytest.raises(SegbenchError, match="missing.png: file not found"):
        read_mask(tmp_path / "missing.png")
    jpeg = tmp_path / "mask.jpg"
    Image.fromarray(values).save(jpeg)
    np.testing.assert_array_equal(read_mask(jpeg), pillow(jpeg))  # not a PNG: Pillow decodes it


def with_wrong_idat_crc(data: bytes) -> bytes:
    """The PNG `data` with only its first IDAT chunk's CRC changed: every pixel byte intact."""
    start = data.index(b"IDAT") - 4
    (length,) = struct.unpack(">I", data[start : start + 4])
    crc = start + 8 + length
    return data[:crc] + bytes(b ^ 0xFF for b in data[crc : crc + 4]) + data[crc + 4 :]


@pytest.mark.parametrize("mode", ["L", "P"])
def test_a_png_whose_only_fault_is_its_idat_crc_is_refused(tmp_path, values, mode):
    """libpng refuses it and Pillow (the fallback, and the decoder of palette masks) would read it
    whole: the file is damaged, whichever part, so it is refused naming the file and the chunk."""
    image = Image.fromarray(values) if mode == "L" else Image.fromarray(values).convert("P")
    data = save(tmp_path, "good.png", image).read_bytes()
    np.testing.assert_array_equal(decode_mask(data, "good.png"), np.asarray(image))
    damaged = with_wrong_idat_crc(data)
    with pytest.raises(SegbenchError) as info:
        decode_mask(damaged, "damaged.png", role="prediction")
    assert str(info.value) == "damaged.png: damaged PNG: the CRC of its IDAT chunk is wrong"


def test_a_png_whose_header_lies_about_its_size_is_not_trusted(tmp_path, values):
    data = bytearray(io.BytesIO(save(tmp_path, "ok.png", Image.fromarray(values)).read_bytes()).getvalue())
    data[16:20] = (54).to_bytes(4, "big")  # width 54 instead of 53: the IHDR CRC no longer matches
    path = tmp_path / "lying.png"
    path.write_bytes(bytes(data))
    assert decode_grey8_png(path.read_bytes()) is None
    with pytest.raises(SegbenchError, match="lying.png"):
        read_mask(path)
