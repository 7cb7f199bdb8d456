"""A local Hugging Face segmentation folder read and checked before any weights are loaded
(segbench.models.hf loads it): its model type among the families transformers knows, config.json's
id2label, which weights file it holds, and its label space with the benchmark's mappings for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from ..io.oserrors import file_error
from ..records.provenance import verify_pin
from .base import space_from_names

SAFETENSORS = ("model.safetensors", "model.safetensors.index.json")
PICKLED = ("pytorch_model.bin", "pytorch_model.bin.index.json")
# model_type -> the transformers class whose outputs are query classes and masks.
UNIVERSAL = {
    "mask2former": "Mask2FormerForUniversalSegmentation",
    "maskformer": "MaskFormerForInstanceSegmentation",
    "oneformer": "OneFormerForUniversalSegmentation",
}


def semantic_types() -> dict[str, str]:
    """model_type -> class of every AutoModelForSemanticSegmentation family transformers knows."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES

    return dict(MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES)


def checked_folder(path: Path) -> tuple[str, list[str]]:
    """(model_type, id2label names) of a segmentation folder, after checking it and its config.json."""
    if not path.exists():
        raise SegbenchError(f"{path}: Hugging Face model folder not found")
    if not path.is_dir():
        raise SegbenchError(
            f"{path}: a Hugging Face model must be a folder (config.json, weights, preprocessor_config.json)"
        )
    verify_pin(path)  # safetensors and JSON files carry no checksums of their own
    config = read_config(path / "config.json", "config.json")
    model_type = config.get("model_type")
    known = {**semantic_types(), **UNIVERSAL}
    if model_type not in known:
        raise SegbenchError(
            f"{path / 'config.json'}: model_type {model_type!r} is not a semantic or universal segmentation "
            f"model (supported: {sorted(known)})"
        )
    return model_type, id2label_names(config, path / "config.json")


def read_config(file: Path, what: str) -> dict[str, Any]:
    if not file.is_file():
        raise SegbenchError(f"{file}: missing: a Hugging Face model folder needs {what}")
    try:
        doc = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(exc, file) from None
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{file}: not readable JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise SegbenchError(f"{file}: must hold a JSON object")
    return doc


def id2label_names(config: dict[str, Any], file: Path) -> list[str]:
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


def safetensors_weights(path: Path) -> bool:
    """True for safetensors weights (preferred when both are there), False for pytorch_model.bin."""
    if any((path / name).is_file() for name in SAFETENSORS):
        return True
    if any((path / name).is_file() for name in PICKLED):
        return False
    raise SegbenchError(f"{path}: no weights file (expected one of {list(SAFETENSORS + PICKLED)})")


def folder_space(benchmark: Benchmark, name: str | None, names: list[str], path: Path) -> LabelSpace:
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


def check_mappings(benchmark: Benchmark, space: LabelSpace, path: Path) -> None:
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
