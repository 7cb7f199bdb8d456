"""Without a shared filesystem: the workflow against S3 (a local server, moto), every job seeing
only its staged inputs.

The inputs no rule produces are staged into a bucket first, as docs/cluster.md says: the tracked
files the rules read (STAGED: config, .dvc pins, manifests; code is a parameter), then the DVC-pinned
data and models restored by `dvc pull`. The working copy the runs start from holds none of the
data or models, so a job that read them by a path of the repository instead of its inputs' local
copies would fail.

1. The Kubernetes profile (executor kubernetes, default storage provider s3), as committed but
   for the S3 endpoint and the storage prefix: a dry run (it does not start the executor, so it
   needs no cluster; no kube config exists for it) plans the identity jobs with every input,
   output and log an object under the prefix.
   The whole embedded default is staged and planned, so every benchmark's inputs are shown in
   storage.
2. The same storage with the local executor, under a prefix of its own staged the same way for
   the narrow configuration (tests/configs/pv-two-models.yaml) with its model `best` alone
   (workflow_helpers.narrow_copy_for_a_mechanism, as the SLURM and fault runs: the storage treats
   every model's files alike): its results table's target runs, each job reading the local
   copies the storage plugin makes of its inputs and sending its outputs back. The model's records
   and the floor's, fetched from the bucket, are byte for byte those of the normal local run of the
   narrow configuration (conftest.narrow_run).

Credentials are dummies in the storage plugin's own variables (SNAKEMAKE_STORAGE_S3_ACCESS_KEY /
_SECRET_KEY, the ones snakemake also hands to pods), and no AWS_* variable or ~/.aws file. What no
test here exercises (pods, the Kubernetes API, image pulls) is listed in docs/cluster.md.
"""

from __future__ import annotations

import logging
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from workflow_helpers import (MECHANISM_MODELS, ROOT, copy_env, executed_jobs, narrow_copy_for_a_mechanism, pv_records,
                              run, tracked_copy)

pytestmark = pytest.mark.workflow

PROFILE = "workflow/profiles/kubernetes"
BUCKET = "segbench-test"
PREFIX = f"s3://{BUCKET}/run"  # the dry run's; the local executor's run has NARROW_PREFIX
NARROW_PREFIX = f"s3://{BUCKET}/narrow"
KEY, SECRET = "segbench-test-key", "segbench-test-secret"
# Where the storage plugin keeps a job's local copy of PREFIX/<path> (inside a pod: its workdir).
LOCAL_COPY = f".snakemake/storage/s3/{BUCKET}/run"
# The tracked files the rules read (git pathspecs); a new input elsewhere fails the dry run with
# a MissingInputException naming it: add it here and to docs/cluster.md.
STAGED = ("config", "*.dvc", "*_manifest.json")
# One file of a job listing: an object under the prefix, to fetch before or to send after the job.
STORAGE_ITEM = re.compile(rf"{re.escape(PREFIX)}/\S+ \((retrieve from|send to) storage\)")


@pytest.fixture(scope="module")
def s3():
    """(endpoint URL, boto3 client) of a local S3 server holding an empty bucket BUCKET."""
    server = None
    try:
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=KEY, aws_secret_access_key=SECRET)
        client.create_bucket(Bucket=BUCKET)
    except Exception as error:  # noqa: BLE001 -- any failure to start is the same finding
        if server is not None:
            server.stop()
        pytest.fail(f"cannot start the local S3 server (moto[server], pinned in envs/requirements.lock: "
                    f"`pip install -r envs/requirements.lock`): {error!r}", pytrace=False)
    yield endpoint, client
    server.stop()



def key(prefix: str, name: str) -> str:
    """The bucket's key of `name` (relative to the repository) under `prefix`."""
    return f"{prefix.removeprefix(f's3://{BUCKET}/')}/{name}"


def stage(client, prefix: str, repo: Path, names, source: Path | None = None) -> None:
    """Upload the files `names` (relative; read from `source`, default `repo`) to <prefix>/<name>,
    as `aws s3 sync` would."""
    for name in names:
        client.upload_file(str((source or repo) / name), BUCKET, key(prefix, name))


