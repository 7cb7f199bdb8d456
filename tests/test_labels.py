"""Label spaces (segbench.core.labels): void ranges, mirrors."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.labels import DROP, INVALID, NO_CLASS, LabelSpace, no_class_column
from segbench.errors import SegbenchError


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


def test_a_predicted_void_value_is_no_class_never_dropped():
    """The ground truth drops a void value; a prediction reads it as NO_CLASS (a miss), which a
    report's columns put after the classes; values neither a class nor void stay INVALID."""
    ab = [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}]
    pv = space(ab, void=[255])
    assert pv.raw_lut()[[0, 1, 2, 255]].tolist() == [0, 1, INVALID, DROP]
    assert pv.prediction_lut()[[0, 1, 2, 255]].tolist() == [0, 1, INVALID, NO_CLASS]
    assert pv.void_values().tolist() == [255]
    assert no_class_column(pv.prediction_lut(), pv.size)[[0, 1, 2, 255]].tolist() == [0, 1, INVALID, 2]
    level3 = space(ab, void_from=2)  # IDD's 26-class space: every value >= 26 void
    assert set(level3.prediction_lut()[2:]) == {NO_CLASS} and level3.void_values().tolist() == list(range(2, 256))
    misc = LabelSpace.from_table({"name": "m", "classes": [{"id": 0, "name": "a"}, {"id": 1, "name": "misc"}],
                                  "fold_values_from": {"value": 1, "into": "misc"}})
    assert set(misc.prediction_lut()[1:]) == {1} and misc.void_values().size == 0  # folded: a class, not void
    assert set(space(ab[:1]).prediction_lut()[1:]) == {INVALID}  # no void value (e.g. ade20k): 255 refused
