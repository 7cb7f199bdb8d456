"""What a Hugging Face folder's image processor does to a frame's pixels, learnt from the processor
itself (segbench.models.hf applies it).

The benchmark's resolution rule owns the geometry: the inference size, the resize, the padding
(bottom/right to the stride, with the value that the processor's map sends to 0) and the way back
to the ground truth. Everything else comes from the library's own processor class (its PIL
backend), built from preprocessor_config.json: channel order (MobileViT's
`do_flip_channel_order`), rescale and its factor, normalisation and its flag (MobileViT's
processor never normalises, whatever the file says), mean and std. That processor is run, with its
resize, crop and pad turned off, on two probe images; the map it applies,

    out[c] = (x[order[c]] - mean[c]) / std[c]      on 0..255 pixels,

is read off its output on the first and must reproduce its output on both (to float rounding);
mean and std are then the exact values of the processor's settings they match.
A processor whose pixel step is not such a map (it mixes channels, depends on the image, changes
the size) is refused, as are a processor class segbench does not know and a setting it cannot
honour (`ROLES` says what each known setting is; any other must keep its class default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SegbenchError
from .base import Normalization

# The processor classes whose pixel steps are known to be a per-channel map (their PIL backends are
# the same name + "Pil"); docs/models.md says which family each serves.
PROCESSORS = (
    "BeitImageProcessor",
    "BitImageProcessor",
    "ConvNextImageProcessor",
    "DPTImageProcessor",
    "Mask2FormerImageProcessor",
    "MaskFormerImageProcessor",
    "MobileNetV2ImageProcessor",
    "MobileViTImageProcessor",
    "OneFormerImageProcessor",
    "SegformerImageProcessor",
)
# preprocessor_config.json's settings: "pixels" are given to the processor and followed;
# "geometry" is the benchmark's resolution rule's (turned off in the processor); "labels" acts on
# ground-truth maps or training text only; "record" names the class.
ROLES = {
    "pixels": ("do_rescale", "rescale_factor", "do_normalize", "image_mean", "image_std", "do_flip_channel_order",
               "do_convert_rgb"),
    "geometry": ("do_resize", "size", "resample", "default_to_square", "do_center_crop", "crop_size", "crop_pct",
                 "do_pad", "pad_size", "size_divisor", "size_divisibility", "max_size", "ensure_multiple_of",
                 "keep_aspect_ratio"),
    "labels": ("do_reduce_labels", "reduce_labels", "ignore_index", "num_labels", "class_info_file", "repo_path",
               "metadata", "num_text"),
    "record": ("image_processor_type", "feature_extractor_type", "processor_class"),
}
SETTINGS = {key: role for role, keys in ROLES.items() for key in keys}
_MISSING = object()
GEOMETRY_OFF = {"do_resize": False, "do_center_crop": False, "do_pad": False}
PROBE_SHAPE = (3, 8, 32)
TOLERANCE = 1e-5  # of the output's magnitude: float32 rounding of the processor's arithmetic
SNAP = 1e-4  # relative: a fitted mean or std this near a value of the processor's settings is that value


@dataclass(frozen=True)
class PixelMap:
    """out = normalization(x)[order]: `normalization` per INPUT channel in 0..255 units, so that its
    mean is the padding that maps to 0; `order[c]` the input channel of output channel c."""

    normalization: Normalization
    order: tuple[int, int, int]


def processor_pixels(config: Mapping[str, Any], path: Path, model_type: str) -> PixelMap:
    """The pixel map of the folder's image processor, built from its preprocessor_config.json."""
    where = path / "preprocessor_config.json"
    cls = _processor_class(config, where, model_type)
    _check_settings(config, cls, where)
    pixels = {k: v for k, v in config.items() if SETTINGS.get(k) == "pixels"}
    try:
        processor = cls(**pixels)
        probes = _probes()
        outputs = [_run(processor, probe) for probe in probes]
    except Exception as exc:  # the processor's own checks raise ValueError, TypeError, ...
        raise SegbenchError(f"{where}: {cls.__name__} cannot prepare a frame with these settings: {exc}") from None
    fitted = _fit(probes[0], outputs[0], processor, where)
    for probe, output in zip(probes, outputs):
        if np.abs(_apply(fitted, probe) - output).max() > TOLERANCE * max(1.0, np.abs(output).max()):
            raise SegbenchError(
                f"{where}: {cls.__name__}'s pixel step depends on the image; "
                "segbench applies one per-channel map to every frame"
            )
    return fitted


def _processor_class(config: Mapping[str, Any], where: Path, model_type: str) -> type:
    import transformers  # slow import: only when needed
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES

    name = config.get("image_processor_type") or config.get("feature_extractor_type")
    if name is None:
        backends = IMAGE_PROCESSOR_MAPPING_NAMES.get(model_type) or {}
        name = backends.get("pil") or ""
    if not isinstance(name, str):
        raise SegbenchError(f"{where}: field 'image_processor_type' must be a class name, got {name!r}")
    base = name.replace("FeatureExtractor", "ImageProcessor").removesuffix("Fast").removesuffix("Pil")
    if base not in PROCESSORS:
        raise SegbenchError(
            f"{where}: image processor {name or '(none named, none known for ' + model_type + ')'} is not one "
            f"segbench can follow (known: {list(PROCESSORS)})"
        )
    return getattr(transformers, base + "Pil")


