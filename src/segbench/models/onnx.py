"""The `onnx` model kind: an `.onnx` file run by onnxruntime (CUDA provider when asked and
available, else CPU), and `export_onnx`, which writes one from a segbench checkpoint.

The graph takes one float32 input (N, 3, H, W) of NORMALISED pixels and returns per-class
logits (N, C, h, w) at any resolution with the input's aspect. What the harness needs besides
comes from the file's metadata property `segbench` (a JSON object, written by export_onnx):

    {"format": "segbench-onnx", "format_version": 1,
     "label_space": {"name": "painting-vision-10", "classes": [...]},
     "normalization": {"mean": [r, g, b], "std": [r, g, b]},    # 0..1 units
     "stride": 8}

or, for a file made elsewhere, from the config (`label_space`, `normalization`, `stride`); a
value given by both must agree. Refused with a message naming the file: a file onnx cannot
parse, operators outside the standard ONNX domains (custom operators need code segbench does
not load), not one 4-D float input, or an output whose rank is declared and is not 4.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..errors import SegbenchError
from ..records.provenance import verify_pin
from .base import Normalization, SegmentationModel, check_stride, declared_space, resolve_device

FORMAT = "segbench-onnx"
FORMAT_VERSION = 1
METADATA_KEY = "segbench"
STANDARD_DOMAINS = ("", "ai.onnx")
OPSET = 17


class OnnxModel(SegmentationModel):
    kind = "onnx"

    def __init__(
        self, source: Path, session: Any, label_space: LabelSpace, normalization: Normalization, stride: int,
        device: torch.device,
    ) -> None:
        self.source = source
        self.session = session
        self.input_name = session.get_inputs()[0].name
        self.label_space = label_space
        self.normalization = normalization
        self.stride = stride
        self.device = device

    def logits(self, images: torch.Tensor) -> torch.Tensor:
        pixels = self.normalization.apply(images).cpu().numpy()
        [logits] = self.session.run(None, {self.input_name: np.ascontiguousarray(pixels, dtype=np.float32)})[:1]
        return torch.from_numpy(logits).to(self.device)


def read_graph(path: Path) -> Any:
    """The parsed ModelProto, checked: standard operators only, one 4-D input, a rank-4 output."""
    import onnx

    if not path.is_file():
        raise SegbenchError(f"{path}: ONNX model not found" if not path.exists() else f"{path}: an ONNX model must be a file")
    verify_pin(path)  # a protobuf has no checksums of its own
    try:
        proto = onnx.load(str(path))
    except Exception as exc:  # protobuf's DecodeError and friends
        raise SegbenchError(f"{path}: not an ONNX model: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if not proto.graph.node:
        raise SegbenchError(f"{path}: not an ONNX model: the graph has no operators")
    local = {f.domain for f in proto.functions}
    custom = sorted({f"{n.domain}::{n.op_type}" for n in proto.graph.node if n.domain not in STANDARD_DOMAINS + tuple(local)})
    if custom:
        raise SegbenchError(
            f"{path}: refused: custom operators {custom[:5]} (only the standard ONNX operators run here; "
            "export without custom ops)"
        )
    initializers = {i.name for i in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in initializers]
    if len(inputs) != 1 or _rank(inputs[0]) not in (None, 4):
        raise SegbenchError(
            f"{path}: the model must take one (N, 3, H, W) image input; it takes {[i.name for i in inputs]}"
            + (f" of rank {_rank(inputs[0])}" if len(inputs) == 1 else "")
        )
    if not proto.graph.output or _rank(proto.graph.output[0]) not in (None, 4):
        rank = _rank(proto.graph.output[0]) if proto.graph.output else None
        raise SegbenchError(
            f"{path}: wrong output rank: the first output must be (N, C, h, w) per-class logits (rank 4), "
            f"this one has rank {rank}"
        )
    return proto


def _rank(value_info: Any) -> int | None:
    tensor = value_info.type.tensor_type
    return len(tensor.shape.dim) if tensor.HasField("shape") else None


def metadata(proto: Any, path: Path) -> dict[str, Any]:
    """The segbench metadata property, checked; {} when the file has none."""
    props = {p.key: p.value for p in proto.metadata_props}
    if METADATA_KEY not in props:
        return {}
    try:
        doc = json.loads(props[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise SegbenchError(f"{path}: metadata property '{METADATA_KEY}' is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("format_version") != FORMAT_VERSION:
        raise SegbenchError(
            f"{path}: metadata property '{METADATA_KEY}' must be a {FORMAT} version {FORMAT_VERSION} object"
        )
    return doc


def _settled(file_value: Any, config_value: Any, name: str, path: Path) -> Any:
    if file_value is not None and config_value is not None and file_value != config_value:
        raise SegbenchError(f"{path}: the config's {name} {config_value!r} differs from the file's {file_value!r}")
    value = file_value if file_value is not None else config_value
    if value is None:
        raise SegbenchError(
            f"{path}: no {name}: the file has no segbench metadata; give '{name}' in the model's config entry"
        )
    return value


def _space(doc: dict[str, Any], benchmark: Benchmark, label_space: str | None, path: Path) -> LabelSpace:
    if "label_space" in doc:
        declared = doc["label_space"] if isinstance(doc["label_space"], dict) else {}
        space = declared_space(benchmark, declared.get("name"), declared.get("classes"), str(path))
        if label_space is not None and label_space != space.name:
            raise SegbenchError(f"{path}: the model's label space is '{space.name}', but '{label_space}' was requested")
        return space
    name = _settled(None, label_space, "label_space", path)
    try:
        return benchmark.space(name)
    except SegbenchError as exc:
        raise SegbenchError(f"{path}: {exc}") from None


def onnx_space(path: Path, benchmark: Benchmark, label_space: str | None = None) -> LabelSpace:
    path = Path(path)
    return _space(metadata(read_graph(path), path), benchmark, label_space, path)


def load_onnx(
    path: Path,
    benchmark: Benchmark,
    label_space: str | None = None,
    device: str | torch.device = "auto",
    normalization: Mapping[str, Any] | None = None,
    stride: int | None = None,
) -> OnnxModel:
    import onnxruntime

    path = Path(path)
    proto = read_graph(path)
    doc = metadata(proto, path)
    space = _space(doc, benchmark, label_space, path)
    norm = Normalization.from_file_field(
        _settled(doc.get("normalization"), None if normalization is None else dict(normalization), "normalization", path),
        str(path),
    )
    step = check_stride(_settled(doc.get("stride"), stride, "stride", path), str(path))
    resolved = resolve_device(device)
    providers = ["CPUExecutionProvider"]
    if resolved.type == "cuda" and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        providers.insert(0, ("CUDAExecutionProvider", {"device_id": resolved.index or 0}))
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its failures are reported as errors naming the file, not logged besides
    try:
        session = onnxruntime.InferenceSession(proto.SerializeToString(), options, providers=providers)
    except Exception as exc:  # onnxruntime's Fail/InvalidGraph/NotImplemented
        raise SegbenchError(f"{path}: onnxruntime cannot run this model: {str(exc).splitlines()[0]}") from None
    _check_classes(session, space, step, path)
    return OnnxModel(path, session, space, norm, step, resolved)


def _check_classes(session: Any, space: LabelSpace, stride: int, path: Path) -> None:
    """One forward pass of a blank (1, 3, 2 stride, 2 stride) image: the output must be (1, C, h, w)
    with C the label space's size (the channel count is rarely declared statically)."""
    probe = np.zeros((1, 3, 2 * stride, 2 * stride), dtype=np.float32)
    try:
        [logits] = session.run(None, {session.get_inputs()[0].name: probe})[:1]
    except Exception as exc:  # onnxruntime's RuntimeException and friends
        raise SegbenchError(f"{path}: onnxruntime cannot run this model on a {2 * stride}x{2 * stride} image: "
                            f"{str(exc).splitlines()[0]}") from None
    if logits.ndim != 4:
        raise SegbenchError(f"{path}: wrong output rank: the model returned shape {logits.shape}, expected (N, C, h, w)")
    if logits.shape[1] != space.size:
        raise SegbenchError(
            f"{path}: the model outputs {logits.shape[1]} classes, but label space '{space.name}' has {space.size}"
        )


