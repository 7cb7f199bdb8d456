"""Fixtures shared by the test modules: a dataset of each format on disk, the one run of the
embedded default and the one run of the narrow configuration; the tiers' markers."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from ep_fixtures import CLEAN, make_ep
from idd_fixtures import make_idd
from pv_fixtures import clean_frames, make_dataset

# The suite runs two pytest processes on two cores, each starting torch processes (the workflow's
# inference jobs, the models' tests) beside the other's: OpenMP threads that spin while they wait
# for work burn the CPU the other process needs. Passive waiting changes no result. Set here, so
# every process the tests start inherits it (read when torch loads its OpenMP runtime).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture
def pv_data(tmp_path: Path) -> Path:
    """A valid Painting Vision dataset (tmp_path/data): two walls per split, every class in every split."""
    return make_dataset(tmp_path, clean_frames())


@pytest.fixture
def idd_data(tmp_path: Path) -> Path:
    """An IDD folder (tmp_path/idd) of five hand-made frames on four drives, its masks drawn."""
    return make_idd(tmp_path)


@pytest.fixture
def ep_data(tmp_path: Path) -> Path:
    """An EasyPortrait 1.0 download (tmp_path/ep) of five frames: four users, each in one split."""
    return make_ep(tmp_path, CLEAN)


@pytest.fixture(scope="module")
def pv10():
    """The ten-class Painting Vision label space, which the small test models predict."""
    from segbench.protocols.definitions import load_label_space

    return load_label_space("painting-vision-10")


@pytest.fixture(scope="module")
def model_files(tmp_path_factory, pv10) -> Path:
    """tiny.pt and tiny.ts: one small random-weight net as a checkpoint and as TorchScript (model_fixtures)."""
    from model_fixtures import write_model_files

    return write_model_files(tmp_path_factory.mktemp("models"), pv10)


@pytest.fixture(scope="session")
def synthetic_idd(tmp_path_factory) -> Path:
    """The embedded default's synthetic IDD20K dataset (segbench.synthetic.idd), built once; read only."""
    from segbench.synthetic import idd

    out = tmp_path_factory.mktemp("idd") / "data"
    idd.build_dataset(out)
    return out


@pytest.fixture(scope="session")
def synthetic_ep(tmp_path_factory) -> Path:
    """The embedded default's synthetic EasyPortrait dataset (segbench.synthetic.easyportrait), built once; read only."""
    from segbench.synthetic import easyportrait

    out = tmp_path_factory.mktemp("ep") / "data"
    easyportrait.build_dataset(out)
    return out


@dataclass(frozen=True)
class WorkflowRun:
    """A copy of the repository after one run of the workflow, and a snapshot of what that run
    produced (the results table, metrics.json and every submission record), taken when it ended.
    Read only: a test that changes something works on a copy of its own (`copy_to`)."""

    repo: Path
    snapshot: Path

    def outputs(self) -> list[Path]:
        """The snapshot's files, relative to it."""
        return sorted(p.relative_to(self.snapshot) for p in self.snapshot.rglob("*") if p.is_file())

    def copy_to(self, target: Path) -> Path:
        """A copy of the run's repository at `target`, its files' times kept (a moved checkout:
        the workflow plans nothing there)."""
        shutil.copytree(self.repo, target, symlinks=True)
        return target


def shared_folder(tmp_path_factory) -> Path:
    """The folder every pytest process of this session shares: the base temporary folder, or,
    under pytest-xdist (`-n`), the one its workers' folders are made in."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name` of the session's shared folder, made by `make(folder)` once per session:
    under pytest-xdist the first worker to ask makes it, holding a lock, and the others wait for it
    and read the same folder; a failure is recorded and given to every one that asks."""
    shared = shared_folder(tmp_path_factory)
    folder, outcome = shared / name, shared / f"{name}.outcome"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, or its process dies
        if not outcome.exists():
            try:
                shutil.rmtree(folder, ignore_errors=True)  # what a killed worker left
                folder.mkdir()
                make(folder)
            except BaseException as error:
                outcome.write_text(f"the shared {name!r} failed:\n{error}")
                raise
            outcome.write_text("")
    if outcome.read_text():
        pytest.fail(outcome.read_text(), pytrace=False)
    return folder


def workflow_run(tmp_path_factory, name: str, config: Path | None = None) -> WorkflowRun:
    """A fresh copy of the repository (`config` as its config/config.yaml, when given) after
    `snakemake --cores 2` (the default target, plots included), and its snapshot; made once per
    session (made_once)."""
    folder = made_once(tmp_path_factory, name, lambda folder: build_run(folder / "repo", folder / "snapshot", config))
    return WorkflowRun(folder / "repo", folder / "snapshot")


