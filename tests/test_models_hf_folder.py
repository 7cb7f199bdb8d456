"""A Hugging Face folder read before its weights (segbench.models.hf_folder): the processor's normalisation."""

from __future__ import annotations

from segbench.models.base import Normalization
from segbench.models.hf_folder import processor_normalization


def test_segformer_normalisation_without_rescale(tmp_path):
    pre = {"do_rescale": False, "image_mean": [123.675, 116.28, 103.53], "image_std": [58.395, 57.12, 57.375]}
    assert processor_normalization(pre, tmp_path) == Normalization((123.675, 116.28, 103.53), (58.395, 57.12, 57.375))
    assert processor_normalization({"do_normalize": False}, tmp_path) == Normalization((0.0, 0.0, 0.0), (255.0, 255.0, 255.0))
