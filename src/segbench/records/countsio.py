"""Per-frame confusion counts on disk: Parquet of the non-zero cells, with provenance metadata.

When boundary bands were counted, their cells follow the confusion cells in the same table:
column `band` is 0 for a confusion cell and the band flags (1: ground-truth band, 2: predicted
band, 3: both) for a band cell, whose label space is `band_space`; files without bands have
neither column."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.confusion import BandCounts, FrameCounts
from ..errors import SegbenchError
from ..io.fileio import atomic_path
from ..io.oserrors import file_error

METADATA_KEY = b"segbench"


def write_counts(path: Path, counts: FrameCounts, metadata: dict[str, Any]) -> None:
    """Write atomically; `metadata` (JSON) records the frames, label spaces and origin."""
    bands = counts.bands
    columns = {
        "frame": np.concatenate([counts.frame, bands.frame]),
        "gt": np.concatenate([counts.gt, bands.gt]),
        "pred": np.concatenate([counts.pred, bands.pred]),
        "count": np.concatenate([counts.count, bands.count]),
    }
    table = {
        "frame_id": pa.DictionaryArray.from_arrays(
            pa.array(columns["frame"], pa.int32()), pa.array(list(counts.frame_ids), pa.string())
        ),
        "gt": pa.array(columns["gt"], pa.uint8()),
        "pred": pa.array(columns["pred"], pa.uint8()),
        "count": pa.array(columns["count"], pa.int64()),
    }
    meta = dict(metadata, frames=list(counts.frame_ids))
    if bands.spaces:
        plain = np.zeros(len(counts.count), np.uint8)
        table["band"] = pa.array(np.concatenate([plain, bands.flags]), pa.uint8())
        indices = np.concatenate([np.full(len(plain), -1, np.int32), bands.space.astype(np.int32)])
        table["band_space"] = pa.DictionaryArray.from_arrays(
            pa.array(indices, pa.int32(), mask=indices < 0), pa.array(list(bands.spaces), pa.string())
        )
        meta["band_spaces"] = list(bands.spaces)
    table = pa.table(table)
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True).encode()})
    with atomic_path(path) as partial:
        pq.write_table(table, partial, compression="zstd")


def read_counts(path: Path) -> tuple[FrameCounts, dict[str, Any]]:
    if os.path.isdir(path):  # pyarrow would read a folder as a dataset of its files
        raise file_error(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)), path, "counts file")
    try:
        os.stat(path)
    except OSError as exc:
        raise file_error(exc, path, "counts file") from None
    try:
        # by path, as before: pyarrow's native reader, not a Python file object read through
        # callbacks from pyarrow's threads
        table = pq.read_table(str(path))
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
    gt = table.column("gt").to_numpy().astype(np.uint8)
    pred = table.column("pred").to_numpy().astype(np.uint8)
    count = table.column("count").to_numpy().astype(np.int64)
    flags = table.column("band").to_numpy().astype(np.uint8) if "band" in table.column_names else np.zeros(len(gt), np.uint8)
    plain, banded = flags == 0, flags != 0
    bands = BandCounts()
    if "band_space" in table.column_names:
        spaces = table.column("band_space").combine_chunks()
        position = {s: i for i, s in enumerate(meta["band_spaces"])}
        names = spaces.dictionary.to_pylist()
        space = np.array([position[n] for n in names], np.int8)[spaces.indices.fill_null(0).to_numpy()]
        bands = BandCounts(tuple(meta["band_spaces"]), frame[banded].astype(np.int32), space[banded], flags[banded],
                           gt[banded], pred[banded], count[banded])
    counts = FrameCounts(
        frame_ids=frames,
        frame=frame[plain].astype(np.int32),
        gt=gt[plain],
        pred=pred[plain],
        count=count[plain],
        bands=bands,
    )
    return counts, meta
