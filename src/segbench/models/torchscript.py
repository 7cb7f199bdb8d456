"""The `torchscript` model kind: a self-describing TorchScript archive (torch.jit.save).

The archive holds the network (normalised (N, 3, H, W) images -> (N, C, h, w) logits) and an
extra file `segbench.json` (written through torch.jit.save's `_extra_files`):

    {"format": "segbench-torchscript", "format_version": 1,
     "label_space": {"name": "painting-vision-10", "classes": ["other", ...]},
     "normalization": {"mean": [r, g, b], "std": [r, g, b]},   # 0..1 units, as in checkpoints
     "stride": 8}

The label space is checked against the benchmark exactly as for checkpoints. TorchScript runs
no Python when loaded, but PyTorch 2.13 marks torch.jit as deprecated; its warnings are
silenced here because the format is still what many training pipelines export.
"""

from __future__ import annotations

import json
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from ..io.archives import verify_model_zip
from ..records.provenance import verify_pin
from .base import Normalization, SegmentationModel, check_stride, declared_space, resolve_device

METADATA = "segbench.json"
FORMAT = "segbench-torchscript"
FORMAT_VERSION = 1


class TorchScriptModel(SegmentationModel):
    kind = "torchscript"

    def __init__(
        self,
        source: Path,
        module: torch.jit.ScriptModule,
        label_space: LabelSpace,
        normalization: Normalization,
        stride: int,
        device: torch.device,
    ) -> None:
        self.source = source
        self.module = module.eval()
        self.label_space = label_space
        self.normalization = normalization
        self.stride = stride
        self.device = device

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        return self.module(self.normalization.apply(images))


@contextmanager
def _quiet_jit() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=r".*torch\.jit")
        yield


def torchscript_space(path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    """The archive's output label space, read from its segbench.json without loading the network."""
    path = Path(path)
    _check_file(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if not any(n.endswith("/constants.pkl") for n in names):
                pt = any(n.endswith("/data.pkl") for n in names)
                raise zipfile.BadZipFile("no constants.pkl" + (" (it looks like a torch.save file: use model kind "
                                                               "'checkpoint')" if pt else ""))
            found = [n for n in names if n.endswith(f"/extra/{METADATA}")]
            raw = archive.read(found[0]) if found else ""
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SegbenchError(f"{path}: not a TorchScript archive (torch.jit.save): {exc}") from None
    return _declared(_metadata(raw, path), path, benchmark, label_space)


def load_torchscript(
    path: Path, benchmark: Benchmark, label_space: str | None = None, device: str | torch.device = "auto"
) -> TorchScriptModel:
    path = Path(path)
    _check_file(path)
    resolved = resolve_device(device)
    extra = {METADATA: ""}
    try:
        with _quiet_jit():
            module = torch.jit.load(str(path), map_location=resolved, _extra_files=extra)
    except Exception as exc:  # torch reports every malformed archive as a RuntimeError of its own wording
        hint = " (it looks like a torch.save file: use model kind 'checkpoint')" if "constants.pkl" in str(exc) else ""
        detail = str(exc).split(". ")[0].strip()
        raise SegbenchError(f"{path}: not a TorchScript archive (torch.jit.save){hint}: {detail}") from None
    meta = _metadata(extra[METADATA], path)
    space = _declared(meta, path, benchmark, label_space)
    normalization = Normalization.from_file_field(meta["normalization"], f"{path}: {METADATA}")
    return TorchScriptModel(path, module, space, normalization, meta["stride"], resolved)


def _check_file(path: Path) -> None:
    """A file, matching its DVC pin where it has one, every zip member's CRC intact."""
    if not path.exists():
        raise SegbenchError(f"{path}: TorchScript archive not found")
    if not path.is_file():
        raise SegbenchError(f"{path}: a TorchScript archive must be a file (written by torch.jit.save)")
    verify_pin(path)
    verify_model_zip(path)


def _declared(meta: dict[str, Any], path: Path, benchmark: Benchmark, label_space: str | None) -> LabelSpace:
    space = declared_space(benchmark, meta["label_space"].get("name"), meta["label_space"].get("classes"), str(path))
    if label_space is not None and label_space != space.name:
        raise SegbenchError(f"{path}: the archive's label space is '{space.name}', but '{label_space}' was requested")
    return space


def _metadata(raw: Any, path: Path) -> dict[str, Any]:
    if not raw:
        raise SegbenchError(
            f"{path}: the TorchScript archive has no {METADATA} (label space, normalization, stride); "
            "write it with segbench.models.torchscript.save_torchscript"
        )
    try:
        meta = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SegbenchError(f"{path}: {METADATA} is not valid JSON: {exc}") from None
    where = f"{path}: {METADATA}"
    if not isinstance(meta, dict):
        raise SegbenchError(f"{where}: must be a JSON object")
    missing = [k for k in ("format", "format_version", "label_space", "normalization", "stride") if k not in meta]
    if missing:
        raise SegbenchError(f"{where}: missing field(s) {missing}")
    if meta["format"] != FORMAT or meta["format_version"] != FORMAT_VERSION:
        raise SegbenchError(
            f"{where}: format {meta['format']!r} version {meta['format_version']!r}; this segbench reads "
            f"'{FORMAT}' version {FORMAT_VERSION}"
        )
    if not isinstance(meta["label_space"], dict):
        raise SegbenchError(f"{where}: field 'label_space' must be {{'name': ..., 'classes': [...]}}")
    check_stride(meta["stride"], where)
    return meta


def save_torchscript(
    path: Path,
    module: nn.Module,
    label_space: LabelSpace,
    normalization: dict[str, Any] | Normalization,
    stride: int,
) -> None:
    """Script `module` (unless it already is a ScriptModule) and save it with its segbench.json.

    `module` maps normalised images to logits over `label_space`; `normalization` is
    {"mean": [...], "std": [...]} in 0..1 units. Written atomically.
    """
    path = Path(path)
    if isinstance(normalization, Normalization):
        normalization = normalization.to_file_field()
    Normalization.from_file_field(normalization, f"save_torchscript({path})")
    if not isinstance(stride, int) or isinstance(stride, bool) or stride <= 0:
        raise SegbenchError(f"save_torchscript({path}): stride must be a positive integer, got {stride!r}")
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "label_space": {"name": label_space.name, "classes": label_space.names},
        "normalization": {
            "mean": [float(v) for v in normalization["mean"]],
            "std": [float(v) for v in normalization["std"]],
        },
        "stride": stride,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with _quiet_jit():
        scripted = module if isinstance(module, torch.jit.ScriptModule) else torch.jit.script(module.eval())
        torch.jit.save(scripted, str(partial), _extra_files={METADATA: json.dumps(meta, sort_keys=True)})
    partial.replace(path)


def export_torchscript(checkpoint: Path, benchmark: Benchmark, out: Path) -> None:
    """Write `checkpoint` (a segbench checkpoint) as a TorchScript archive (kind torchscript) with
    its label space, normalisation (as stored) and stride, atomically."""
    from .checkpoint import load_checkpoint, read_checkpoint

    model = load_checkpoint(Path(checkpoint), benchmark, None, "cpu")
    save_torchscript(out, model.module, model.label_space, read_checkpoint(Path(checkpoint))["normalization"],
                     model.stride)