def export_onnx(checkpoint: Path, benchmark: Benchmark, out: Path, opset: int = OPSET) -> None:
    """Write `checkpoint` (a segbench checkpoint) as an ONNX file with segbench metadata, atomically."""
    import onnx

    from .checkpoint import load_checkpoint, read_checkpoint

    model = load_checkpoint(Path(checkpoint), benchmark, None, "cpu")
    normalization = read_checkpoint(Path(checkpoint))["normalization"]  # as stored: no unit round trip
    buffer = io.BytesIO()
    sample = torch.zeros(1, 3, 4 * model.stride, 6 * model.stride)
    axes = {0: "batch", 2: "height", 3: "width"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter's deprecation notice
        torch.onnx.export(
            model.module, (sample,), buffer, dynamo=False, opset_version=opset, input_names=["pixel_values"],
            output_names=["logits"], dynamic_axes={"pixel_values": axes, "logits": axes},
        )
    proto = onnx.load_from_string(buffer.getvalue())
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "label_space": {"name": model.label_space.name, "classes": model.label_space.names},
        "normalization": normalization,
        "stride": model.stride,
    }
    entry = proto.metadata_props.add()
    entry.key, entry.value = METADATA_KEY, json.dumps(document)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(proto.SerializeToString())
    partial.replace(out)
