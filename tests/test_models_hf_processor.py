"""A Hugging Face folder's image processor read as a pixel map (segbench.models.hf_processor): the
maps of the families' processors, derived by hand from their settings, and the settings refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import transformers as T

from segbench.errors import SegbenchError
from segbench.models.base import Normalization
from segbench.models import hf_processor
from segbench.models.hf_processor import PixelMap, processor_pixels

IMAGENET = Normalization((0.485 * 255, 0.456 * 255, 0.406 * 255), (0.229 * 255, 0.224 * 255, 0.225 * 255))
HALF = Normalization((127.5,) * 3, (127.5,) * 3)


def saved(folder: Path, processor) -> dict:
    processor.save_pretrained(folder)
    return json.loads((folder / "preprocessor_config.json").read_text())


def close(pixels: PixelMap, expected: PixelMap) -> None:
    assert pixels.order == expected.order
    np.testing.assert_allclose(pixels.normalization.mean, expected.normalization.mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(pixels.normalization.std, expected.normalization.std, rtol=1e-12)


@pytest.mark.parametrize(
    "processor, expected",
    [
        (T.SegformerImageProcessorPil(), PixelMap(IMAGENET, (0, 1, 2))),
        # MobileViT: BGR, rescaled to 0..1, never normalised (its file has no do_normalize)
        (T.MobileViTImageProcessorPil(), PixelMap(Normalization((0.0,) * 3, (255.0,) * 3), (2, 1, 0))),
        (
            T.MobileViTImageProcessorPil(do_flip_channel_order=False),
            PixelMap(Normalization((0.0,) * 3, (255.0,) * 3), (0, 1, 2)),
        ),
        (T.BeitImageProcessorPil(do_reduce_labels=True), PixelMap(HALF, (0, 1, 2))),  # labels only
        (T.DPTImageProcessorPil(keep_aspect_ratio=True, ensure_multiple_of=32, do_pad=True), PixelMap(HALF, (0, 1, 2))),
        (T.MobileNetV2ImageProcessorPil(), PixelMap(HALF, (0, 1, 2))),
        (T.ConvNextImageProcessorPil(), PixelMap(HALF, (0, 1, 2))),
        (
            T.BitImageProcessorPil(),
            PixelMap(
                Normalization.from_unit_scale(T.BitImageProcessorPil.image_mean, T.BitImageProcessorPil.image_std),
                (0, 1, 2),
            ),
        ),
        (T.Mask2FormerImageProcessorPil(), PixelMap(IMAGENET, (0, 1, 2))),
        (T.MaskFormerImageProcessorPil(ignore_index=255), PixelMap(IMAGENET, (0, 1, 2))),
        (T.OneFormerImageProcessorPil(), PixelMap(IMAGENET, (0, 1, 2))),
        (
            T.SegformerImageProcessorPil(
                do_rescale=False, image_mean=[123.675, 116.28, 103.53], image_std=[58.395, 57.12, 57.375]
            ),
            PixelMap(Normalization((123.675, 116.28, 103.53), (58.395, 57.12, 57.375)), (0, 1, 2)),
        ),
        (
            T.SegformerImageProcessorPil(do_normalize=False),
            PixelMap(Normalization((0.0,) * 3, (255.0,) * 3), (0, 1, 2)),
        ),
        (
            T.SegformerImageProcessorPil(do_normalize=False, do_rescale=False),
            PixelMap(Normalization((0.0,) * 3, (1.0,) * 3), (0, 1, 2)),
        ),
        (
            T.SegformerImageProcessorPil(rescale_factor=1 / 127.5, image_mean=0.5, image_std=0.25),
            PixelMap(Normalization((63.75,) * 3, (31.875,) * 3), (0, 1, 2)),
        ),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, PixelMap) else "",
)
def test_pixel_map_of_each_processor(tmp_path, processor, expected):
    close(processor_pixels(saved(tmp_path, processor), tmp_path, "any"), expected)


def test_mobilevit_ignores_a_normalisation_in_its_file_as_its_processor_does(tmp_path):
    config = {**saved(tmp_path, T.MobileViTImageProcessorPil()), "do_normalize": True, "image_mean": [0.2, 0.3, 0.4]}
    close(processor_pixels(config, tmp_path, "mobilevit"), PixelMap(Normalization((0.0,) * 3, (255.0,) * 3), (2, 1, 0)))


def test_a_file_without_a_class_gets_its_model_types_processor(tmp_path):
    assert processor_pixels({}, tmp_path, "mobilevit").order == (2, 1, 0)
    close(
        processor_pixels({"feature_extractor_type": "SegformerFeatureExtractor"}, tmp_path, "beit"),
        PixelMap(IMAGENET, (0, 1, 2)),
    )


def test_settings_at_their_class_default_and_geometry_and_label_settings_are_accepted(tmp_path):
    config = {
        "image_processor_type": "SegformerImageProcessor",
        "do_resize": True,
        "size": {"height": 7, "width": 9},
        "do_center_crop": True,
        "crop_pct": 0.5,
        "size_divisor": 7,
        "keep_aspect_ratio": True,
        "do_reduce_labels": True,
        "reduce_labels": True,
        "ignore_index": 255,
        "processor_class": "X",
        "default_to_square": True,
    }
    close(processor_pixels(config, tmp_path, "segformer"), PixelMap(IMAGENET, (0, 1, 2)))


def refusal(config: dict, tmp_path: Path, model_type: str = "segformer") -> str:
    with pytest.raises(SegbenchError) as info:
        processor_pixels(config, tmp_path, model_type)
    return str(info.value)


def test_unknown_class_and_unknown_settings_are_refused(tmp_path):
    where = tmp_path / "preprocessor_config.json"
    assert refusal({"image_processor_type": "VivitImageProcessor"}, tmp_path).startswith(
        f"{where}: image processor VivitImageProcessor is not one segbench can follow (known: ['BeitImageProcessor', "
    )
    assert refusal({}, tmp_path, "sapiens2").startswith(
        f"{where}: image processor (none named, none known for sapiens2)"
    )
    assert refusal({"image_processor_type": 3}, tmp_path) == (
        f"{where}: field 'image_processor_type' must be a class name, got 3"
    )
    follows = "['do_convert_rgb', 'do_normalize', 'do_rescale', 'image_mean', 'image_std', 'rescale_factor']"
    assert refusal({"image_processor_type": "SegformerImageProcessor", "do_gamma": 2.2}, tmp_path) == (
        f"{where}: setting 'do_gamma' = 2.2 is not one segbench can honour for SegformerImageProcessorPil "
        f"(it follows {follows}; the benchmark's resolution rule replaces the geometry)"
    )
    # a flag of another family, which this class would silently ignore
    assert "setting 'do_flip_channel_order' = True is not one" in refusal(
        {"image_processor_type": "SegformerImageProcessor", "do_flip_channel_order": True}, tmp_path
    )
    assert refusal({"image_processor_type": "SegformerImageProcessor", "image_mean": [0.5, 0.5]}, tmp_path) == (
        f"{where}: SegformerImageProcessorPil cannot prepare a frame with these settings: "
        "mean must have 3 elements if it is an iterable, got 2"
    )


class GreyProcessor(T.SegformerImageProcessorPil):
    """Mixes the channels (a grey image): no per-channel map."""

    def _preprocess(self, images, **kwargs):
        return [np.repeat(image.mean(axis=0, keepdims=True), 3, axis=0) for image in images]


class StandardisingProcessor(T.SegformerImageProcessorPil):
    """Standardises each image by its own statistics: a different map for every image."""

    def _preprocess(self, images, **kwargs):
        return [(image - image.mean()) / image.std() for image in images]


@pytest.mark.parametrize(
    "processor, message",
    [
        (GreyProcessor, "GreyProcessor's output channel 0 is not a rescaled input channel"),
        (
            StandardisingProcessor,
            "StandardisingProcessor's pixel step depends on the image; segbench applies one "
            "per-channel map to every frame",
        ),
    ],
)
def test_a_pixel_step_that_is_not_one_per_channel_map_is_refused(tmp_path, monkeypatch, processor, message):
    monkeypatch.setattr(hf_processor, "_processor_class", lambda *_: processor)
    assert refusal({"image_processor_type": "SegformerImageProcessor"}, tmp_path) == (
        f"{tmp_path / 'preprocessor_config.json'}: {message}"
    )
