"""A model named by its path on the command line (`benchmark.py --checkpoint`, `segbench export
--checkpoint`): which adapter reads it, and its name in the table and records."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from ..errors import SegbenchError
from ..io.archives import ARCHIVE_SUFFIXES, is_archive

HF_WEIGHTS = ("*.safetensors", "pytorch_model*.bin", "*.pth")
MODEL_FILES = ("*.pt", "*.ts", "*.torchscript", "*.onnx")  # models of the other kinds: one file each


def matching(names: list[str], patterns: tuple[str, ...]) -> list[str]:
    return [name for name in names if any(fnmatchcase(name, pattern) for pattern in patterns)]


def checkpoint_kind(path: Path) -> str:
    """The adapter for a --checkpoint path: a folder with config.json is a Hugging Face model,
    another folder or an archive (.zip, .tar, .tar.gz) holds prediction masks, a .ts/.torchscript
    file is TorchScript, a .onnx file ONNX, else a .pt. A folder of model weights without
    config.json, or one of model files, is refused rather than taken for a folder of masks."""
    if is_archive(path):
        return "predictions"
    if path.is_dir():
        if (path / "config.json").is_file():
            return "hf"
        names = sorted(p.name for p in path.iterdir())  # listed once: a folder of masks may hold thousands
        weights = matching(names, HF_WEIGHTS)
        if weights:
            raise SegbenchError(
                f"{path}: holds model weights ({', '.join(weights[:3])}) but no config.json: a Hugging Face model "
                "folder needs its config.json (or pass --checkpoint-kind)"
            )
        models = matching(names, MODEL_FILES)
        if models:
            raise SegbenchError(f"{path}: a folder of models ({', '.join(models[:3])}{', ...' if len(models) > 3 else ''}),"
                                " not a model or a folder of masks: name one model's file")
        return "predictions"
    if path.suffix in (".ts", ".torchscript"):
        return "torchscript"
    if path.suffix == ".onnx":
        return "onnx"
    return "checkpoint"


def model_name(path: Path) -> str:
    """The checkpoint's name in the table and records: its file name without the suffix(es)."""
    name = path.name
    suffix = next((s for s in ARCHIVE_SUFFIXES if name.lower().endswith(s)), path.suffix)
    return name[: len(name) - len(suffix)] if suffix else name
