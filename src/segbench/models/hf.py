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

Preprocessing: the folder's image processor decides everything but the geometry
(segbench.models.hf_processor): its channel order, rescale and normalisation, read off the
library's own processor class run on probe images, are applied to the 0..255 frames on the
model's device. The processor's resize, crop and pad are replaced by the benchmark's resolution
rule (long side = inference size, padded bottom/right to the stride, 32 for every family, with
the value the processor's map sends to 0).

Label space: the id2label names in id order, named by the caller (e.g. "ade20k" or
"cityscapes-19", one of the benchmark's label spaces). Names are mapped into the benchmark's
report spaces by the benchmark's name mappings (Benchmark.mapping); loading already checks
them, so a model whose names match none of the benchmark's rules fails here rather than after
inference. `hf-segformer` is an alias of `hf` (the embedded default's baseline is recorded so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from .base import SegmentationModel, resolve_device
from .hf_folder import (
    PICKLED,
    SAFETENSORS,
    UNIVERSAL,
    check_mappings,
    checked_folder,
    folder_space,
    read_config,
    safetensors_weights,
    semantic_types,
)
from .hf_processor import PixelMap, processor_pixels

STRIDE = 32
# The families whose post-processing resizes the mask logits to the input before the sigmoid.
MASKS_AT_INPUT = ("mask2former",)
ONEFORMER_TASK = "the task is semantic"
TOKENIZER_FILES = ("tokenizer.json", "vocab.json")


class HFModel(SegmentationModel):
    def __init__(
        self,
        kind: str,
        source: Path,
        module: torch.nn.Module,
        label_space: LabelSpace,
        pixels: PixelMap,
        device: torch.device,
        task_inputs: torch.Tensor | None = None,
    ) -> None:
        self.kind = kind
        self.source = source
        self.module = module.to(device).eval()
        self.label_space = label_space
        self.normalization = pixels.normalization  # per input channel: its mean is the padding
        # The processor's channel order (MobileViT's BGR), or None where it keeps RGB.
        self.channel_order = None if pixels.order == (0, 1, 2) else torch.tensor(pixels.order, device=device)
        self.stride = STRIDE
        self.device = device
        self.model_type = module.config.model_type
        self.output = "scores" if self.model_type in UNIVERSAL else "logits"
        # DPT's plain-ViT neck reshapes its tokens to a square grid: it runs on square inputs only.
        self.square = self.model_type == "dpt" and not getattr(module.config, "is_hybrid", False)
        self.task_inputs = None if task_inputs is None else task_inputs.to(device)

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        pixels = self.normalization.apply(images)
        if self.channel_order is not None:
            pixels = pixels.index_select(1, self.channel_order)
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
    _, names = checked_folder(path)
    space = folder_space(benchmark, label_space, names, path)
    check_mappings(benchmark, space, path)
    return space


def load_hf(
    path: Path,
    benchmark: Benchmark,
    label_space: str | None = None,
    device: str | torch.device = "auto",
    kind: str = "hf",
) -> HFModel:
    path = Path(path)
    model_type, names = checked_folder(path)
    use_safetensors = safetensors_weights(path)
    pixels = processor_pixels(read_config(path / "preprocessor_config.json", "preprocessor_config.json"), path, model_type)
    space = folder_space(benchmark, label_space, names, path)
    check_mappings(benchmark, space, path)
    module = _from_pretrained(path, model_type, use_safetensors)
    task_inputs = _oneformer_task(path, module.config) if model_type == "oneformer" else None
    return HFModel(kind, path, module, space, pixels, resolve_device(device), task_inputs)


def load_hf_segformer(
    path: Path, benchmark: Benchmark, label_space: str | None = None, device: str | torch.device = "auto"
) -> HFModel:
    return load_hf(path, benchmark, label_space, device, kind="hf-segformer")


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
        weights = next((n for n in (SAFETENSORS if use_safetensors else PICKLED) if (path / n).is_file()), "")
        raise SegbenchError(f"{path / weights}: cannot load the {model_type} weights: {exc}") from None
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
