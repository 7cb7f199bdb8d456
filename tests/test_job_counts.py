"""tools/job_counts.py: the jobs a Snakemake run executed, read from what it printed."""

from __future__ import annotations

from workflow_helpers import executed_jobs, executed_wildcards

# As Snakemake prints a run: a job shown when it starts, `Finished jobid` when it ends; a job
# that started and did not finish (killed) is not executed.
OUTPUT = """\
[Mon Dec  7 18:25:29 2026]
Job 4: pull_pinned
Finished jobid: 4 (Rule: pull_pinned)
Job 18: infer benchmark=painting-vision,model=segformer-ade,shard=1,split=test
Job 9: infer benchmark=painting-vision,model=best,shard=0,split=test
Job 52: content_key key=bc67,slot=painting-vision/dataset
Finished jobid: 52 (Rule: content_key)
Finished jobid: 18 (Rule: infer)
Job 30: score_floor benchmark=painting-vision,shard=0,split=test
Finished jobid: 30 (Rule: score_floor)
"""


def test_executed_jobs_count_the_finished_ones():
    assert executed_jobs(OUTPUT) == {"pull_pinned": 1, "content_key": 1, "infer": 1, "score_floor": 1}


def test_executed_wildcards_are_the_finished_jobs_own():
    assert executed_wildcards(OUTPUT, "infer") == [
        {"benchmark": "painting-vision", "model": "segformer-ade", "shard": "1", "split": "test"}]
    assert executed_wildcards(OUTPUT, "score_floor") == [{"benchmark": "painting-vision", "shard": "0", "split": "test"}]
    assert executed_wildcards(OUTPUT, "pull_pinned") == [{}]
    assert executed_wildcards(OUTPUT, "content_key") == [{"key": "bc67", "slot": "painting-vision/dataset"}]
    assert executed_wildcards(OUTPUT, "score") == []
