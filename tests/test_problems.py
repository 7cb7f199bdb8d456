"""io/problems: every problem of an input in one refusal, by kind, SHOWN lines a kind."""

import pytest

from segbench.errors import SegbenchError
from segbench.io.problems import SHOWN, Problem, Problems, kind_of


def refusal(problems: Problems) -> str:
    with pytest.raises(SegbenchError) as info:
        problems.refuse("s.zip", "upload refused")
    return str(info.value)


def test_nothing_to_refuse():
    Problems().refuse("s.zip", "upload refused")


def test_one_problem_is_counted_under_its_kind():
    problems = Problems()
    problems.add("missing predictions", "missing prediction for frame a: s.zip/a.png")
    assert refusal(problems) == ("s.zip: upload refused: 1 problem:\n"
                                 "  missing predictions (1):\n"
                                 "    missing prediction for frame a: s.zip/a.png")


def test_each_kind_lists_its_first_problems_and_counts_the_rest_in_the_order_kinds_were_found():
    problems = Problems()
    missing = [f"missing {i}" for i in range(SHOWN + 480)]
    for i, line in enumerate(missing):
        problems.add("missing predictions", line)
        if i == 3:
            problems.add("masks of a size not accepted", "size 1")
    problems.add("masks of a size not accepted", "size 2")
    assert len(problems) == SHOWN + 482
    assert refusal(problems) == "\n".join([
        f"s.zip: upload refused: {SHOWN + 482} problems:",
        f"  missing predictions ({SHOWN + 480}):", *(f"    {line}" for line in missing[:SHOWN]), "    ... and 480 more",
        "  masks of a size not accepted (2):", "    size 1", "    size 2"])


def test_exactly_shown_problems_of_a_kind_have_no_more_line():
    problems = Problems()
    for i in range(SHOWN):
        problems.add("k", f"p{i}")
    assert "more" not in refusal(problems) and refusal(problems).count("\n    p") == SHOWN


def test_kind_of_gives_an_error_its_kind_and_keeps_its_message_and_a_problems_own_kind():
    with pytest.raises(Problem) as info, kind_of("not PNG files"):
        raise SegbenchError("a.png: not a PNG file")
    assert (info.value.kind, str(info.value)) == ("not PNG files", "a.png: not a PNG file")
    with pytest.raises(Problem) as info, kind_of("outer"):
        raise Problem("inner", "x")
    assert info.value.kind == "inner"
    problems = Problems()
    problems.add_problem(info.value)
    assert problems.by_kind == {"inner": ["x"]}
    with pytest.raises(ValueError), kind_of("k"):  # not an input's problem: untouched
        raise ValueError("bug")
