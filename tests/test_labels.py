"""Label spaces (segbench.core.labels): void ranges, mirrors."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.core.labels import DROP, INVALID, LabelSpace
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
