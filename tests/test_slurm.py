"""The workflow on a real SLURM cluster, through snakemake-executor-plugin-slurm.

Needs a running cluster with accounting (`tools/slurm-cluster up`: single node on 127.0.0.1,
slurmdbd, partition `debug`, account `lab`). Without one the module is skipped, except under
CI=true, where it fails: CI (`.ci/run`) brings the cluster up, so a missing one is a CI fault.

One fresh copy with the narrow configuration (tests/configs/pv-two-models.yaml) narrowed to its
model `best` (workflow_helpers.narrow_copy_for_a_mechanism) runs its results table (target `leaderboard`) with
`--profile workflow/profiles/slurm-ci`, inference sharded into several jobs per model. While it
runs, one inference job is killed inside its SLURM job (its `segbench infer` process gets
SIGKILL), so the job FAILS the way a crashed job does; the run must fail naming the rule and the
job's SLURM log. The re-run completes. sacct must then show every job of the DAG exactly once as
COMPLETED (nothing that had succeeded is redone) plus the one FAILED job, all submitted from that
copy. The local side is the shared local run of the narrow configuration (conftest.narrow_run):
the model's and the floor's metrics and the model's submission record are byte-identical to its
(the table, which also ranks the baseline this run leaves out, is made on the head node, in
Snakemake's process, by the same code as the local run's).

The runs are tests/slurm_sequence.py's, a process the session starts at its first test; this
module, sent last (conftest.run_order), reads what they did.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from slurm_sequence import cluster_problem, outcome, start
from workflow_helpers import NARROW_CONFIG, local_rules, pv_models, pv_records

pytestmark = [pytest.mark.workflow, pytest.mark.cluster]

# Painting Vision's 16 test frames in shards of the narrow configuration's shard_size (8): 2
# inference (and scoring) jobs per model. (A shard size of its own would make the local side a
# run of its own too: the shared narrow run is the comparison.)
SHARD_SIZE = yaml.safe_load(NARROW_CONFIG.read_text())["shard_size"]


@pytest.fixture(scope="module", autouse=True)
def cluster() -> None:
    problem = cluster_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but no SLURM cluster: {problem}", pytrace=False)
    pytest.skip(f"no SLURM cluster: {problem}")


def sacct_jobs(repo: Path, since: str) -> list[tuple[str, str, str]]:
    """(job id, rule, state) of the SLURM jobs submitted from `repo` since `since`."""
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-S", since, "-E", "now", "--format=JobID,Comment,State,WorkDir"],
                         capture_output=True, text=True, check=True).stdout
    jobs = []
    for line in out.splitlines():
        job, comment, state, workdir = line.split("|")
        if workdir == str(repo):
            match = re.fullmatch(r"rule_(.+?)(?:_wildcards_.*)?", comment)
            jobs.append((job, match.group(1) if match else comment, state.split()[0]))
    return jobs


@pytest.fixture(scope="module")
def runs(slurm_sequence_folder: Path, request) -> dict:
    """What the SLURM sequence did (started here when the session has not started it: this module alone)."""
    start(slurm_sequence_folder)
    # The local run to compare with is made (or waited for) while the sequence waits on its polls.
    request.getfixturevalue("narrow_run")
    done = outcome(slurm_sequence_folder, timeout=1800)
    if "error" in done:
        pytest.fail(f"the SLURM sequence failed:\n{done['error']}", pytrace=False)
    print(f"\n{done['timing']}")
    return dict(done, slurm=Path(done["slurm"]), planned=Counter(done["planned"]))


def test_a_failed_job_fails_the_run_naming_its_rule_and_slurm_log(runs: dict):
    rc, out = runs["first"]
    assert runs["killed"], f"no inference process was seen to kill:\n{out[-5000:]}"
    assert rc != 0, out[-5000:]
    assert "Error in rule infer" in out, out[-5000:]
    assert re.search(r"SLURM-job '\d+' failed, SLURM status is: 'FAILED'", out), out[-5000:]
    logs = re.findall(r"(\S*\.snakemake/slurm_logs/rule_infer/\S+?\.log)", out)
    assert logs, f"no SLURM log named:\n{out[-5000:]}"
    assert all((runs["slurm"] / log).is_file() or Path(log).is_file() for log in logs)


def test_rerun_completes_without_redoing_finished_jobs(runs: dict):
    rc, out = runs["second"]
    assert rc == 0, out[-5000:]
    jobs = sacct_jobs(runs["slurm"], runs["since"])
    states = Counter(state for _, _, state in jobs)
    assert states == {"COMPLETED": len(jobs) - 1, "FAILED": 1}, jobs
    assert [rule for _, rule, state in jobs if state == "FAILED"] == ["infer"]
    completed = Counter(rule for _, rule, state in jobs if state == "COMPLETED")
    # the local rules run on the head node, in snakemake's process: the content keys' markers, the
    # pulls, the metrics, records and table, `all` (if targeted)
    expected = +(runs["planned"] - Counter({r: n for r, n in runs["planned"].items() if r in local_rules()}))
    assert completed == expected  # every job of the DAG went through sbatch exactly once
    shards = -(-16 // SHARD_SIZE)  # the 16 test frames
    models = len(pv_models(runs["slurm"]))
    assert expected["infer"] == models * shards and expected["score"] == models * shards and shards >= 2
    submitted = re.findall(r"submitted with SLURM jobid (\d+)", runs["first"][1] + out)
    assert sorted(submitted, key=int) == sorted((job for job, _, _ in jobs), key=int)


def test_results_equal_a_local_run_byte_for_byte(runs: dict, narrow_run):
    assert runs["second"][0] == 0
    slurm, local = runs["slurm"], narrow_run.repo
    records = sorted(p.relative_to(slurm) for p in (slurm / "results").rglob("*.json") if p.name in ("submission.json", "metrics.json"))
    assert records == pv_records(slurm)
    for name in records:
        assert (slurm / name).read_bytes() == (local / name).read_bytes(), name
