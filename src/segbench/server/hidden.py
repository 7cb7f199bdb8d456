"""A phase's hidden split as the server holds it: the benchmark, the frames its manifest lists
(what an upload is checked against) and the frames on disk with their labels (what a worker scores
against), the data verified against the manifest, so the dataset_id on every result is the data's."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from ..core.benchmark import Benchmark
from ..datasets.base import Frame
from ..errors import SegbenchError
from ..protocols.definitions import load_benchmark
from ..stages.uploads import manifest_frames
from ..steps.dataset_identity import dataset_manifest
from ..steps.frames import frames_of_split


@dataclass(frozen=True, eq=False)
class HiddenSplit:
    benchmark: Benchmark
    split: str
    data: Path
    manifest: Path
    dataset_id: str
    listed: tuple[Frame, ...]  # from the manifest: ids and prediction names
    frames: tuple[Frame, ...]  # from the data: with the label files

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """A hashable name of this split (for caches): hidden_split()'s arguments for the split on
        disk; for a superseded one (server/versions.py) its manifest is the store's copy."""
        return self.benchmark.name, self.split, str(self.data), str(self.manifest), self.dataset_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HiddenSplit) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    @cached_property
    def groups(self) -> dict[str, str]:
        """frame_id -> the benchmark's independent unit (wall, drive, user); built once per split
        (a worker asks for it several times an upload), never to be changed by a caller."""
        return {f.frame_id: f.group_id for f in self.listed}


def open_hidden(benchmark: str, split: str, data: Path, manifest: Path) -> HiddenSplit:
    """The split, its data's bytes verified against the manifest (every file's SHA-256)."""
    definition = load_benchmark(benchmark)
    listed, dataset_id = manifest_frames(definition, Path(manifest), split)
    verified = dataset_manifest(definition, Path(data), Path(manifest))
    if verified["dataset_id"] != dataset_id:
        raise SegbenchError(f"{manifest}: dataset_id {dataset_id}, the data in {data} is {verified['dataset_id']}")
    frames = frames_of_split(definition, Path(data), split)
    if [f.frame_id for f in frames] != [f.frame_id for f in listed]:
        raise SegbenchError(f"{data}: the frames of split '{split}' are not the ones {manifest} lists")
    return HiddenSplit(definition, split, Path(data), Path(manifest), dataset_id, tuple(listed), tuple(frames))


@lru_cache(maxsize=None)
def hidden_split(benchmark: str, split: str, data: str, manifest: str, dataset_id: str) -> HiddenSplit:
    """One verification per process and phase (the server's and each worker's start), and the
    dataset_id the host registered checked against the data now on disk."""
    hidden = open_hidden(benchmark, split, Path(data), Path(manifest))
    if hidden.dataset_id != dataset_id:
        raise SegbenchError(f"phase of {benchmark}: registered for dataset {dataset_id}, but {manifest} now "
                            f"says {hidden.dataset_id}")
    return hidden
