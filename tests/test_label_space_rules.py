"""Label-space and benchmark features the new protocols added: void ranges, mirrors, mapping files,
and reports that apply only to the model spaces that map into them."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.confusion import FrameCounts, joint_histogram
from segbench.core.evaluation import evaluate
from segbench.core.labels import DROP, INVALID, LabelSpace
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark


def space(classes, **extra):
    return LabelSpace.from_table({"name": "t", "classes": classes, **extra})


def test_void_from_drops_every_value_above():
    lut = space([{"id": 0, "name": "a"}, {"id": 1, "name": "b"}], void_from=10, void=[5]).raw_lut()
    assert list(lut[:2]) == [0, 1] and lut[5] == DROP and set(lut[10:]) == {DROP}
    assert lut[2] == lut[9] == INVALID


def test_mirror_must_name_a_class_that_mirrors_back():
    with pytest.raises(SegbenchError, match="class 'l' mirrors 'r', which is not a class mirroring it back"):
        space([{"id": 0, "name": "l", "mirror": "r"}, {"id": 1, "name": "r"}])
    with pytest.raises(SegbenchError, match="class 'l' mirrors 'x'"):
        space([{"id": 0, "name": "l", "mirror": "x"}])
    pair = space([{"id": 0, "name": "l", "mirror": "r"}, {"id": 1, "name": "r", "mirror": "l"}, {"id": 2, "name": "m"}])
    np.testing.assert_array_equal(pair.mirrored_ids(), [1, 0, 2])


def test_mapping_files_are_loaded():
    benchmark = load_benchmark("idd20k-icvgip2020")
    assert ("idd-level3-misc", "idd-level2") in benchmark.mapping_rules
    assert benchmark.reaches(benchmark.ground_truth, benchmark.space("idd-level1-reference"))
    assert not benchmark.reaches(benchmark.space("idd-level2"), benchmark.space("idd-level3-misc"))


def test_a_model_space_reaching_no_report_is_refused():
    benchmark = load_benchmark("idd20k-icvgip2020")
    level1 = benchmark.space("idd-level1")
    counts = FrameCounts.from_histograms(["f"], [joint_histogram(np.zeros((2, 2), np.uint8), np.zeros((2, 2), np.uint8))])
    results = evaluate(benchmark, counts, level1)  # a level-1 model: the level-1 reports only
    assert results["level3"]["mIoU_nan_skipping"] is None and results["level2"]["mIoU_nan_skipping"] is None
    assert results["level1_corrected"]["mIoU_nan_skipping"] == 1.0
    other = space([{"id": 0, "name": "thing"}])
    with pytest.raises(SegbenchError, match=r"predictions in label space 't' map into none of its reports \(level3: idd-level3-misc"):
        evaluate(benchmark, counts, other)
