"""The dataset's identity: its manifest (every file's SHA-256) and dataset_id, verified against a
committed manifest when one is given, and the frame index the workflow's shard jobs read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.benchmark import Benchmark
from ..datasets import dataset_layout, read_dataset
from ..io.fileio import sha256_file, write_json
from ..records import provenance
from ..records.frameindex import build_index, write_index


def dataset_manifest(benchmark: Benchmark, data: Path, manifest: Path | None) -> dict[str, Any]:
    """The manifest of the bytes on disk; with `manifest`, verified against it (refused on mismatch)."""
    manifest_doc, _ = identify_dataset(benchmark, data, manifest)
    return manifest_doc


def identify_dataset(benchmark: Benchmark, data: Path, manifest: Path | None,
                     sha256: provenance.Hasher = sha256_file) -> tuple[dict[str, Any], list]:
    """(the manifest, the frames): the manifest of the bytes on disk, or the committed one they
    were verified against. The workflow calls it when it builds the DAG too, with `sha256` its
    kept digests (segbench.workflow.digests), so that the job and the plan identify alike."""
    frames = read_dataset(benchmark, data)
    layout = dataset_layout(benchmark, data)
    if manifest is None:
        built = provenance.build_manifest(
            data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key, layout=layout, sha256=sha256
        )
        return built, frames
    expected = provenance.read_manifest(manifest, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key)
    provenance.verify_manifest(
        expected, data, frames, id_prefix=benchmark.id_prefix, group_key=benchmark.group_key, manifest_path=manifest,
        layout=layout, sha256=sha256,
    )
    return expected, frames


def write_identity(benchmark: Benchmark, data: Path, verify: Path | None, manifest_out: Path | None,
                   dataset_id_out: Path | None, index_out: Path | None) -> dict[str, Any]:
    """Identify the dataset and write the requested documents; returns the manifest."""
    manifest, frames = identify_dataset(benchmark, data, verify)
    if manifest_out:
        provenance.write_manifest(manifest_out, manifest)
    if dataset_id_out:
        write_json(dataset_id_out, {"dataset_id": manifest["dataset_id"], "frames": len(manifest["frames"])})
    if index_out:
        write_index(index_out, build_index(benchmark.name, data, frames, manifest))
    return manifest