def storage_env(repo: Path, home: Path, executor: str | None) -> dict[str, str]:
    env = {k: v for k, v in copy_env(repo, executor).items() if not k.startswith(("AWS_", "SNAKEMAKE_STORAGE_", "KUBERNETES_"))}
    env.update(HOME=str(home), KUBECONFIG=str(home / "no-kube-config"),
               AWS_CONFIG_FILE=str(home / "no-aws-config"), AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"),
               AWS_EC2_METADATA_DISABLED="true",
               SNAKEMAKE_STORAGE_S3_ACCESS_KEY=KEY, SNAKEMAKE_STORAGE_S3_SECRET_KEY=SECRET)
    return env


def snakemake(repo: Path, endpoint: str, home: Path, *args: str, prefix: str = PREFIX, executor: str | None = None,
              timeout: int = 300) -> subprocess.CompletedProcess:
    command = ["snakemake", "--storage-s3-endpoint-url", endpoint, "--default-storage-prefix", prefix, *args]
    env = storage_env(repo, home, executor)
    return subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=timeout)


def passed(done: subprocess.CompletedProcess) -> str:
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{shlex.join(done.args)} failed ({done.returncode}):\n{out[-6000:]}"
    return out


def listed_files(out: str) -> dict[str, list[str]]:
    """"input" / "output" / "log" -> every file the dry run lists for its jobs."""
    files = {"input": [], "output": [], "log": []}
    for kind, items in re.findall(r"^    (input|output|log): (.*)$", out, re.M):
        files[kind] += items.split(", ")
    return files


def staged_copy(client, prefix: str, repo: Path, source: Path) -> Path:
    """Stage `repo` (a working copy without data or models) under `prefix`: the tracked files the
    rules read, and the pinned data and models of its config (from `source`, a local run's
    restored copy)."""
    stage(client, prefix, repo, run(repo, "git", "ls-files", "--", *STAGED).stdout.split())
    config = yaml.safe_load((repo / "config" / "config.yaml").read_text())
    pinned = [b["data"] for b in config["benchmarks"].values()] + [m["path"] for m in config["models"].values()]
    files = [p.relative_to(source).as_posix() for name in pinned
             for p in ([source / name] if (source / name).is_file() else sorted((source / name).rglob("*"))) if p.is_file()]
    stage(client, prefix, repo, files, source)
    assert not any((repo / name).exists() for name in pinned)  # nothing for a job to read but its inputs
    return repo


@pytest.fixture(scope="module")
def staged(s3, embedded_run, tmp_path_factory) -> Path:
    """The whole embedded default staged under PREFIX (for the dry run)."""
    return staged_copy(s3[1], PREFIX, tracked_copy(tmp_path_factory.mktemp("staged")), embedded_run.repo)


@pytest.fixture(scope="module")
def staged_narrow(s3, narrow_run, tmp_path_factory) -> Path:
    """The narrow configuration, its model `best` alone, staged under NARROW_PREFIX (for the local executor's run)."""
    repo = narrow_copy_for_a_mechanism(tmp_path_factory.mktemp("staged-narrow"))
    return staged_copy(s3[1], NARROW_PREFIX, repo, narrow_run.repo)


@pytest.fixture(scope="module")
def kubernetes_dry_run(s3, staged: Path, tmp_path_factory) -> str:
    endpoint, _ = s3
    return passed(snakemake(staged, endpoint, tmp_path_factory.mktemp("home"), "-n", "-p", "--profile", PROFILE,
                            executor="kubernetes"))


@pytest.fixture(scope="module")
def staged_run(s3, staged_narrow: Path, tmp_path_factory) -> tuple[str, Path]:
    """(output, folder of the results fetched from the bucket) of the local executor's run."""
    endpoint, client = s3
    out = passed(snakemake(staged_narrow, endpoint, tmp_path_factory.mktemp("home"), "--cores", "2", "leaderboard",
                           "--default-storage-provider", "s3", prefix=NARROW_PREFIX, timeout=1500))
    fetched = tmp_path_factory.mktemp("fetched")
    results = key(NARROW_PREFIX, "results/")
    for item in client.list_objects_v2(Bucket=BUCKET, Prefix=results, MaxKeys=10000).get("Contents", []):
        target = fetched / "results" / item["Key"].removeprefix(results)
        target.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(BUCKET, item["Key"], str(target))
    client.download_file(BUCKET, key(NARROW_PREFIX, "metrics.json"), str(fetched / "metrics.json"))
    return out, fetched


