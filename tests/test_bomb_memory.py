"""The memory bombs are refused cheaply: a 0.5 MB PNG prediction that decodes to 524 MB, a
checkpoint whose architecture arguments ask for 57.6 GB of weights, and an 8.7 KB checkpoint of
zero-stride tensors shaped for gigabytes. Peak RSS is measured in a
subprocess running the one-shot command (torch imported, as in a real run) and must stay under
500 MB."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import torch
from PIL import Image

from pv_fixtures import clean_frames, make_dataset
from segbench.models.architectures import build
from segbench.models.checkpoint import save_checkpoint
from segbench.protocols.definitions import load_label_space

ROOT = Path(__file__).resolve().parents[1]
LIMIT_KB = 500 * 1024
# VmHWM, not getrusage's ru_maxrss: Linux carries ru_maxrss over exec from the forking parent
# (pytest, which may have grown past the limit itself).
PEAK = """
import sys
from segbench.commands.oneshot import main
code = main(sys.argv[1:])
hwm = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("PEAK_KB", hwm, "CODE", code)
"""


def png_of_zeros(width: int, height: int) -> bytes:
    """A real 8-bit greyscale PNG of zeros: every row compressed, so it would decode in full."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    packer = zlib.compressobj(9)
    rows = bytes(width + 1) * 256  # filter byte 0 + the row, 256 rows at a time
    body = b"".join(packer.compress(rows) for _ in range(height // 256)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def peak(args: list[str], cwd: Path) -> tuple[int, int, str]:
    done = subprocess.run([sys.executable, "-c", PEAK, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    line = [s for s in done.stdout.splitlines() if s.startswith("PEAK_KB")]
    assert line, done.stderr[-2000:]
    _, kb, _, code = line[0].split()
    return int(kb), int(code), done.stderr


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_dataset(tmp_path_factory.mktemp("bombs"), clean_frames())  # labels 20 x 16


def test_png_bomb_prediction_is_refused_under_500_mb(data, tmp_path):
    preds = tmp_path / "preds"
    preds.mkdir()
    Image.open(data / "labels" / "d1.png").save(preds / "d1.png", compress_level=0)  # its label, not byte for byte
    bomb = png_of_zeros(25600, 20480)  # the ground truth's aspect, 1280 times its sides: 524 MB of pixels
    assert len(bomb) < 1 << 20
    (preds / "e1.png").write_bytes(bomb)
    kb, code, err = peak(["--data", str(data), "--checkpoint", str(preds), "--checkpoint-kind", "predictions",
                          "--label-space", "painting-vision-10", "--work-dir", str(tmp_path / "work")], ROOT)
    assert code == 1 and "e1.png: prediction is 25600x20480" in err
    print(f"PNG bomb: peak RSS {kb / 1024:.0f} MB")
    assert kb <= LIMIT_KB


HUGE = ("architecture 'tiny-segnet' {'widths': [40000, 40000, 40000]} with 10 classes has 57602120014 parameters "
        "and buffers, more than the limit of 2147483648")


def zero_stride_state(widths: list[int]) -> dict[str, torch.Tensor]:
    """The architecture's state dict shaped for `widths`, every tensor one stored value repeated."""
    with torch.device("meta"):
        shapes = build("tiny-segnet", {"widths": widths}, 10).state_dict()
    return {k: torch.zeros((), dtype=v.dtype).expand(v.shape) for k, v in shapes.items()}


@pytest.mark.parametrize("widths, zero_strides, refusal", [
    # 57.6e9 parameters asked for by the arguments: refused on the meta device, before the tensors are looked at
    ([40000, 40000, 40000], False, HUGE),
    ([40000, 40000, 40000], True, HUGE),
    # 1.3e9 parameters (under the limit) in an 8.7 KB file: the first isfinite would allocate 1.3 GB
    ([6000, 6000, 6000], True, "state_dict refused: tensor 'stage1.0.weight' of shape (6000, 3, 3, 3) has zero or "
                               "overlapping strides (0, 0, 0, 0): 162000 elements from 1 stored values"),
])
def test_checkpoint_asking_for_gigabytes_is_refused_under_500_mb(data, tmp_path, widths, zero_strides, refusal):
    space = load_label_space("painting-vision-10")
    save_checkpoint(tmp_path / "tiny.pt", build("tiny-segnet", {"widths": [4, 8, 8]}, 10), "tiny-segnet",
                    {"widths": [4, 8, 8]}, space, {"mean": [0.5] * 3, "std": [0.25] * 3})
    doc = torch.load(tmp_path / "tiny.pt", weights_only=True)
    doc["arguments"] = {"widths": widths}
    if zero_strides:
        doc["state_dict"] = zero_stride_state(widths)
    torch.save(doc, tmp_path / "hostile.pt")
    assert not zero_strides or (tmp_path / "hostile.pt").stat().st_size < 10 << 10
    kb, code, err = peak(["--data", str(data), "--checkpoint", str(tmp_path / "hostile.pt"),
                          "--work-dir", str(tmp_path / "work")], ROOT)
    assert code == 1 and f"hostile.pt: {refusal}" in err, err
    print(f"checkpoint bomb {widths} (zero strides: {zero_strides}): peak RSS {kb / 1024:.0f} MB")
    assert kb <= LIMIT_KB
