"""Dataset readers, one per on-disk format, all yielding the same Frame records."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SegbenchError
from .base import Frame
from .format import DatasetFormat

if TYPE_CHECKING:
    from ..core.benchmark import Benchmark

# Format name (a benchmark's dataset/format) -> the reader module that defines its FORMAT.
READERS = {
    "painting-vision": "painting_vision",
    "idd": "idd",
    "easyportrait": "easyportrait",
}


def dataset_format(name: str) -> DatasetFormat:
    if name not in READERS:
        raise SegbenchError(f"no reader for dataset format '{name}' (known: {sorted(READERS)})")
    return import_module(f".{READERS[name]}", __name__).FORMAT


def benchmark_format(benchmark: Benchmark) -> DatasetFormat:
    try:
        return dataset_format(benchmark.dataset_format)
    except SegbenchError as exc:
        raise SegbenchError(f"benchmark '{benchmark.name}': {exc}") from None


def read_dataset(benchmark: Benchmark, data: Path) -> list[Frame]:
    """Every frame of the dataset at `data`, sorted by frame id, read by the benchmark's format."""
    return benchmark_format(benchmark).read_frames(Path(data), benchmark.splits)


def dataset_layout(benchmark: Benchmark, data: Path) -> dict[str, str]:
    """How the copy at `data` is laid out, as its manifest records it (DatasetFormat.layout)."""
    return benchmark_format(benchmark).layout(Path(data))


def require_images(frames: Sequence[Frame]) -> None:
    """Refuse inference of frames whose image is not there, naming every missing image (a copy
    of IDD's gtFine/ alone is audited and scored without images, never inferred)."""
    missing = [f for f in frames if not Path(f.image).is_file()]
    if missing:
        lines = [f"frame {f.frame_id}: {f.image}" for f in missing[:20]]
        more = f"\n  ... and {len(missing) - 20} more" if len(missing) > 20 else ""
        raise SegbenchError(
            f"{len(missing)} frame(s) have no image, and inference needs the images:\n  " + "\n  ".join(lines) + more
        )


def require_labels(frames: Sequence[Frame], what: str) -> None:
    """Refuse frames of an unlabelled split for `what` (scoring, an evaluated audit)."""
    unlabelled = [f for f in frames if not f.labelled]
    if unlabelled:
        splits = sorted({f.split for f in unlabelled})
        raise SegbenchError(
            f"split {', '.join(repr(s) for s in splits)} has no labels ({len(unlabelled)} frame(s), e.g. "
            f"'{unlabelled[0].frame_id}', no {unlabelled[0].label.name}): its frames can be inferred and exported, "
            f"not used for {what}"
        )


def select_split(frames: Sequence[Frame], split: str) -> list[Frame]:
    return [f for f in frames if f.split == split]
