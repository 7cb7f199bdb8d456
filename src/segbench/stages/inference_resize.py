"""Logits to a mask, by the protocol's rules (segbench.stages.inference, step 4): the logits (any
resolution with the input's aspect) are resized bilinearly (align_corners=False, no antialias)
to the padded input size, the padding is cropped away, the rest is resized bilinearly to the
ground-truth size, and the argmax over classes (first maximum on ties) is the mask.

Both resizes are separable bilinear resizes: `bilinear` computes any window of the output as two
small matrix products (torch, on the model's device: CUDA); on the CPU the same values come from
the compiled kernels of `inference_kernels` (two weights per output value, one fused
multiply-add, as the matrix products accumulate them), fused with the argmax row by row, so a
150-class model at phone-photo ground-truth size never needs a (C, H, W) tensor at that size.
"""

from __future__ import annotations

import numpy as np
import torch

from . import inference_kernels as kernels
from .inference_geometry import Geometry


BAND_ELEMENTS = 1 << 24  # float32 elements per band when resizing logits to the ground truth
CPU_BAND_ELEMENTS = 1 << 22  # float32 elements of input-size logits per band on the CPU (16 MB, per helper thread)


def interpolation_matrix(n_in: int, n_out: int, start: int, stop: int, device: torch.device) -> torch.Tensor:
    """Rows start..stop-1 of the (n_out, n_in) matrix of 1-D linear resizing, align_corners=False.

    Output i reads source (i + 0.5) * n_in / n_out - 0.5, clamped to the edges, as
    F.interpolate(mode="bilinear", align_corners=False) without antialias does.
    """
    dst = torch.arange(start, stop, dtype=torch.float64, device=device)
    src = ((dst + 0.5) * (n_in / n_out) - 0.5).clamp(min=0.0)
    low = src.floor().long().clamp(max=n_in - 1)
    high = (low + 1).clamp(max=n_in - 1)
    frac = (src - low).to(torch.float32)
    matrix = torch.zeros((stop - start, n_in), dtype=torch.float32, device=device)
    rows = torch.arange(stop - start, device=device)
    matrix.index_put_((rows, low), 1 - frac, accumulate=True)
    matrix.index_put_((rows, high), frac, accumulate=True)
    return matrix


def bilinear(
    x: torch.Tensor, out_size: tuple[int, int], rows: tuple[int, int] | None = None, cols: tuple[int, int] | None = None
) -> torch.Tensor:
    """Rows rows[0]..rows[1]-1 and columns cols[0]..cols[1]-1 of x (C, h, w) resized to out_size.

    Bilinear resizing is separable, so any window of the output is two small matrix products
    (rows, then columns): the sampling of F.interpolate(mode="bilinear", align_corners=False).
    """
    rows = rows or (0, out_size[0])
    cols = cols or (0, out_size[1])
    vertical = interpolation_matrix(x.shape[1], out_size[0], *rows, x.device).to(x.dtype)
    horizontal = interpolation_matrix(x.shape[2], out_size[1], *cols, x.device).to(x.dtype)
    return torch.matmul(torch.matmul(vertical, x), horizontal.T)


def logits_to_mask(logits: torch.Tensor, geometry: Geometry) -> np.ndarray:
    """(C, h', w') logits of one padded input -> (H, W) uint8 argmax at the ground-truth size."""
    if logits.device.type == "cpu":
        return mask_from_array(logits.float().numpy(), geometry)
    return device_mask(logits, geometry).cpu().numpy()


def mask_from_array(logits: np.ndarray, geometry: Geometry) -> np.ndarray:
    """logits_to_mask of float32 (C, h', w') logits in memory, with the compiled kernels of
    `inference_kernels` (no torch: it releases the GIL, so it runs in helper threads). The mask
    is made in bands of its rows, each from the band of the input-size logits it reads, made
    only then: a 150-class model's logits at the input size are never whole in memory (184 MB
    a frame at 640 x 480, in each helper thread)."""
    height, width = geometry.input
    target_h, target_w = geometry.target
    channels = logits.shape[0]
    same = (target_h, target_w) == (height, width)
    mask = np.empty((target_h, target_w), np.uint8)
    band = max(1, CPU_BAND_ELEMENTS * target_h // (channels * width * height))  # mask rows per band
    for top in range(0, target_h, band):
        rows = (top, min(target_h, top + band))
        first, last = rows if same else kernels.source_rows(height, target_h, rows)
        if tuple(logits.shape[1:]) == geometry.padded:
            block = logits[:, first:last, :width]
        else:
            block = kernels.resize(logits, geometry.padded, (first, last), (0, width))
        mask[rows[0]:rows[1]] = kernels.argmax(block) if same else kernels.resize_argmax(
            block, geometry.target, rows, (height, first))
    return mask


def device_mask(logits: torch.Tensor, geometry: Geometry) -> torch.Tensor:
    """logits_to_mask with torch operations on the logits' device: an (H, W) uint8 tensor there."""
    logits = logits.float()
    height, width = geometry.input
    if tuple(logits.shape[1:]) == geometry.padded:
        cropped = logits[:, :height, :width]
    else:
        cropped = bilinear(logits, geometry.padded, (0, height), (0, width))
    target_h, target_w = geometry.target
    mask = torch.empty((target_h, target_w), dtype=torch.uint8, device=logits.device)
    band = max(1, BAND_ELEMENTS // (cropped.shape[0] * (target_w + width)))
    for top in range(0, target_h, band):
        bottom = min(target_h, top + band)
        if (target_h, target_w) == (height, width):
            block = cropped[:, top:bottom]
        else:
            block = bilinear(cropped, (target_h, target_w), (top, bottom))
        mask[top:bottom] = block.argmax(dim=0).to(torch.uint8)
    return mask