def build_run(repo: Path, snapshot: Path, config: Path | None) -> None:
    """The run of workflow_run at `repo`, its snapshot at `snapshot`."""
    from workflow_helpers import run, tracked_copy, use_config

    repo.mkdir()
    tracked_copy(repo)
    if config is not None:
        use_config(repo, config)
    assert not (repo / "data").exists()  # restored by the workflow's pull rule, from the in-repo remote
    run(repo, "snakemake", "--cores", "2")
    results = repo / "results"
    kept = [p for p in results.glob("leaderboard.*")] + list(results.rglob("submission.json")) + [repo / "metrics.json"]
    for path in kept:
        target = snapshot / path.relative_to(repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


@pytest.fixture(scope="session")
def embedded_run(tmp_path_factory) -> WorkflowRun:
    """The one local run of the whole embedded default, which the end-to-end modules read."""
    return workflow_run(tmp_path_factory, "embedded")


@pytest.fixture(scope="session")
def narrow_run(tmp_path_factory) -> WorkflowRun:
    """The one local run of the narrow configuration (tests/configs/pv-two-models.yaml): what
    the scenarios that change something start from (each on a copy), and what the S3 and fault
    runs of that configuration must reproduce byte for byte (the SLURM run: its model `best`'s
    records and the floor's)."""
    from workflow_helpers import NARROW_CONFIG

    return workflow_run(tmp_path_factory, "narrow", NARROW_CONFIG)


@dataclass(frozen=True)
class OneShotRun:
    """The one-shot command's run: its folder (the records, submission*.json, and `work/`) and what
    it printed."""

    folder: Path
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def oneshot_run(tmp_path_factory) -> OneShotRun:
    """The specification's one-shot command on the embedded default (oneshot_helpers.SPEC_ARGS), run
    once per session (made_once): test_oneshot.py reads it (and runs it again, to compare), and
    test_workflow.py compares the workflow's records with its records. Read only."""
    from oneshot_helpers import SPEC_ARGS, oneshot

    def make(folder: Path) -> None:
        done = oneshot(*SPEC_ARGS, "--emit-submission", str(folder / "submission.json"), "--work-dir", str(folder / "work"))
        assert done.returncode == 0, done.stderr[-3000:]
        (folder / "stdout.txt").write_text(done.stdout)
        (folder / "stderr.txt").write_text(done.stderr)

    folder = made_once(tmp_path_factory, "oneshot", make)
    return OneShotRun(folder, (folder / "stdout.txt").read_text(), (folder / "stderr.txt").read_text())


@pytest.fixture(scope="session")
def slurm_sequence_folder(tmp_path_factory) -> Path:
    """Where the session's SLURM sequence (tests/slurm_sequence.py) runs and leaves its outcome."""
    return shared_folder(tmp_path_factory) / "slurm"


@pytest.fixture(scope="session", autouse=True)
def slurm_sequence_started(request, slurm_sequence_folder) -> None:
    """The SLURM sequence started at the session's first test when test_slurm.py is selected and the
    cluster can be used, so that its runs wait on the cluster while the other tests run (that
    module, sent last, reads the outcome)."""
    from slurm_sequence import cluster_problem, start

    if any(item.get_closest_marker("cluster") for item in request.session.items) and cluster_problem() is None:
        start(slurm_sequence_folder)


SHARED_RUNS = ("embedded_run", "narrow_run")  # the session's workflow runs, in the order they are looked for


def pytest_collection_modifyitems(items) -> None:
    """The tiers (docs/testing.md): a test that reads a workflow run (or whose module is marked
    `workflow`) is `workflow`, every other one `unit`; `cluster` (a real SLURM cluster) is marked
    by its module and is a workflow test too. The modules that run or read a workflow run come
    first (whole, in run_order): they take longest, and pytest-xdist sends them out first."""
    for item in items:
        reads_a_run = set(SHARED_RUNS) & set(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("workflow") is None and (reads_a_run or item.get_closest_marker("cluster")):
            item.add_marker(pytest.mark.workflow)
        if item.get_closest_marker("workflow") is None:
            item.add_marker(pytest.mark.unit)
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(module_of(item.nodeid), []).append(item)
    items[:] = [item for members in run_order(list(modules.values())) for item in members]


def run_order(modules: list[list]) -> list[list]:
    """The modules in the order they are sent to the workers, the workflow modules first since they
    take longest: alternating between those that first wait for the embedded run and those that
    first wait for the narrow run while both sides have some, so that the two workers build the two
    shared runs side by side (a worker is sent its next module while its current one's last test
    waits: each gets two modules at the start); then the narrow run's others, and the workflow
    modules that need neither run, which the narrow run's worker, done first, takes while the
    embedded run may still be under way; then the embedded run's others and the rest; the cluster's last, since its runs go on in a
    process of their own meanwhile (slurm_sequence_started) and it reads what they did."""
    def first_run(members) -> str | None:
        return next((run for i in members for run in SHARED_RUNS if run in i.fixturenames), None)

    def workflow(members) -> bool:
        return any(i.get_closest_marker("workflow") for i in members)

    def cluster(members) -> bool:
        return any(i.get_closest_marker("cluster") for i in members)

    last = [m for m in modules if cluster(m)]
    modules = [m for m in modules if not cluster(m)]
    embedded = [m for m in modules if workflow(m) and first_run(m) == "embedded_run"]
    narrow = [m for m in modules if workflow(m) and first_run(m) == "narrow_run"]
    sides = min(len(embedded), len(narrow))
    alternating = [m for pair in zip(embedded[:sides], narrow[:sides]) for m in pair]
    no_run = [m for m in modules if workflow(m) and first_run(m) is None]
    rest = [m for m in modules if not workflow(m)]
    return alternating + narrow[sides:] + no_run + embedded[sides:] + rest + last


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (`make test`: `-n 2`): a module runs whole, in order, in one worker (its
    module fixtures made once; test_workflow.py's tests go on changing one copy), and every module
    with a PostgreSQL test in one worker: they share the test cluster, which one of them
    restarts. Modules are sent in collection order (the workflow modules first)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if not hasattr(self, "postgresql_modules"):
                self.postgresql_modules = {module_of(n) for n in self.collection if "postgresql" in n}
            module = module_of(nodeid)
            return "postgresql" if module in self.postgresql_modules else module

    config.option.loadscopereorder = False
    return ModuleScheduling(config, log)
