"""The SLURM run of tests/test_slurm.py, in a process of its own that the session starts at its first
test (conftest.slurm_sequence_started) when that module is selected, and whose outcome the module
reads at the end.

Most of the run's time is spent waiting: the executor plugin polls `sacct` 2 s after a submission
and then 10 s later after every poll that finds no job finished (hard-coded in the plugin), while
each job takes a few seconds. In a pytest worker that wait held a core idle for two minutes; in its
own process, the other tests use the core meanwhile.

The sequence: one fresh copy with the narrow configuration (tests/configs/pv-two-models.yaml)
narrowed to its model `best` (workflow_helpers.narrow_copy_for_a_mechanism) runs its results table (target `leaderboard`) with
`--profile workflow/profiles/slurm-ci`. While it
runs, the first `segbench infer` process of that copy (inside its SLURM job) gets SIGKILL, so the
job FAILS the way a crashed job does; then the same command runs again. The outcome (both runs'
exit codes and output, the plan, the killed command, when it started) goes to `outcome.json` in
the sequence's folder, written whole once the sequence has ended. The process stops its run and
itself when the pytest session that started it is gone.

    python tests/slurm_sequence.py FOLDER SESSION_PID
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workflow_helpers import copy_env, narrow_copy_for_a_mechanism, planned_job_table, run  # noqa: E402

PROFILE = "workflow/profiles/slurm-ci"
# The results table (results/leaderboard.*, metrics.json) and everything it depends on: every
# submission record, inference, scoring. The optional plots of the default target are left out
# to keep the SLURM job count (and CI time) bounded.
TARGET = ["leaderboard"]
RUN_TIMEOUT = 900  # s, each of the two runs; the cluster's jobs share the machine with the other tests
OUTCOME = "outcome.json"


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


def start(folder: Path) -> None:
    """Start the sequence in `folder` unless a process of this session already has (the first to
    ask starts it; the others, and later asks, find it started). Called in a pytest process: the
    session is pytest-xdist's controller, the parent of its workers, or that process itself."""
    session_pid = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "pid").exists():
            return
        with open(folder / "sequence.log", "w") as log:
            proc = subprocess.Popen([sys.executable, __file__, str(folder), str(session_pid)], stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        (folder / "pid").write_text(str(proc.pid))


def outcome(folder: Path, timeout: float) -> dict:
    """The sequence's outcome, once it has ended (it must have been started)."""
    pid = int((folder / "pid").read_text())
    deadline = time.monotonic() + timeout
    while not (folder / OUTCOME).exists():
        if not alive(pid) or time.monotonic() > deadline:
            log = (folder / "sequence.log").read_text()[-5000:]
            raise AssertionError(f"the SLURM sequence {'ended without an outcome' if not alive(pid) else 'is still running'}"
                                 f" after {timeout:.0f}s:\n{log}")
        time.sleep(1)
    return json.loads((folder / OUTCOME).read_text())


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a child that has exited but not been waited for does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def snakemake(repo: Path, *args: str) -> subprocess.Popen:
    env = copy_env(repo, executor="slurm")
    return subprocess.Popen(["snakemake", *TARGET, *args], cwd=repo, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(proc: subprocess.Popen, timeout: float = RUN_TIMEOUT) -> str:
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


def kill_one_inference(repo: Path, done: threading.Event, killed: list[str]) -> None:
    """SIGKILL the first `segbench infer` process that runs in `repo` (inside a SLURM job)."""
    while not done.is_set():
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
                if b"infer" not in argv[:4]:
                    continue
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


def stop_with_session(session_pid: int, running: list[subprocess.Popen]) -> None:
    """When the session is gone, stop the run in progress (snakemake cancels its SLURM jobs) and exit."""
    while alive(session_pid):
        time.sleep(1)
    for proc in running:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    os._exit(1)


def sequence(folder: Path, running: list[subprocess.Popen]) -> dict:
    # One model: every SLURM job costs two Snakemake starts besides its command (the plugin's batch
    # step and its srun'd job step, about 3.5 s of CPU together), and the SegFormer baseline's jobs
    # would add seven such jobs and its inference; the model's kind is nothing SLURM sees.
    slurm = narrow_copy_for_a_mechanism(folder / "repo")
    planned = planned_job_table(run(slurm, "snakemake", *TARGET, "-n", "--quiet", "rules").stdout)
    since = (datetime.now() - timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S")
    t0 = time.monotonic()
    first = snakemake(slurm, "--profile", PROFILE)
    running.append(first)
    done, killed = threading.Event(), []
    killer = threading.Thread(target=kill_one_inference, args=(slurm, done, killed), daemon=True)
    killer.start()
    first_out = finish(first)
    done.set()
    t_first = time.monotonic() - t0
    t1 = time.monotonic()
    second = snakemake(slurm, "--profile", PROFILE)
    running.append(second)
    second_out = finish(second)
    t_second = time.monotonic() - t1
    time.sleep(2)  # let slurmdbd record the last job's end
    return dict(slurm=str(slurm), planned=planned, since=since, killed=killed,
                timing=f"SLURM run with one killed job {t_first:.0f}s, re-run {t_second:.0f}s",
                first=[first.returncode, first_out], second=[second.returncode, second_out])


def main(folder: Path, session_pid: int) -> None:
    running: list[subprocess.Popen] = []
    threading.Thread(target=stop_with_session, args=(session_pid, running), daemon=True).start()
    try:
        result = sequence(folder, running)
    except BaseException:
        result = dict(error=traceback.format_exc())
    partial = folder / f"{OUTCOME}.partial"
    partial.write_text(json.dumps(result))
    partial.rename(folder / OUTCOME)  # whole or not at all


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
