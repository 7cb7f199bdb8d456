"""The `hf` model kind: a local Hugging Face segmentation folder of any family, loaded offline.

Two families of output are read (the family follows from config.json's `model_type`):

    semantic   every AutoModelForSemanticSegmentation type (SegFormer, UperNet with ConvNeXt or
               Swin backbones, DPT, BEiT, MobileViT, MobileNetV2-DeepLabV3, ...): `logits`
               (N, C, h, w) are per-class logits, returned as they are.
    universal  Mask2Former, MaskFormer, OneFormer (semantic task): C + 1 class logits and one
               mask per query. The per-class score map is built exactly as the family's
               `post_process_semantic_segmentation` builds it,
                   scores[c] = sum_q softmax(class_logits[q])[c] * sigmoid(mask_logits[q]),
               the null class dropped, at the masks' resolution (1/4 of the input) — except
               for Mask2Former, whose post-processing first resizes the mask logits (bilinear,
               align_corners=False) to "the preprocessed image size", written there as 384 x 384
               (its processor's resize, which the benchmark's resolution rule replaces): here the
               model's input size. The scores are probabilities, not logits
               (`output = "scores"`). OneFormer's task input is "the task is semantic",
               tokenised by the folder's tokenizer as OneFormerProcessor does.

The folder holds config.json (with id2label), the weights (model.safetensors is preferred;
pytorch_model.bin is read by transformers with weights_only=True; sharded .index.json forms of
either) and preprocessor_config.json. It is loaded with `local_files_only=True`: nothing is ever
fetched.

Preprocessing: only the processor's rescale and normalisation are used, converted to the 0..255
input the adapters receive: with do_rescale the processor computes (x * rescale_factor - mean)
/ std, i.e. (x - mean / rescale_factor) / (std / rescale_factor) on 0..255 pixels. The
processor's resize is ignored: the benchmark's resolution rule (long side = inference size,
padded to the stride, 32 for every family) decides the input size.

Label space: the id2label names in id order, named by the caller (e.g. "ade20k" or
"cityscapes-19", one of the benchmark's label spaces). Names are mapped into the benchmark's
report spaces by the benchmark's name mappings (Benchmark.mapping); loading already checks
them, so a model whose names match none of the benchmark's rules fails here rather than after
inference. `hf-segformer` is an alias of `hf` (the embedded default's baseline is recorded so).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from .base import Normalization, SegmentationModel, resolve_device, space_from_names

STRIDE = 32
SAFETENSORS = ("model.safetensors", "model.safetensors.index.json")
PICKLED = ("pytorch_model.bin", "pytorch_model.bin.index.json")
# SegformerImageProcessor's defaults (ImageNet), used for any field preprocessor_config.json leaves out.
DEFAULT_MEAN = (0.485, 0.456, 0.406)
DEFAULT_STD = (0.229, 0.224, 0.225)
DEFAULT_RESCALE = 1 / 255
# model_type -> the transformers class whose outputs are query classes and masks.
UNIVERSAL = {
    "mask2former": "Mask2FormerForUniversalSegmentation",
    "maskformer": "MaskFormerForInstanceSegmentation",
    "oneformer": "OneFormerForUniversalSegmentation",
}
# The families whose post-processing resizes the mask logits to the input before the sigmoid.
MASKS_AT_INPUT = ("mask2former",)
ONEFORMER_TASK = "the task is semantic"
TOKENIZER_FILES = ("tokenizer.json", "vocab.json")


def semantic_types() -> dict[str, str]:
    """model_type -> class of every AutoModelForSemanticSegmentation family transformers knows."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES

    return dict(MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES)


class HFModel(SegmentationModel):
    def __init__(
        self,
        kind: str,
        source: Path,
        module: torch.nn.Module,
        label_space: LabelSpace,
        normalization: Normalization,
        device: torch.device,
        task_inputs: torch.Tensor | None = None,
    ) -> None:
        self.kind = kind
        self.source = source
        self.module = module.to(device).eval()
        self.label_space = label_space
        self.normalization = normalization
        self.stride = STRIDE
        self.device = device
        self.model_type = module.config.model_type
        self.output = "scores" if self.model_type in UNIVERSAL else "logits"
        # DPT's plain-ViT neck reshapes its tokens to a square grid: it runs on square inputs only.
        self.square = self.model_type == "dpt" and not getattr(module.config, "is_hybrid", False)
        self.task_inputs = None if task_inputs is None else task_inputs.to(device)

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        pixels = self.normalization.apply(images)
        if self.model_type not in UNIVERSAL:
            return self.module(pixel_values=pixels).logits
        if self.task_inputs is not None:
            outputs = self.module(pixel_values=pixels, task_inputs=self.task_inputs.expand(len(images), -1))
        else:
            outputs = self.module(pixel_values=pixels)
        size = tuple(images.shape[-2:]) if self.model_type in MASKS_AT_INPUT else None
        return universal_scores(outputs.class_queries_logits, outputs.masks_queries_logits, size)


