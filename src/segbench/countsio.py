"""Per-frame confusion counts on disk: Parquet of the non-zero cells, with provenance metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .confusion import FrameCounts
from .errors import SegbenchError
from .fileio import atomic_path

METADATA_KEY = b"segbench"


def write_counts(path: Path, counts: FrameCounts, metadata: dict[str, Any]) -> None:
    """Write atomically; `metadata` (JSON) records the frames, label spaces and origin."""
    table = pa.table(
        {
            "frame_id": pa.DictionaryArray.from_arrays(
                pa.array(counts.frame, pa.int32()), pa.array(list(counts.frame_ids), pa.string())
            ),
            "gt": pa.array(counts.gt, pa.uint8()),
            "pred": pa.array(counts.pred, pa.uint8()),
            "count": pa.array(counts.count, pa.int64()),
        }
    )
    meta = dict(metadata, frames=list(counts.frame_ids))
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True).encode()})
    with atomic_path(path) as partial:
        pq.write_table(table, partial, compression="zstd")


def read_counts(path: Path) -> tuple[FrameCounts, dict[str, Any]]:
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise SegbenchError(f"{path}: counts file not found") from None
    except (OSError, pa.ArrowException) as exc:
        raise SegbenchError(f"{path}: not a segbench counts file ({exc})") from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise SegbenchError(f"{path}: not a segbench counts file (no segbench metadata)")
    meta = json.loads(raw)
    frames = tuple(meta["frames"])
    position = {f: i for i, f in enumerate(frames)}
    names = table.column("frame_id").combine_chunks()
    dictionary = names.dictionary.to_pylist() if len(names) else []
    remap = np.array([position[f] for f in dictionary], dtype=np.int32)
    frame = remap[names.indices.to_numpy()] if len(names) else np.zeros(0, np.int32)
    counts = FrameCounts(
        frame_ids=frames,
        frame=frame.astype(np.int32),
        gt=table.column("gt").to_numpy().astype(np.uint8),
        pred=table.column("pred").to_numpy().astype(np.uint8),
        count=table.column("count").to_numpy().astype(np.int64),
    )
    return counts, meta
