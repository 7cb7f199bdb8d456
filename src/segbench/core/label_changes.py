"""What a correction of a split's labels changed, frame by frame: two manifests' entries compared
by their label's SHA-256 (so a frame whose label bytes are the same keeps its counts, whatever
else changed), the frames added and the frames removed. Pure computation: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LabelChanges:
    changed: tuple[str, ...]  # in both, with other label bytes
    added: tuple[str, ...]  # only in the new manifest
    removed: tuple[str, ...]  # only in the old one

    @property
    def recounted(self) -> tuple[str, ...]:
        """The frames whose counts must be made again from the masks (changed and added)."""
        return tuple(sorted((*self.changed, *self.added)))

    def as_dict(self) -> dict[str, list[str]]:
        return {"changed": list(self.changed), "added": list(self.added), "removed": list(self.removed)}

    def describe(self) -> str:
        return f"{len(self.changed)} label(s) changed, {len(self.added)} frame(s) added, {len(self.removed)} removed"


def label_changes(old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]], split: str) -> LabelChanges:
    """The changes to `split` between two manifests' frame entries (frame_id, split, label.sha256)."""
    def labels(entries: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
        return {e["frame_id"]: (e.get("label") or {}).get("sha256") for e in entries if e["split"] == split}

    before, after = labels(old), labels(new)
    return LabelChanges(
        changed=tuple(sorted(f for f in before.keys() & after.keys() if before[f] != after[f])),
        added=tuple(sorted(after.keys() - before.keys())),
        removed=tuple(sorted(before.keys() - after.keys())),
    )