def test_profile_names_the_executor_and_the_storage_it_needs():
    profile = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "kubernetes"
    assert profile["default-storage-provider"] == "s3"
    assert profile["default-storage-prefix"].startswith("s3://")
    pins = {"snakemake-executor-plugin-kubernetes": "cluster-plugins.lock",
            "snakemake-storage-plugin-s3": "requirements.lock", "moto": "requirements.lock"}
    for package, lock in pins.items():
        text = (ROOT / "envs" / lock).read_text()
        assert re.search(rf"^{package}==", text, re.M), f"{package} is not pinned in envs/{lock}"


def test_kubernetes_dry_run_has_every_file_in_storage(kubernetes_dry_run: str, staged: Path):
    out = kubernetes_dry_run
    jobs = {rule: int(n) for rule, n in
            re.findall(r"^(\w+) +(\d+)$", out.split("Job stats:", 1)[1].split("total", 1)[0], re.M)}
    benchmarks = yaml.safe_load((staged / "config" / "config.yaml").read_text())["benchmarks"]
    identities = sum(len(b["models"]) for b in benchmarks.values())  # one per (benchmark, model)
    assert {"dataset_identity": 3, "audit": 3, "checkpoint_identity": identities}.items() <= jobs.items(), jobs
    assert "pull_pinned" not in jobs  # staged inputs are in storage already; no job restores them
    files = listed_files(out)
    assert files["input"] and files["output"] and files["log"]
    for kind, items in files.items():
        # Inputs computed from a checkpoint's output are printed <TBD> until it has run.
        unknown = [f for f in items if not STORAGE_ITEM.fullmatch(f) and not (kind == "input" and f == "<TBD>")]
        assert not unknown, f"{kind} files outside {PREFIX}: {unknown[:5]}"
    assert all(f.endswith("(send to storage)") for f in files["output"] + files["log"])
    assert any(re.fullmatch(rf"{re.escape(PREFIX)}/data/images/\S+ \(retrieve from storage\)", f) for f in files["input"])
    for folder in ("segformer-ade", "deeplab-pv"):  # Hugging Face models' folders (the run below has the checkpoint alone)
        assert any(re.fullmatch(rf"{re.escape(PREFIX)}/artifacts/{folder}(/\S+)? \(retrieve from storage\)", f)
                   for f in files["input"]), folder
    # Commands read their local copies and write the local copy that snakemake then sends to storage.
    assert f"--data {LOCAL_COPY}/data " in out and f"--out {LOCAL_COPY}/results/" in out


def test_gpu_requests_name_the_manufacturer():
    # snakemake-executor-plugin-kubernetes 0.5.1 raises "GPU requested but no manufacturer set"
    # for any job with a `gpu` resource (even 0) that has no `gpu_manufacturer`.
    profile = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())
    assert profile["set-resources"]["infer"]["gpu_manufacturer"] == "nvidia"
    assert "gpu" not in profile.get("default-resources", {})


def test_every_job_reads_only_its_staged_inputs_and_the_results_are_the_local_ones(staged_run, staged_narrow, narrow_run):
    out, fetched = staged_run
    jobs = executed_jobs(out)
    assert jobs["infer"] > 0 and jobs["score"] > 0, jobs
    assert jobs["submission"] == len(MECHANISM_MODELS), jobs
    assert "pull_pinned" not in jobs
    assert (fetched / "results" / "leaderboard.csv").is_file() and (fetched / "metrics.json").is_file()
    for name in pv_records(staged_narrow):
        assert (fetched / name).read_bytes() == (narrow_run.repo / name).read_bytes(), name
