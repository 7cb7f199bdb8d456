"""The `hf-segformer` model kind: a local Hugging Face SegFormer folder, loaded offline.

The folder holds config.json (model_type "segformer", with id2label), the weights
(model.safetensors, or pytorch_model.bin which transformers reads with weights_only=True, or
their sharded .index.json forms) and preprocessor_config.json. It is loaded with
`from_pretrained(folder, local_files_only=True)`, so nothing is ever fetched.

Preprocessing: only the processor's rescale and normalisation are used, converted to the 0..255
input the adapters receive: with do_rescale the processor computes (x * rescale_factor - mean)
/ std, i.e. (x - mean / rescale_factor) / (std / rescale_factor) on 0..255 pixels. The
processor's resize (e.g. 512x512) is ignored: the benchmark's resolution rule (long side =
inference size, padded to the stride, here 32) decides the input size.

Label space: the id2label names in id order, named by the caller (e.g. "ade20k", one of the
benchmark's label spaces). Names are mapped into the benchmark's report spaces by name later
(Benchmark.mapping); loading already checks that mapping, so a model whose names match none of
the benchmark's rules fails here rather than after inference. Logits come out at 1/4 of the
input resolution and are returned as they are; segbench.inference resizes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..definitions import Benchmark
from ..errors import SegbenchError
from ..labels import LabelSpace
from .base import Normalization, SegmentationModel, resolve_device, space_from_names

STRIDE = 32
SAFETENSORS = ("model.safetensors", "model.safetensors.index.json")
PICKLED = ("pytorch_model.bin", "pytorch_model.bin.index.json")
# SegformerImageProcessor's defaults, used for any field preprocessor_config.json leaves out.
DEFAULT_MEAN = (0.485, 0.456, 0.406)
DEFAULT_STD = (0.229, 0.224, 0.225)
DEFAULT_RESCALE = 1 / 255


class SegformerModel(SegmentationModel):
    kind = "hf-segformer"

    def __init__(
        self,
        source: Path,
        module: torch.nn.Module,
        label_space: LabelSpace,
        normalization: Normalization,
        device: torch.device,
    ) -> None:
        self.source = source
        self.module = module.to(device).eval()
        self.label_space = label_space
        self.normalization = normalization
        self.stride = STRIDE
        self.device = device

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        return self.module(pixel_values=self.normalization.apply(images)).logits


def segformer_space(path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    """The model's label space from config.json's id2label, checked against the benchmark; no weights read."""
    path = Path(path)
    names = _checked_folder(path)
    space = _label_space(benchmark, label_space, names, path)
    _check_mappings(benchmark, space, path)
    return space


def load_hf_segformer(
    path: Path, benchmark: Benchmark, label_space: str | None = None, device: str | torch.device = "auto"
) -> SegformerModel:
    path = Path(path)
    names = _checked_folder(path)
    use_safetensors = _weights_kind(path)
    normalization = _normalization(_read_json(path / "preprocessor_config.json", "preprocessor_config.json"), path)
    space = _label_space(benchmark, label_space, names, path)
    _check_mappings(benchmark, space, path)
    module = _from_pretrained(path, use_safetensors)
    return SegformerModel(path, module, space, normalization, resolve_device(device))


def _checked_folder(path: Path) -> list[str]:
    """The id2label names of a SegFormer folder, after checking the folder and its config.json."""
    if not path.exists():
        raise SegbenchError(f"{path}: Hugging Face SegFormer folder not found")
    if not path.is_dir():
        raise SegbenchError(
            f"{path}: a Hugging Face SegFormer model must be a folder (config.json, weights, preprocessor_config.json)"
        )
    config = _read_json(path / "config.json", "config.json")
    if config.get("model_type") != "segformer":
        raise SegbenchError(
            f"{path / 'config.json'}: not a SegFormer config (model_type {config.get('model_type')!r}, "
            "expected 'segformer')"
        )
    return _id2label(config, path / "config.json")


def _read_json(file: Path, what: str) -> dict[str, Any]:
    if not file.is_file():
        raise SegbenchError(f"{file}: missing: a Hugging Face SegFormer folder needs {what}")
    try:
        doc = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SegbenchError(f"{file}: not readable JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise SegbenchError(f"{file}: must hold a JSON object")
    return doc


def _id2label(config: dict[str, Any], file: Path) -> list[str]:
    table = config.get("id2label")
    if not isinstance(table, dict) or not table:
        raise SegbenchError(f"{file}: field 'id2label' is missing or empty; the model's classes must be named")
    try:
        by_id = {int(k): v for k, v in table.items()}
    except ValueError:
        raise SegbenchError(f"{file}: field 'id2label' keys must be class ids 0..K-1") from None
    if sorted(by_id) != list(range(len(by_id))):
        raise SegbenchError(
            f"{file}: field 'id2label' ids must be 0..{len(by_id) - 1} without gaps, got {sorted(by_id)}"
        )
    if not all(isinstance(v, str) for v in by_id.values()):
        raise SegbenchError(f"{file}: field 'id2label' values must be class names (strings)")
    return [by_id[i] for i in range(len(by_id))]


def _weights_kind(path: Path) -> bool:
    """True for safetensors weights, False for pytorch_model.bin; error when there are none."""
    if any((path / name).is_file() for name in SAFETENSORS):
        return True
    if any((path / name).is_file() for name in PICKLED):
        return False
    raise SegbenchError(f"{path}: no weights file (expected one of {list(SAFETENSORS + PICKLED)})")


def _normalization(pre: dict[str, Any], path: Path) -> Normalization:
    where = f"{path / 'preprocessor_config.json'}"

    def triple(key: str, default: Sequence[float]) -> list[float]:
        value = pre.get(key, default)
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = [value] * 3
        if (
            not isinstance(value, list | tuple)
            or len(value) != 3
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise SegbenchError(f"{where}: field '{key}' must be three numbers, got {value!r}")
        return [float(v) for v in value]

    rescale = 1.0
    if pre.get("do_rescale", True):
        rescale = pre.get("rescale_factor", DEFAULT_RESCALE)
        if not isinstance(rescale, int | float) or isinstance(rescale, bool) or rescale <= 0:
            raise SegbenchError(f"{where}: field 'rescale_factor' must be a positive number, got {rescale!r}")
    if not pre.get("do_normalize", True):
        return Normalization((0.0, 0.0, 0.0), (1.0 / rescale,) * 3)
    mean, std = triple("image_mean", DEFAULT_MEAN), triple("image_std", DEFAULT_STD)
    if not all(s > 0 for s in std):
        raise SegbenchError(f"{where}: field 'image_std' must be positive, got {std}")
    return Normalization(tuple(m / rescale for m in mean), tuple(s / rescale for s in std))


def _label_space(benchmark: Benchmark, name: str | None, names: list[str], path: Path) -> LabelSpace:
    if name is None:
        exact = [s for s in benchmark.spaces.values() if s.names == names]
        if len(exact) != 1:
            raise SegbenchError(
                f"{path}: name the model's label space (one of {sorted(benchmark.spaces)}): its id2label "
                f"matches {'none' if not exact else 'several'} of benchmark '{benchmark.name}''s spaces exactly"
            )
        return exact[0]
    if name not in benchmark.spaces:
        raise SegbenchError(
            f"{path}: label space '{name}' is not one of benchmark '{benchmark.name}''s label spaces {sorted(benchmark.spaces)}"
        )
    declared = benchmark.spaces[name]
    return declared if declared.names == names else space_from_names(name, names, str(path / "config.json"))


def _check_mappings(benchmark: Benchmark, space: LabelSpace, path: Path) -> None:
    """Every report space the model enters must be reachable from its names."""
    targets = {r.space.name: r.space for r in benchmark.reports if r.only_for_model_space in (None, space.name)}
    for target in targets.values():
        if space.names == target.names:
            continue
        rule = benchmark.mapping_rules.get((space.name, target.name))
        if rule is not None:
            wanted = sorted({n for names in rule["classes"].values() for n in names})
            if not any(space.has(n) for n in wanted):
                raise SegbenchError(
                    f"{path}: none of the model's id2label names match the benchmark's mapping from "
                    f"'{space.name}' to '{target.name}': expected some of {wanted}"
                )
        try:
            benchmark.mapping(space, target)
        except SegbenchError as exc:
            raise SegbenchError(f"{path}: the model's classes cannot be scored: {exc}") from None


def _from_pretrained(path: Path, use_safetensors: bool) -> torch.nn.Module:
    from transformers import SegformerForSemanticSegmentation  # slow import: only when needed

    try:
        module, info = SegformerForSemanticSegmentation.from_pretrained(
            str(path),
            local_files_only=True,
            use_safetensors=use_safetensors,
            weights_only=True,
            dtype=torch.float32,
            output_loading_info=True,
        )
    except Exception as exc:  # transformers raises OSError, ValueError, RuntimeError... for bad folders
        raise SegbenchError(f"{path}: cannot load the SegFormer weights: {exc}") from None
    problems = {k: v for k, v in info.items() if k in ("missing_keys", "mismatched_keys") and v}
    if problems:
        summary = "; ".join(f"{k}: {sorted(map(str, v))[:5]}" for k, v in problems.items())
        raise SegbenchError(f"{path}: the weights do not fit config.json ({summary})")
    return module
