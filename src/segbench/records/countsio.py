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
        "frame_id": pa.DictionaryArray.from_arrays(fixed_width(columns["frame"], np.int32), strings(counts.frame_ids)),
        "gt": fixed_width(columns["gt"], np.uint8),
        "pred": fixed_width(columns["pred"], np.uint8),
        "count": fixed_width(columns["count"], np.int64),
    }
    meta = dict(metadata, frames=list(counts.frame_ids))
    if bands.spaces:
        plain = np.zeros(len(counts.count), np.uint8)
        table["band"] = fixed_width(np.concatenate([plain, bands.flags]), np.uint8)
        indices = np.concatenate([np.full(len(plain), -1, np.int32), bands.space.astype(np.int32)])
        table["band_space"] = pa.DictionaryArray.from_arrays(
            fixed_width(indices, np.int32, valid=indices >= 0), strings(bands.spaces)
        )
        meta["band_spaces"] = list(bands.spaces)
    table = pa.Table.from_arrays(list(table.values()), names=list(table))
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True).encode()})
    with atomic_path(path) as partial:
        pq.write_table(table, partial, compression="zstd")


# Arrays built from and read back to NumPy through their buffers: pa.array and to_numpy import
# pandas where it is installed (pyarrow checks for its types), ~0.4 s of CPU in every job that
# reads or writes counts, for nothing.
def fixed_width(values: np.ndarray, dtype, valid: np.ndarray | None = None) -> pa.Array:
    """An Arrow array of `values` as NumPy's `dtype` (null where `valid` is False)."""
    data = np.ascontiguousarray(values, dtype=dtype)
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), len(data), [bitmap, pa.py_buffer(data)])


def strings(items) -> pa.Array:
    """An Arrow string array of `items`."""
    encoded = [item.encode() for item in items]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def as_numpy(column: pa.ChunkedArray | pa.Array, dtype) -> np.ndarray:
    """The values of a fixed-width column (a null's value is whatever its slot holds)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return np.frombuffer(array.buffers()[1], dtype, count=len(array) + array.offset)[array.offset:].copy()


def read_counts(path: Path) -> tuple[FrameCounts, dict[str, Any]]:
    if os.path.isdir(path):  # pyarrow would read a folder as a dataset of its files
        raise file_error(IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)), path, "counts file")
    try:
        os.stat(path)
    except OSError as exc:
        raise file_error(exc, path, "counts file") from None
    try:
        # by path, as before: pyarrow's native reader, not a Python file object read through
        # callbacks from pyarrow's threads (ParquetFile: read_table imports pandas)
        table = pq.ParquetFile(str(path)).read()
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
    frame = remap[as_numpy(names.indices, np.int32)] if len(names) else np.zeros(0, np.int32)
    gt = as_numpy(table.column("gt"), np.uint8)
    pred = as_numpy(table.column("pred"), np.uint8)
    count = as_numpy(table.column("count"), np.int64)
    flags = as_numpy(table.column("band"), np.uint8) if "band" in table.column_names else np.zeros(len(gt), np.uint8)
    plain, banded = flags == 0, flags != 0
    bands = BandCounts()
    if "band_space" in table.column_names:
        spaces = table.column("band_space").combine_chunks()
        position = {s: i for i, s in enumerate(meta["band_spaces"])}
        names = spaces.dictionary.to_pylist()
        indices = np.where(banded, as_numpy(spaces.indices, np.int32), 0)  # a confusion cell's is null
        space = np.array([position[n] for n in names], np.int8)[indices]
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
