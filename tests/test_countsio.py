"""Per-frame counts on disk (segbench.records.countsio): the cells and the metadata come back as
written, a frame without cells included; what is not a counts file is named."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from segbench.core.confusion import FrameCounts
from segbench.errors import SegbenchError
from segbench.records.countsio import read_counts, write_counts


def test_cells_and_metadata_come_back_as_written(tmp_path):
    # frame b: one cell; frame a: two cells, 255 void beside class 3; frame c: no cells at all
    counts = FrameCounts(frame_ids=("b", "a", "c"), frame=np.array([0, 1, 1], np.int32),
                         gt=np.array([1, 3, 255], np.uint8), pred=np.array([2, 3, 0], np.uint8),
                         count=np.array([5, 7, 2**40], np.int64))
    write_counts(tmp_path / "c.parquet", counts, {"benchmark": "x", "model": {"name": "m"}})
    again, meta = read_counts(tmp_path / "c.parquet")
    assert again.frame_ids == ("b", "a", "c")
    assert again.frame.tolist() == [0, 1, 1] and again.gt.tolist() == [1, 3, 255] and again.pred.tolist() == [2, 3, 0]
    assert again.count.tolist() == [5, 7, 2**40] and again.count.dtype == np.int64
    assert meta == {"benchmark": "x", "model": {"name": "m"}, "frames": ["b", "a", "c"]}
    assert again.bands.spaces == () and "band_spaces" not in meta


def test_a_parquet_without_segbench_metadata_is_named(tmp_path):
    pq.write_table(pa.table({"gt": pa.array([1], pa.uint8())}), tmp_path / "other.parquet")
    with pytest.raises(SegbenchError) as exc:
        read_counts(tmp_path / "other.parquet")
    assert str(exc.value) == f"{tmp_path / 'other.parquet'}: not a segbench counts file (no segbench metadata)"


def test_a_missing_or_damaged_file_is_named(tmp_path):
    with pytest.raises(SegbenchError) as exc:
        read_counts(tmp_path / "gone.parquet")
    assert str(exc.value) == f"{tmp_path / 'gone.parquet'}: counts file not found"
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(SegbenchError, match=r"bad\.parquet: not a segbench counts file \("):
        read_counts(tmp_path / "bad.parquet")


def test_bands_come_back_as_written_without_pandas(tmp_path):
    """Two band spaces after the confusion cells (their band_space null); the round trip in a
    process of its own never imports pandas (pyarrow would, for pa.array or to_numpy: ~0.4 s of
    CPU in every job that reads or writes counts)."""
    import subprocess
    import sys

    script = f"""
import sys
import numpy as np
from pathlib import Path
from segbench.core.confusion import BandCounts, FrameCounts
from segbench.records.countsio import read_counts, write_counts
bands = BandCounts(("s", "t"), np.array([1, 0, 1], np.int32), np.array([1, 0, 1], np.int8), np.array([3, 1, 2], np.uint8),
                   np.array([0, 2, 2], np.uint8), np.array([2, 2, 0], np.uint8), np.array([4, 9, 2**33], np.int64))
counts = FrameCounts(("x", "y"), np.array([0, 1], np.int32), np.array([1, 2], np.uint8), np.array([1, 0], np.uint8),
                     np.array([5, 6], np.int64), bands)
write_counts(Path({str(tmp_path / 'b.parquet')!r}), counts, {{}})
again, meta = read_counts(Path({str(tmp_path / 'b.parquet')!r}))
b = again.bands
print(again.frame.tolist(), again.gt.tolist(), again.pred.tolist(), again.count.tolist(), meta["band_spaces"])
print(b.spaces, b.frame.tolist(), b.space.tolist(), b.flags.tolist(), b.gt.tolist(), b.pred.tolist(), b.count.tolist())
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[0, 1] [1, 2] [1, 0] [5, 6] ['s', 't']",
                   "('s', 't') [1, 0, 1] [1, 0, 1] [3, 1, 2] [0, 2, 2] [2, 2, 0] [4, 9, 8589934592]",
                   "False"]
