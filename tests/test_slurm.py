"""The workflow on a real SLURM cluster, through snakemake-executor-plugin-slurm.

Needs a running cluster with accounting (`tools/slurm-cluster up`: single node on 127.0.0.1,
slurmdbd, partition `debug`, account `lab`). Without one the module is skipped, except under
CI=true, where it fails: CI (`.ci/run`) brings the cluster up, so a missing one is a CI fault.

One fresh copy with the narrow configuration (tests/configs/pv-two-models.yaml) runs its results
table (target `leaderboard`) with `--profile workflow/profiles/slurm-ci`, inference sharded into
several jobs per model. While it runs, one inference job is killed inside its SLURM job (its
`segbench infer` process gets SIGKILL), so the job FAILS the way a crashed job does; the run must
fail naming the rule and the job's SLURM log. The re-run completes. sacct must then show every job
of the DAG exactly once as COMPLETED (nothing that had succeeded is redone) plus the one FAILED
job, all submitted from that copy. The local side is the shared local run of the same
configuration (conftest.narrow_run): the results table, metrics.json, every metrics and submission
record are byte-identical.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from workflow_helpers import (NARROW_CONFIG, copy_env, local_rules, planned_job_table, pv_models, run, tracked_copy,
                              use_config)

pytestmark = [pytest.mark.workflow, pytest.mark.cluster]

PROFILE = "workflow/profiles/slurm-ci"
# Painting Vision's 16 test frames in shards of the narrow configuration's shard_size (8): 2
# inference (and scoring) jobs per model. (A shard size of its own would make the local side a
# run of its own too: the shared narrow run is the comparison.)
SHARD_SIZE = yaml.safe_load(NARROW_CONFIG.read_text())["shard_size"]
# The results table (results/leaderboard.*, metrics.json) and everything it depends on: every
# submission record, inference, scoring. The optional plots of the default target are left out
# to keep the module's SLURM job count (and CI time) bounded.
TARGET = ["leaderboard"]


def cluster_problem() -> str | None:
    """Why the SLURM cluster cannot be used, or None when it can."""
    for tool in ("sbatch", "sinfo", "sacct", "sacctmgr"):
        if not any((Path(d) / tool).is_file() for d in os.environ.get("PATH", "").split(os.pathsep)):
            return f"{tool} not on PATH (start a cluster: tools/slurm-cluster up)"
    try:
        states = subprocess.run(["sinfo", "-h", "-p", "debug", "-o", "%t"], capture_output=True, text=True, timeout=20)
        accounting = subprocess.run(["sacct", "-n", "-X", "-S", "now-1minutes"], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "sinfo/sacct time out: slurmctld or slurmdbd not responding (tools/slurm-cluster status)"
    if states.returncode != 0:
        return f"sinfo fails: {(states.stderr or states.stdout).strip()} (tools/slurm-cluster up)"
    if not re.search(r"^(idle|mix|alloc)", states.stdout, re.M):
        return f"no usable node in partition debug (sinfo: {states.stdout.strip() or 'nothing'})"
    if accounting.returncode != 0:
        return f"sacct fails (no slurmdbd accounting): {accounting.stderr.strip()}"
    return None


@pytest.fixture(scope="module", autouse=True)
def cluster() -> None:
    problem = cluster_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but no SLURM cluster: {problem}", pytrace=False)
    pytest.skip(f"no SLURM cluster: {problem}")


def snakemake(repo: Path, *args: str) -> subprocess.Popen:
    env = copy_env(repo, executor="slurm")
    return subprocess.Popen(["snakemake", *TARGET, *args], cwd=repo, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    """The output of `proc` once it has exited; stopped (SIGTERM, then SIGKILL) after `timeout` s."""
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            out = proc.communicate(timeout=30)[0]
        except subprocess.TimeoutExpired:
            proc.kill()
            out = proc.communicate()[0]
        raise AssertionError(f"{' '.join(proc.args)} did not finish in {timeout:.0f}s:\n{out[-5000:]}")


def planned_jobs(repo: Path) -> Counter:
    return Counter(planned_job_table(run(repo, "snakemake", *TARGET, "-n", "--quiet", "rules").stdout))


def kill_one_inference(repo: Path, done: threading.Event, killed: list[str]) -> None:
    """SIGKILL the first `segbench infer` process that runs in `repo` (inside a SLURM job)."""
    while not done.is_set():
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                cwd = os.readlink(proc / "cwd")
            except OSError:
                continue
            words = [a.decode(errors="replace") for a in argv]
            command = [i for i, w in enumerate(words[:3]) if w.endswith("/segbench") or w == "segbench"]
            if cwd == str(repo) and command and words[command[0] + 1 : command[0] + 2] == ["infer"]:
                os.kill(int(proc.name), signal.SIGKILL)
                killed.append(" ".join(words))
                return
        time.sleep(0.1)


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
def runs(tmp_path_factory, request) -> dict:
    slurm = use_config(tracked_copy(tmp_path_factory.mktemp("slurm")), NARROW_CONFIG)
    planned = planned_jobs(slurm)
    since = (datetime.now() - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S")
    t0 = time.monotonic()
    first = snakemake(slurm, "--profile", PROFILE)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=kill_one_inference, args=(slurm, done, killed), daemon=True)
    killer.start()
    # The local run to compare with is made (or waited for) while the SLURM run waits on its polls
    # of sacct, which leave a core idle most of the time.
    try:
        request.getfixturevalue("narrow_run")
    except BaseException:
        with contextlib.suppress(AssertionError):  # stopped (snakemake cancels its jobs); the local run's error is raised
            finish(first, timeout=0)
        raise
    first_out = finish(first)
    done.set()
    t_first = time.monotonic() - t0

    t1 = time.monotonic()
    second = snakemake(slurm, "--profile", PROFILE)
    second_out = finish(second)
    t_second = time.monotonic() - t1
    time.sleep(2)  # let slurmdbd record the last job's end
    print(f"\nSLURM run with one killed job {t_first:.0f}s, re-run {t_second:.0f}s")
    return dict(slurm=slurm, planned=planned, since=since, killed=killed,
                first=(first.returncode, first_out), second=(second.returncode, second_out))


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
    assert len([r for r in records if r.name == "submission.json"]) == len(pv_models(slurm))
    names = [Path("results") / f"leaderboard.{ext}" for ext in ("csv", "md", "json")] + [Path("metrics.json")] + records
    assert records == sorted(p.relative_to(local) for p in (local / "results").rglob("*.json") if p.name in ("submission.json", "metrics.json"))
    for name in names:
        assert (slurm / name).read_bytes() == (local / name).read_bytes(), name
