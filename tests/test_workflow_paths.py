"""Where the workflow writes each result (segbench.workflow.paths): templates filled from a job's
wildcards, a wildcard's constraint."""

from __future__ import annotations

import re

from segbench.workflow.paths import ResultPaths, one_of

PV = "painting-vision"


def test_a_path_is_its_template_filled_and_the_rest_stays_wildcards():
    paths = ResultPaths("res")
    assert paths.path("counts", benchmark=PV, split="test", model="m", shard=3) == f"res/{PV}/test/m/counts/shard-3.parquet"
    assert paths.path("counts", model="floor") == "res/{benchmark}/{split}/floor/counts/shard-{shard}.parquet"
    assert paths.path("leaderboard") == "res/leaderboard"


def test_a_constraint_matches_exactly_one_name():
    constraint = one_of(["best.pt", "floor"])
    assert constraint == r"best\.pt|floor"
    assert [bool(re.fullmatch(constraint, n)) for n in ("best.pt", "floor", "bestXpt", "best.pt2")] == [True, True, False, False]
