"""Logits to a mask (segbench.stages.inference_resize): the separable bilinear resize, windows, bands."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

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


def test_banding_does_not_change_the_mask(monkeypatch):
    logits = torch.randn(5, 20, 30, generator=torch.Generator().manual_seed(2))
    geometry = Geometry((40, 60), (40, 60), (48, 64), (97, 143))
    whole = logits_to_mask(logits, geometry)
    monkeypatch.setattr(inference_resize, "BAND_ELEMENTS", 5 * 200)  # a band of a few rows
    assert np.array_equal(logits_to_mask(logits, geometry), whole)
    assert whole.shape == (97, 143) and whole.dtype == np.uint8


def test_banding_does_not_change_the_device_mask(monkeypatch):
    logits = torch.randn(5, 20, 30, generator=torch.Generator().manual_seed(2))
    geometry = Geometry((40, 60), (40, 60), (48, 64), (97, 143))
    whole = device_mask(logits, geometry)
    monkeypatch.setattr(inference_resize, "BAND_ELEMENTS", 5 * 200)  # a band of a few rows
    assert torch.equal(device_mask(logits, geometry), whole)
