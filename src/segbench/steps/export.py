"""The participant's upload as a step: masks made elsewhere, or a model run here on the split
(labelled or not: an unlabelled frame's mask is made at its image's size), written in the
benchmark's official format (segbench.stages.uploads) for the dataset the manifest names."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..core.benchmark import Benchmark
from ..core.labels import LabelSpace
from ..core.model_spec import ModelSpec
from ..datasets import select_split
from ..stages.uploads import export_upload, manifest_frames, void_warnings
from .dataset_identity import identify_dataset
from .inference import infer
from .model_identity import model_space


def export_predictions(benchmark: Benchmark, manifest: Path, split: str, predictions: Path, space: LabelSpace,
                       out: Path) -> tuple[int, str, list[str]]:
    """The upload of a folder or archive of masks in `space`: (masks written, dataset_id, a line
    per frame holding void values, uploads.void_warnings)."""
    frames, dataset_id = manifest_frames(benchmark, manifest, split)
    void = export_upload(benchmark, frames, dataset_id, predictions, out, space)
    return len(void), dataset_id, void_warnings(space, void)


def export_model(benchmark: Benchmark, manifest: Path, split: str, data: Path, spec: ModelSpec, out: Path,
                 batch_size: int, device: str) -> tuple[int, str, list[str]]:
    """The upload of `spec` run on the split of `data`, which must be the manifest's bytes (the
    upload names its dataset_id); the masks are made in a temporary folder beside `out` and
    removed, whatever happens. Returns what export_predictions does."""
    frames, dataset_id = manifest_frames(benchmark, manifest, split)
    _, on_disk = identify_dataset(benchmark, data, manifest)  # refuses data that differ from the manifest
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}.", dir=out.parent) as work:
        infer(benchmark, select_split(on_disk, split), spec, Path(work), batch_size, device, progress=False)
        space = model_space(spec, benchmark)
        void = export_upload(benchmark, frames, dataset_id, Path(work), out, space)
    return len(void), dataset_id, void_warnings(space, void)