def _check_settings(config: Mapping[str, Any], cls: type, where: Path) -> None:
    declared = set(cls.valid_kwargs.__annotations__)
    for key, value in config.items():
        role = SETTINGS.get(key)
        if role in ("geometry", "labels", "record") or (role == "pixels" and key in declared):
            continue
        default = getattr(cls, key, _MISSING)
        if (list(default) if isinstance(default, tuple) else default) != value:
            raise SegbenchError(
                f"{where}: setting '{key}' = {value!r} is not one segbench can honour for {cls.__name__} "
                f"(it follows {sorted(k for k, r in SETTINGS.items() if r == 'pixels' and k in declared)}; "
                f"the benchmark's resolution rule replaces the geometry)"
            )


def _probes() -> list[np.ndarray]:
    """Two (3, h, w) float32 0..255 images: every value in every channel, the channels shuffled
    independently; then other statistics (the values squared, / 255), so that a step that depends
    on the image (its own mean, say) is seen to."""
    rng = np.random.default_rng(0)
    values = np.arange(256, dtype=np.float32)
    return [np.stack([rng.permutation(v) for _ in range(3)]).reshape(PROBE_SHAPE) for v in (values, values**2 / 255)]


def _run(processor: Any, image: np.ndarray) -> np.ndarray:
    declared = processor.valid_kwargs.__annotations__
    off = {k: v for k, v in GEOMETRY_OFF.items() if k in declared}
    extra = (["semantic"],) if type(processor).__name__.startswith("OneFormer") else ()
    out = processor(image, *extra, input_data_format="channels_first", return_tensors="np", **off)
    return np.asarray(out["pixel_values"], dtype=np.float64)[0]


def _fit(probe: np.ndarray, output: np.ndarray, processor: Any, where: Path) -> PixelMap:
    """Each output channel as (x[k] - mean) / std for the one input channel k it is an affine map
    of; mean and std are then taken exactly from the processor's settings where they match."""
    name = type(processor).__name__
    if output.shape != probe.shape:
        raise SegbenchError(f"{where}: {name} turned a {probe.shape} image into {output.shape} with its geometry off")
    order, mean, std = [], [0.0] * 3, [0.0] * 3
    for c in range(3):
        y = output[c].ravel()
        tolerance = TOLERANCE * max(1.0, np.abs(y).max())
        for k in range(3):
            a, b = np.polyfit(probe[k].ravel().astype(np.float64), y, 1)
            if a != 0 and np.abs(a * probe[k].ravel() + b - y).max() <= tolerance:
                break
        else:
            raise SegbenchError(f"{where}: {name}'s output channel {c} is not a rescaled input channel")
        means, stds = _exact_candidates(processor, c)
        order.append(k)
        mean[k], std[k] = _snapped(-b / a, means), _snapped(1 / a, stds)
    if sorted(order) != [0, 1, 2]:
        raise SegbenchError(f"{where}: {name} maps the channels {order}: not a channel order")
    if not all(s > 0 for s in std):
        raise SegbenchError(f"{where}: {name} inverts a channel (std {std}): not a rescale")
    return PixelMap(Normalization(tuple(mean), tuple(std)), tuple(order))


def _exact_candidates(processor: Any, c: int) -> tuple[list[float], list[float]]:
    """The 0..255-unit means and stds output channel c can have from the processor's own settings:
    normalised or not, rescaled or not (x * r - m) / s = (x - m / r) / (s / r)."""

    def channel(value: Any) -> float | None:
        values = [value] * 3 if isinstance(value, int | float) else list(value or [])
        return float(values[c]) if len(values) == 3 else None

    m, s, r = channel(processor.image_mean), channel(processor.image_std), processor.rescale_factor
    scales = [1.0] + ([float(r)] if isinstance(r, int | float) and r > 0 else [])
    means = [0.0] + ([m / x for x in scales] if m is not None else [])
    stds = [1 / x for x in scales] + ([s / x for x in scales] if s else [])
    return means, stds


def _snapped(value: float, candidates: list[float]) -> float:
    """The candidate `value` is a float-rounded estimate of, or `value` itself where none is."""
    near = [x for x in candidates if abs(value - x) <= SNAP * max(1.0, abs(x))]
    return min(near, key=lambda x: abs(value - x)) if near else float(value)


def _apply(pixels: PixelMap, image: np.ndarray) -> np.ndarray:
    mean = np.asarray(pixels.normalization.mean).reshape(3, 1, 1)
    std = np.asarray(pixels.normalization.std).reshape(3, 1, 1)
    return ((image - mean) / std)[list(pixels.order)]
