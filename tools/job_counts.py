"""How many jobs of each rule a Snakemake run planned or executed, read from what it printed.

Used by the end-to-end tests (through tests/workflow_helpers.py) and the workflow benchmarks.
"""

from __future__ import annotations

import re


def planned_job_table(output: str) -> dict[str, int]:
    """Rule -> job count from the table a dry run prints (`snakemake -n --quiet rules`); {} when
    there is nothing to do."""
    jobs = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] not in ("total", "job"):
            jobs[parts[0]] = int(parts[1])
    return jobs


def finished_jobs(output: str) -> list[tuple[str, str]]:
    """(job id, rule) of each job a run executed: the line `Finished jobid: N (Rule: NAME)` that
    Snakemake prints for each job done, whatever the executor and however the job itself is shown
    (a run shows a job as one line, the Snakefile's onstart; unless `--quiet progress`)."""
    return re.findall(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$", output, re.M)


def executed_jobs(output: str) -> dict[str, int]:
    """Rule -> how many of its jobs a run executed (finished_jobs)."""
    jobs: dict[str, int] = {}
    for _, rule in finished_jobs(output):
        jobs[rule] = jobs.get(rule, 0) + 1
    return jobs


def executed_wildcards(output: str, rule: str) -> list[dict[str, str]]:
    """The wildcards of each job of `rule` a run executed (finished_jobs), read from the line
    Snakemake shows a job with (`Job N: RULE name=value,...`)."""
    shown = {m.group(1): m.group(3) for m in re.finditer(r"^Job (\d+): (\w+) ?(.*)$", output, re.M)
             if m.group(2) == rule}
    return [dict(pair.split("=", 1) for pair in shown[job].split(",") if pair)
            for job, done in finished_jobs(output) if done == rule]
