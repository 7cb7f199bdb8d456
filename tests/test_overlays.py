"""The pieces of the qualitative overlays (stages/overlays.py): which frames are picked, and how void,
classes and errors are painted (the figures themselves: test_workflow.py)."""

from __future__ import annotations

import numpy as np

from segbench.core.labels import LabelClass, LabelSpace
from segbench.stages.overlays import CORRECT, HATCH, PANEL, WRONG, FrameScore, colourise, error_map, hatch, pick, shrink

DARK, LIGHT = (h.tolist() for h in HATCH)


def score(frame_id: str, miou: float) -> FrameScore:
    return FrameScore(frame_id, miou, 1.0, 10)


def test_pick_breaks_ties_by_frame_id():
    worst, best = pick([score("b", 0.5), score("a", 0.5), score("c", 0.9), score("d", 0.1)], 2)
    assert [s.frame_id for s in worst] == ["d", "a"]  # order: d 0.1, a 0.5, b 0.5, c 0.9
    assert [s.frame_id for s in best] == ["c", "b"]
    assert pick([], 3) == ([], [])


def test_hatch_is_diagonal_stripes_of_the_cell_width():
    stripes = hatch((2, 8)).tolist()
    assert stripes[0] == [DARK] * 6 + [LIGHT] * 2  # (x + y) // 6 even
    assert stripes[1] == [DARK] * 5 + [LIGHT] * 3


def test_colourise_uses_the_space_colours_and_hatches_void_and_unknown_values():
    space = LabelSpace("two", (LabelClass(0, "a", (10, 20, 30)), LabelClass(1, "b", (40, 50, 60))), void=(255,))
    mask = np.array([[0, 1, 255, 7]], dtype=np.uint8)
    assert colourise(mask, space, np.zeros((1, 4), bool)).tolist() == [[[10, 20, 30], [40, 50, 60], DARK, DARK]]
    assert colourise(mask, space, np.array([[True, False, False, False]])).tolist()[0][0] == DARK


def test_error_map_dims_tints_and_hatches():
    image = np.full((1, 3, 3), 100, np.uint8)
    out = error_map(image, np.array([[1, 1, 1]]), np.array([[1, 2, 1]]), np.array([[False, False, True]]))
    # grey is int(100 * 0.35) = 35; a correct pixel is half grey, half CORRECT, truncated
    assert out.tolist() == [[[int(0.5 * 35 + 0.5 * c) for c in CORRECT.tolist()], WRONG.tolist(), DARK]]
    assert out[0, 0].tolist() == [40, 97, 51]


def test_shrink_only_above_the_panel_size():
    small = np.zeros((10, 20, 3), np.uint8)
    assert shrink(small, nearest=True) is small
    large = np.zeros((2 * PANEL, PANEL, 3), np.uint8)
    assert shrink(large, nearest=True).shape == (PANEL, PANEL // 2, 3)
