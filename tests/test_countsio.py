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
