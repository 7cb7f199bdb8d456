"""What the config names, importable without the heavy modules: a model's spec and the shard
arithmetic. The workflow's plan (plan.py) imports this at every Snakemake start, so it must not
pull in scoring, numba or pyarrow."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ..errors import SegbenchError

T = TypeVar("T")

MODES = ("whole", "slide", "multi-scale")
# Which fields each mode takes (beyond `mode`); the rest must be left out.
MODE_FIELDS = {"whole": (), "slide": ("crop", "stride"), "multi-scale": ("scales", "flip")}


@dataclass(frozen=True)
class InferenceMode:
    """How a model is run over a frame (segbench.stages.inference_modes):

    whole        the frame at the inference size (long side), padded to the model's stride
    slide        windows of `crop` (height, width) every `stride` pixels over the frame at the
                 inference size; overlapping window logits summed and divided by the window count
    multi-scale  the frame at each of `scales` x the inference size (and mirrored when `flip`),
                 class probabilities averaged at the ground-truth resolution
    """

    mode: str = "whole"
    crop: tuple[int, int] | None = None
    stride: tuple[int, int] | None = None
    scales: tuple[float, ...] | None = None
    flip: bool = False

    @classmethod
    def from_config(cls, entry: Mapping[str, Any] | None, where: str) -> InferenceMode:
        """The mode a model's `inference:` block names, checked field by field; None: whole."""
        entry = dict(entry or {})
        mode = entry.pop("mode", "whole")
        if mode not in MODES:
            raise SegbenchError(f"{where}: field 'inference/mode' is {mode!r}, expected one of {list(MODES)}")
        extra = sorted(set(entry) - set(MODE_FIELDS[mode]))
        if extra:
            raise SegbenchError(f"{where}: field(s) {extra} do not apply to inference mode '{mode}'")
        if mode == "slide":
            missing = [k for k in ("crop", "stride") if k not in entry]
            if missing:
                raise SegbenchError(f"{where}: inference mode 'slide' needs field(s) {missing}")
            crop, stride = (_pair(entry[k], f"{where}: field 'inference/{k}'") for k in ("crop", "stride"))
            if stride[0] > crop[0] or stride[1] > crop[1]:
                raise SegbenchError(f"{where}: inference stride {list(stride)} exceeds the crop {list(crop)}: "
                                    "pixels between windows would get no logits")
            return cls(mode, crop=crop, stride=stride)
        if mode == "multi-scale":
            scales = entry.get("scales", [1.0])
            if (
                not isinstance(scales, Sequence) or isinstance(scales, str) or not scales
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in scales)
            ):
                raise SegbenchError(f"{where}: field 'inference/scales' must be a list of positive numbers, got {scales!r}")
            flip = entry.get("flip", False)
            if not isinstance(flip, bool):
                raise SegbenchError(f"{where}: field 'inference/flip' must be true or false, got {flip!r}")
            return cls(mode, scales=tuple(float(v) for v in scales), flip=flip)
        return cls(mode)

    def record(self, size: int | None) -> dict[str, Any]:
        """The submission record's `inference` block (size: the long side the frames were resized to)."""
        return {
            "mode": self.mode,
            "size": size,
            "crop": None if self.crop is None else list(self.crop),
            "stride": None if self.stride is None else list(self.stride),
            "scales": None if self.scales is None else list(self.scales),
            "flip": self.flip,
        }


def _pair(value: Any, where: str) -> tuple[int, int]:
    """A positive integer (square) or [height, width] of positive integers."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value, value]
    if (
        not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        raise SegbenchError(f"{where} must be a positive integer or [height, width], got {value!r}")
    return (value[0], value[1])


@dataclass(frozen=True)
class ModelSpec:
    """A model as the config names it: how to load it, which label space it predicts in, how it is run."""

    name: str
    kind: str
    path: Path
    label_space: str | None  # None: as the model file declares it
    role: str = "model"
    inference_size: int | None = None
    inference: InferenceMode = field(default_factory=InferenceMode)
    # For files that do not carry them (ONNX without segbench's metadata): 0..1-unit
    # {"mean": [...], "std": [...]} and the padding stride.
    normalization: Mapping[str, Any] | None = None
    stride: int | None = None
    # The config entry as given (or resolved by Snakemake), settings this class does not name included.
    settings: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str) -> ModelSpec:
        if name not in config["models"]:
            raise SegbenchError(f"unknown model or baseline '{name}' (the config defines: {sorted(config['models'])})")
        return cls.from_entry(name, config["models"][name])

    @classmethod
    def from_entry(cls, name: str, entry: Mapping[str, Any]) -> ModelSpec:
        """The spec of one resolved `models:` entry (what the workflow's rules pass as JSON)."""
        where = f"model '{name}'"
        if entry["kind"] == "predictions" and "inference" in entry:
            raise SegbenchError(f"{where}: a predictions folder is not run: field 'inference' does not apply")
        if entry["kind"] != "onnx" and ("normalization" in entry or "stride" in entry):
            raise SegbenchError(f"{where}: fields 'normalization' and 'stride' apply to kind 'onnx' only "
                                "(the other kinds carry their own)")
        return cls(
            name=name,
            kind=entry["kind"],
            path=Path(entry["path"]),
            label_space=entry["label_space"],
            role=entry.get("role", "model"),
            inference_size=entry.get("inference_size"),
            inference=InferenceMode.from_config(entry.get("inference"), where),
            normalization=entry.get("normalization"),
            stride=entry.get("stride"),
            settings=dict(entry),
        )

    @classmethod
    def from_json(cls, text: str) -> ModelSpec:
        """The spec a workflow rule passes: {"name": ..., **the model's config entry} as JSON."""
        try:
            document = json.loads(text)
            name = document.pop("name")
            return cls.from_entry(name, document)
        except (json.JSONDecodeError, AttributeError, KeyError, TypeError) as exc:
            raise SegbenchError(f"--model-spec: not a model entry as JSON with a name ({exc!r}): {text[:200]}") from None

    def entry(self) -> dict[str, Any]:
        """{"name": ..., **the config entry}: what `from_json` reads back."""
        fields = {"kind": self.kind, "path": str(self.path), "label_space": self.label_space, "role": self.role}
        if self.inference_size is not None:
            fields["inference_size"] = self.inference_size
        return {"name": self.name, **self.settings, **fields}

    def with_path(self, path: Path) -> ModelSpec:
        """The same model read from another place (a job's local copy of its input)."""
        return replace(self, path=Path(path))


def shard_total(frames: int, shard_size: int, max_shards: int | None) -> int:
    """How many shards a split of `frames` frames is cut into: about `shard_size` frames each,
    rounded up to a power of two (so that the count, and with it every frame's shard, changes
    only when the split doubles or halves), and at most `max_shards`. At least one."""
    wanted = max(1, -(-frames // shard_size))
    total = 1 << (wanted - 1).bit_length()
    return total if max_shards is None else max(1, min(total, max_shards))


def shard_of(frame_id: str, shards: int) -> int:
    """The shard a frame belongs to: a stable hash of its id, so that adding or removing a frame
    moves no other frame to another shard."""
    digest = hashlib.sha256(frame_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def by_shard(items: Iterable[T], frame_id: Callable[[T], str], shards: int) -> dict[int, list[T]]:
    """`items` (frames, or frame index entries) grouped by the shard of their frame id
    (shard_of), each group in the items' order: the one membership the plan and the steps read."""
    grouped: dict[int, list[T]] = {}
    for item in items:
        grouped.setdefault(shard_of(frame_id(item), shards), []).append(item)
    return grouped