def universal_scores(
    class_logits: torch.Tensor, mask_logits: torch.Tensor, size: tuple[int, int] | None = None
) -> torch.Tensor:
    """(N, C, h, w) semantic scores from (N, Q, C + 1) class logits and (N, Q, h, w) mask logits,
    as post_process_semantic_segmentation computes them; with `size`, the masks are first resized to it."""
    if size is not None:
        mask_logits = F.interpolate(mask_logits, size=size, mode="bilinear", align_corners=False)
    masks = mask_logits.sigmoid()
    classes = class_logits.softmax(dim=-1)[..., :-1]
    return torch.einsum("bqc, bqhw -> bchw", classes, masks)


def hf_space(path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    """The model's label space from config.json's id2label, checked against the benchmark; no weights read."""
    path = Path(path)
    _, names = _checked_folder(path)
    space = _label_space(benchmark, label_space, names, path)
    _check_mappings(benchmark, space, path)
    return space


def load_hf(
    path: Path,
    benchmark: Benchmark,
    label_space: str | None = None,
    device: str | torch.device = "auto",
    kind: str = "hf",
) -> HFModel:
    path = Path(path)
    model_type, names = _checked_folder(path)
    use_safetensors = _weights_kind(path)
    normalization = _normalization(_read_json(path / "preprocessor_config.json", "preprocessor_config.json"), path)
    space = _label_space(benchmark, label_space, names, path)
    _check_mappings(benchmark, space, path)
    module = _from_pretrained(path, model_type, use_safetensors)
    task_inputs = _oneformer_task(path, module.config) if model_type == "oneformer" else None
    return HFModel(kind, path, module, space, normalization, resolve_device(device), task_inputs)


def load_hf_segformer(
    path: Path, benchmark: Benchmark, label_space: str | None = None, device: str | torch.device = "auto"
) -> HFModel:
    return load_hf(path, benchmark, label_space, device, kind="hf-segformer")


def _checked_folder(path: Path) -> tuple[str, list[str]]:
    """(model_type, id2label names) of a segmentation folder, after checking it and its config.json."""
    if not path.exists():
        raise SegbenchError(f"{path}: Hugging Face model folder not found")
    if not path.is_dir():
        raise SegbenchError(
            f"{path}: a Hugging Face model must be a folder (config.json, weights, preprocessor_config.json)"
        )
    config = _read_json(path / "config.json", "config.json")
    model_type = config.get("model_type")
    known = {**semantic_types(), **UNIVERSAL}
    if model_type not in known:
        raise SegbenchError(
            f"{path / 'config.json'}: model_type {model_type!r} is not a semantic or universal segmentation "
            f"model (supported: {sorted(known)})"
        )
    return model_type, _id2label(config, path / "config.json")


def _read_json(file: Path, what: str) -> dict[str, Any]:
    if not file.is_file():
        raise SegbenchError(f"{file}: missing: a Hugging Face model folder needs {what}")
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
    """True for safetensors weights (preferred when both are there), False for pytorch_model.bin."""
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


def _model_class(model_type: str) -> Any:
    import transformers  # slow import: only when needed

    return getattr(transformers, UNIVERSAL.get(model_type) or semantic_types()[model_type])


def _from_pretrained(path: Path, model_type: str, use_safetensors: bool) -> torch.nn.Module:
    try:
        module, info = _model_class(model_type).from_pretrained(
            str(path),
            local_files_only=True,
            use_safetensors=use_safetensors,
            weights_only=True,
            dtype=torch.float32,
            output_loading_info=True,
        )
    except Exception as exc:  # transformers raises OSError, ValueError, RuntimeError... for bad folders
        raise SegbenchError(f"{path}: cannot load the {model_type} weights: {exc}") from None
    problems = {k: v for k, v in info.items() if k in ("missing_keys", "mismatched_keys") and v}
    if problems:
        summary = "; ".join(f"{k}: {sorted(map(str, v))[:5]}" for k, v in problems.items())
        raise SegbenchError(f"{path}: the weights do not fit config.json ({summary})")
    return module


def _oneformer_task(path: Path, config: Any) -> torch.Tensor:
    """(1, task_seq_len) token ids of "the task is semantic", as OneFormerProcessor makes them:
    the folder's tokenizer, padded to the length, ids zeroed where the attention mask is 0."""
    from transformers import AutoTokenizer

    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise SegbenchError(
            f"{path}: a OneFormer folder needs its tokenizer (for the task input '{ONEFORMER_TASK}'): "
            f"none of {list(TOKENIZER_FILES)} is there"
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as exc:  # a missing or broken tokenizer raises assorted types
        raise SegbenchError(
            f"{path}: a OneFormer folder needs its tokenizer (for the task input '{ONEFORMER_TASK}'): {exc}"
        ) from None
    tokens = tokenizer([ONEFORMER_TASK], padding="max_length", max_length=config.task_seq_len, truncation=True)
    return torch.tensor(tokens["attention_mask"]) * torch.tensor(tokens["input_ids"])
