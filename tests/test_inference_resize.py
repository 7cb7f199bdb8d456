"""Logits to a mask (segbench.stages.inference_resize): the separable bilinear resize, windows, bands."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from inference_fixtures import LOGITS_TO_MASK_CASES

from segbench.stages import inference_kernels as kernels
from segbench.stages import inference_resize
from segbench.stages.inference_geometry import Geometry
from segbench.stages.inference_resize import bilinear, device_mask, logits_to_mask


@pytest.mark.parametrize("out_size", [(20, 33), (5, 4), (7, 11), (3, 40)])
def test_bilinear_matches_interpolate(out_size):
    x = torch.randn(3, 7, 11, generator=torch.Generator().manual_seed(0))
    reference = F.interpolate(x[None], size=out_size, mode="bilinear", align_corners=False)[0]
    torch.testing.assert_close(bilinear(x, out_size), reference, rtol=0, atol=1e-5)


def test_bilinear_window_is_the_same_values():
    x = torch.randn(4, 9, 13, generator=torch.Generator().manual_seed(1))
    full = bilinear(x, (30, 41))
    assert torch.equal(bilinear(x, (30, 41), (3, 17), (5, 40)), full[:, 3:17, 5:40])
    assert torch.equal(bilinear(x, (9, 13)), x)  # the same size is the identity, exactly


@pytest.mark.parametrize(
    ("logits_hw", "geometry"),
    LOGITS_TO_MASK_CASES,
)
@pytest.mark.parametrize("band_elements", [1, 5 * 64 * 3, 5 * 64 * 7])
def test_cpu_bands_do_not_change_the_mask(monkeypatch, logits_hw, geometry, band_elements):
    """The mask made band by band (from 1 mask row a band up) equals the one made from the
    whole input-size logits: resized whole, cropped, then resized and argmaxed whole."""
    logits = np.random.default_rng(2).standard_normal((5, *logits_hw)).astype(np.float32)
    logits[:, ::7, ::5] = 0.5  # exact ties between classes
    height, width = geometry.input
    if logits_hw == geometry.padded:
        cropped = logits[:, :height, :width]
    else:
        cropped = kernels.resize(logits, geometry.padded, (0, height), (0, width))
    whole = kernels.argmax(cropped) if geometry.target == geometry.input else kernels.resize_argmax(
        cropped, geometry.target)
    monkeypatch.setattr(inference_resize, "CPU_BAND_ELEMENTS", band_elements)
    banded = logits_to_mask(torch.from_numpy(logits), geometry)
    assert banded.shape == geometry.target and banded.dtype == np.uint8
    assert np.array_equal(banded, whole)


def test_a_band_of_rows_reads_only_its_source_rows():
    """resize_argmax of output rows 10..19 from the source rows source_rows names equals those
    rows of the whole; the rows outside them are not read (NaN there would win the argmax)."""
    x = np.random.default_rng(3).standard_normal((4, 30, 20)).astype(np.float32)
    whole = kernels.resize_argmax(x, (71, 45))
    first, last = kernels.source_rows(30, 71, (10, 20))
    assert (first, last) == (3, 9)  # output row i reads (i + 0.5) * 30 / 71 - 0.5: rows 3.94 .. 7.74
    band = x[:, first:last].copy()
    poisoned = np.full_like(x, np.nan)
    poisoned[:, first:last] = band
    assert np.array_equal(kernels.resize_argmax(band, (71, 45), (10, 20), (30, first)), whole[10:20])
    assert np.array_equal(kernels.resize_argmax(poisoned, (71, 45), (10, 20)), whole[10:20])


def test_banding_does_not_change_the_device_mask(monkeypatch):
    logits = torch.randn(5, 20, 30, generator=torch.Generator().manual_seed(2))
    geometry = Geometry((40, 60), (40, 60), (48, 64), (97, 143))
    whole = device_mask(logits, geometry)
    monkeypatch.setattr(inference_resize, "BAND_ELEMENTS", 5 * 200)  # a band of a few rows
    assert torch.equal(device_mask(logits, geometry), whole)
