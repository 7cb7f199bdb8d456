"""A correction of a phase's hidden labels (`segbench server rescore`, server/rescore.py and
server/recount.py) against real processes, on SQLite and on PostgreSQL: one label corrected, then
a frame added, then one removed, with stored submissions of two teams, one still queued when the
data changes and one made during the re-score. Each step checks what the issue asks: one mask
decoded per stored submission, counts byte for byte a full scoring's on the new data, both
datasets on the board and never ranked together, the old one at its own URL, a re-score that a
worker killed with kill -9 leaves byte for byte as an uninterrupted one, the frames added after
an upload reported as not predicted, and every bad input refused in one line."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from server_fixtures import (BACKENDS, BENCHMARK, DATA, MANIFEST, PHASE, PHASES, ROOT, Deployment, kill_while_scoring,
                             make_upload, segbench_here, split_frames, stop)

import segbench.stages.scoring as stage_scoring
from segbench.errors import SegbenchError
from segbench.io.fileio import sha256_file
from segbench.protocols.definitions import load_benchmark
from segbench.server.deployment import connect
from segbench.server.settings import Settings
from segbench.server.worker import run_worker
from segbench.steps.frames import frames_of_split
from segbench.steps.scoring import score_model

BOARD = f"/benchmarks/{BENCHMARK}/phases/{PHASE}"
# The subprocess workers' settings (server_fixtures.WORKER_OPTIONS), for the workers run in this process.
SETTINGS = Settings(lease_seconds=3, poll_seconds=0.2, resamples=50)
WRITTEN = ("status", "counts_sha256", "results", "uncertainty", "private_results", "private_uncertainty",
           "ladder_position", "released", "public_score", "public_decimals", "ladder_note", "not_predicted", "error")


class Scenario:
    def __init__(self, folder: Path, backend: str):
        self.folder = folder
        self.data = folder / "hidden"
        shutil.copytree(DATA, self.data)
        self.manifest = folder / "manifest.json"
        shutil.copyfile(MANIFEST, self.manifest)
        self.served = Deployment(folder, backend=backend, data=self.data, manifest=self.manifest)
        self.uploads: dict[str, Path] = {}
        self.ids: dict[str, str] = {}

    def upload(self, team: str, method: str, blank_rows: float, manifest: Path | None = None) -> dict:
        path = make_upload(self.folder / f"{method}.zip", blank_rows, data=self.data,
                           manifest=manifest or self.manifest)
        status, accepted = self.served.upload(team, path.read_bytes(), method=method)
        assert status == 201, accepted
        self.uploads[method], self.ids[method] = path, accepted["id"]
        return accepted

    def corrected_manifest(self, name: str) -> Path:
        out = self.folder / name
        segbench_here("manifest", "--data", str(self.data), "--out", str(out))
        return out

    def rescore(self, manifest: Path, check: bool = True):
        return segbench_here("server", "rescore", "--db", self.served.db, "--phase", PHASE, "--dataset-manifest",
                        str(manifest), check=check)

    def board(self, query: str = "") -> tuple[int, dict]:
        return self.served.api(f"{BOARD}/leaderboard{query}")

    def rows(self, dataset_id: str) -> dict[str, tuple]:
        """id -> what a worker wrote, for the submissions on `dataset_id`."""
        found = self.served.sql(f"SELECT id, {', '.join(WRITTEN)} FROM submissions WHERE dataset_id = :d",
                                d=dataset_id)
        return {row[0]: row[1:] for row in found}

    def rescore_of(self, original: str) -> str:
        (row,) = self.served.sql("SELECT id FROM submissions WHERE rescore_of = :o", o=original)
        return row[0]


def work_here(monkeypatch) -> list[str]:
    """Run a worker in this process until nothing is claimable; the frames whose masks it decoded."""
    decoded: list[str] = []
    read = stage_scoring.read_prediction

    def counted(predictions, frame, *args):
        decoded.append(frame.frame_id)
        return read(predictions, frame, *args)

    monkeypatch.setattr(stage_scoring, "read_prediction", counted)
    return decoded


def fresh_counts_sha256_of(data: Path, upload: Path, name: str, folder: Path) -> str:
    """The SHA-256 of the counts a full scoring of `upload` on `data` as it is now writes."""
    benchmark = load_benchmark(BENCHMARK)
    out = folder / f"fresh-{name}.parquet"
    score_model(benchmark, frames_of_split(benchmark, data, "test"), name, "predictions", benchmark.ground_truth,
                upload, out, "test")
    return sha256_file(out)


def fresh_counts_sha256(scenario: Scenario, upload: Path, name: str) -> str:
    return fresh_counts_sha256_of(scenario.data, upload, name, scenario.folder)


@pytest.fixture(scope="module", params=BACKENDS)
def scenario(tmp_path_factory, request):
    built = Scenario(tmp_path_factory.mktemp("rescore"), request.param)
    yield built
    built.served.close()


def test_bad_inputs_are_refused_in_one_line_and_change_nothing(scenario, tmp_path):
    unreadable = tmp_path / "unreadable.json"
    unreadable.write_text("{not json")
    cases = [
        (("--phase", "final", "--dataset-manifest", str(scenario.manifest)),
         "--phase: no phase 'final' of benchmark painting-vision (its phases: ['test'])"),
        (("--phase", PHASE, "--dataset-manifest", str(ROOT / "data-idd_manifest.json")),
         f"{ROOT / 'data-idd_manifest.json'}: field 'dataset_id' is 'idd:"),
        (("--phase", PHASE, "--dataset-manifest", str(unreadable)),
         f"{unreadable}: not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)"),
        (("--phase", PHASE, "--dataset-manifest", str(tmp_path / "absent.json")),
         f"{tmp_path / 'absent.json'}: data manifest not found"),
        (("--phase", PHASE, "--dataset-manifest", str(scenario.manifest)),
         f"{scenario.manifest}: dataset_id {split_frames(scenario.manifest)[1]} is the one phase test is on already: "
         "no label, frame or file changed, nothing to re-score"),
    ]
    before = [scenario.served.rows(t) for t in ("submissions", "superseded_datasets")]
    for args, message in cases:
        done = segbench_here("server", "rescore", "--db", scenario.served.db, *args, check=False)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"segbench: error: {message}"), done.stderr
    assert [scenario.served.rows(t) for t in ("submissions", "superseded_datasets")] == before


def test_one_label_corrected_re_scores_one_frame_per_stored_submission(scenario, monkeypatch):
    served = scenario.served
    worker = served.worker()
    for team, method, blank in (("alpha", "a1", 1 / 3), ("beta", "b1", 1 / 10), ("alpha", "a2", 1 / 5)):
        scenario.upload(team, method, blank)
        served.wait_for(team, scenario.ids[method])
    stop(worker)
    old_id = split_frames(scenario.manifest)[1]
    (old_group,) = scenario.board()[1]["groups"]
    scenario.upload("beta", "b0", 0.3)  # still queued when the data changes

    frame = split_frames(scenario.manifest)[0][0]
    label = scenario.data / frame["label"]["path"]
    corrected = np.array(Image.open(label))
    corrected[:8, :8] = 8  # a window the annotator missed
    Image.fromarray(corrected).save(label)
    new_manifest = scenario.corrected_manifest("corrected.json")
    new_id = split_frames(new_manifest)[1]
    done = scenario.rescore(new_manifest)
    assert done.stdout == (f"phase test of painting-vision: dataset {old_id} superseded by {new_id} (1 label(s) "
                           "changed, 0 frame(s) added, 0 removed); 3 submission(s) queued for re-scoring on 1 frame(s) "
                           "each; 1 not yet scored, to be scored on the new data\n")
    during = scenario.upload("alpha", "a3", 0.05, manifest=new_manifest)  # made during the re-score
    status, stale = served.upload("beta", make_upload(scenario.folder / "stale.zip", 0.2, data=DATA).read_bytes(),
                                  method="stale")  # the old split's upload: its dataset_id.txt is the old one
    assert status == 400 and "dataset" in stale["error"]

    decoded = work_here(monkeypatch)
    assert run_worker(connect(served.db, SETTINGS), once=True) == 5
    every = [f["frame_id"] for f in split_frames(new_manifest)[0]]
    # one mask per stored submission; the upload queued before the change and the one made during it, whole
    assert sorted(decoded) == sorted([frame["frame_id"]] * 3 + every * 2)

    rows = scenario.rows(new_id)
    assert len(rows) == 5 and {r[0] for r in rows.values()} == {"scored"}
    assert during["id"] in rows and scenario.ids["b0"] in rows
    for method in ("a1", "b1", "a2"):
        copy = scenario.rescore_of(scenario.ids[method])
        assert rows[copy][1] == fresh_counts_sha256(scenario, scenario.uploads[method], copy)
    for method in ("a3", "b0"):  # made during the re-score, or queued when the data changed: the new data's
        assert rows[scenario.ids[method]][1] == fresh_counts_sha256(scenario, scenario.uploads[method],
                                                                    scenario.ids[method])
    # each team's Ladder on the new data in the order the team submitted
    order = {m: rows[scenario.rescore_of(scenario.ids[m])][6] for m in ("a1", "a2", "b1")}
    assert order == {"a1": 0, "a2": 1, "b1": 0}
    assert (rows[during["id"]][6], rows[scenario.ids["b0"]][6]) == (2, 1)

    status, board = scenario.board()
    current, superseded = board["groups"]
    assert (current["dataset_id"], current["superseded_by"]) == (new_id, None)
    assert superseded == {**old_group, "superseded_by": new_id}  # as it was, marked
    assert {e["team"] for e in current["entries"]} == {"alpha", "beta", None}
    assert {e["provenance"]["dataset_id"] for e in current["entries"] if e["team"]} == {new_id}
    assert scenario.board(f"?dataset_id={old_id}") == (200, {"benchmark": BENCHMARK, "phase": PHASE,
                                                            "groups": [superseded]})
    assert scenario.board("?dataset_id=pv1:none")[0] == 404
    page = served.api("/submissions/" + scenario.rescore_of(scenario.ids["a1"]), "alpha")[1]
    assert (page["rescore_of"], page["dataset_id"], page["not_predicted"]) == (scenario.ids["a1"], new_id, None)
    with urllib.request.urlopen(f"{served.url}/boards/{BENCHMARK}/{PHASE}") as answer:
        text = answer.read().decode()
    assert f"dataset_id <code>{old_id}</code> is superseded by <code>{new_id}</code>" in text
    with urllib.request.urlopen(f"{served.url}/boards/{BENCHMARK}/{PHASE}?dataset_id={old_id}") as answer:
        alone = answer.read().decode()
    assert f"dataset_id <code>{old_id}</code>" in alone and f"dataset_id <code>{new_id}</code> ·" not in alone

    again = scenario.rescore(new_manifest, check=False)  # done once: nothing left to do
    assert again.returncode == 1 and "is the one phase test is on already" in again.stderr
    scenario.new_manifest, scenario.new_id = new_manifest, new_id


def test_a_worker_killed_during_a_re_score_leaves_the_same_result(scenario):
    served, new_id = scenario.served, scenario.new_id
    uninterrupted, board = scenario.rows(new_id), scenario.board()[1]
    # The same queued re-scores again, their counts gone from the store: made anew, byte for byte.
    for sha in {row[1] for row in uninterrupted.values()}:
        (served.store / "sha256" / sha[:2] / sha).unlink()
    served.sql("UPDATE submissions SET status = 'queued', attempts = 0, lease_owner = NULL, lease_expires = NULL, "
               + ", ".join(f"{c} = NULL" for c in WRITTEN[1:]) + " WHERE dataset_id = :d", d=new_id)
    def one_scored_one_scoring() -> bool:
        statuses = [r[0] for r in scenario.rows(new_id).values()]
        assert statuses.count("scored") < 5, "every re-score was done before one was seen in progress"
        return "scored" in statuses and "scoring" in statuses

    kill_while_scoring(served.worker(), one_scored_one_scoring)
    workers = [served.worker(), served.worker()]
    deadline = time.monotonic() + 180
    while any(r[0] != "scored" for r in scenario.rows(new_id).values()):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    for worker in workers:
        stop(worker)
    assert scenario.rows(new_id) == uninterrupted
    assert scenario.board()[1] == board
    assert max(a for (a,) in served.sql("SELECT attempts FROM submissions WHERE dataset_id = :d", d=new_id)) == 2


def test_a_frame_added_after_the_uploads_is_not_predicted_by_them(scenario, monkeypatch):
    served = scenario.served
    frames, _ = split_frames(scenario.new_manifest)
    model = frames[0]
    added = "w07_f9"
    shutil.copyfile(scenario.data / model["image"]["path"], scenario.data / "images" / f"{added}.jpg")
    shutil.copyfile(scenario.data / model["label"]["path"], scenario.data / "labels" / f"{added}.png")
    rows = (scenario.data / "frames.csv").read_text().splitlines()
    lighting = next(r for r in rows if r.startswith(f"{model['frame_id']},")).split(",", 3)[3]
    (scenario.data / "frames.csv").write_text("\n".join(rows + [f"{added},w07,test,{lighting}"]) + "\n")
    grown = scenario.corrected_manifest("grown.json")
    done = scenario.rescore(grown)
    assert "(0 label(s) changed, 1 frame(s) added, 0 removed); 5 submission(s) queued" in done.stdout
    complete = scenario.upload("beta", "b2", 0.15, manifest=grown)

    decoded = work_here(monkeypatch)
    assert run_worker(connect(served.db, SETTINGS), once=True) == 6
    every = [f["frame_id"] for f in split_frames(grown)[0]]
    assert sorted(decoded) == sorted(every)  # the old uploads have nothing to decode: no mask of the added frame
    grown_id = split_frames(grown)[1]
    rows = scenario.rows(grown_id)
    assert rows[complete["id"]][0] == "scored"
    copies = [i for i in rows if i != complete["id"]]
    message = (f"not predicted: this upload has no mask for 1 frame(s) added to the hidden split after it was made "
               f"({added}); it is not ranked on dataset {grown_id} (submit an upload of the new split)")
    for copy in copies:
        status, _, results, *_, not_predicted, error = rows[copy]
        assert (status, results, json.loads(not_predicted), error) == ("incomplete", None, [added], message)
        team = served.sql("SELECT t.name FROM submissions s JOIN teams t ON t.id = s.team_id WHERE s.id = :i",
                          i=copy)[0][0]
        view = served.api(f"/submissions/{copy}", team)[1]
        assert (view["status"], view["not_predicted"], view["error"]) == ("incomplete", [added], message)
    groups = scenario.board()[1]["groups"]
    assert [(g["dataset_id"], g["superseded_by"]) for g in groups] == [
        (grown_id, None), (scenario.new_id, grown_id), (split_frames(scenario.manifest)[1], scenario.new_id)]
    assert [e["team"] for e in groups[0]["entries"]] == ["beta", None]  # the incomplete ranked nowhere here
    scenario.grown, scenario.grown_id, scenario.added = grown, grown_id, added


def test_a_frame_removed_and_a_label_corrected_score_the_incomplete_again(scenario, monkeypatch):
    served, added = scenario.served, scenario.added
    (scenario.data / "images" / f"{added}.jpg").unlink()
    (scenario.data / "labels" / f"{added}.png").unlink()
    rows = (scenario.data / "frames.csv").read_text().splitlines()
    (scenario.data / "frames.csv").write_text("\n".join(r for r in rows if not r.startswith(f"{added},")) + "\n")
    frame = split_frames(scenario.grown)[0][-1]
    label = scenario.data / frame["label"]["path"]
    corrected = np.array(Image.open(label))
    corrected[-4:, -4:] = 255  # an uncertain corner made void
    Image.fromarray(corrected).save(label)
    shrunk = scenario.corrected_manifest("shrunk.json")
    done = scenario.rescore(shrunk)
    assert "(1 label(s) changed, 0 frame(s) added, 1 removed); 6 submission(s) queued" in done.stdout
    # corrected again before any worker ran: the pending re-scores move on, with both changes to count
    second = split_frames(shrunk)[0][1]
    label = scenario.data / second["label"]["path"]
    corrected = np.array(Image.open(label))
    corrected[:3] = 3
    Image.fromarray(corrected).save(label)
    final = scenario.corrected_manifest("final.json")
    done = scenario.rescore(final)
    assert "(1 label(s) changed, 0 frame(s) added, 0 removed); 0 submission(s) queued" in done.stdout
    assert "; 6 not yet scored, to be scored on the new data" in done.stdout

    decoded = work_here(monkeypatch)
    assert run_worker(connect(served.db, SETTINGS), once=True) == 6
    assert sorted(decoded) == sorted([frame["frame_id"], second["frame_id"]] * 6)
    shrunk_id = split_frames(final)[1]
    rows = scenario.rows(shrunk_id)
    assert {r[0] for r in rows.values()} == {"scored"}
    for copy, row in rows.items():
        (method, upload_sha) = served.sql("SELECT method, upload_sha256 FROM submissions WHERE id = :i", i=copy)[0]
        assert sha256_file(scenario.uploads[method]) == upload_sha
        assert row[1] == fresh_counts_sha256(scenario, scenario.uploads[method], copy)
    public = scenario.board()[1]["groups"]
    assert {e["team"] for e in public[0]["entries"]} == {"alpha", "beta", None}
    # the private boards, once revealed, have the same datasets, each ranked alone
    assert served.api(f"{BOARD}/private-leaderboard?dataset_id={shrunk_id}")[0] == 403
    segbench_here("server", "reveal", "--db", served.db, "--benchmark", BENCHMARK, "--phase", PHASE)
    private = served.api(f"{BOARD}/private-leaderboard")[1]["groups"]
    assert [(g["dataset_id"], g["superseded_by"], g["part"]) for g in private] == [
        (g["dataset_id"], g["superseded_by"], "private") for g in public]
    assert [e["rank"] for e in private[0]["entries"]] == [1, 2, None]


def test_the_baseline_is_re_scored_on_the_changed_frame_and_an_old_phase_is_told_what_to_give(tmp_path):
    """In this process, without a server: the baseline kept when the phase was added is re-scored,
    its counts a full scoring's; a phase added before schema 0004 (no manifest nor baseline kept)
    is told to give the baseline again, and then takes it."""
    from sqlalchemy import select, update

    from segbench.server import host
    from segbench.server.models import Phase

    data, manifest = tmp_path / "hidden", tmp_path / "manifest.json"
    shutil.copytree(DATA, data)
    shutil.copyfile(MANIFEST, manifest)
    baseline = make_upload(tmp_path / "baseline.zip", 0.25, data=data, manifest=manifest)
    phase_entry = PHASES.split("phases:\n", 1)[1]
    (tmp_path / f"{BENCHMARK}.yaml").write_text(PHASES + phase_entry.replace(f"name: {PHASE}", "name: old"))
    db = f"sqlite:///{tmp_path / 'server.db'}"
    host.init(db, str(tmp_path / "store"))
    for name in ("test", "old"):
        host.add_phase(db, BENCHMARK, name, data, manifest, baseline, phases=tmp_path / f"{BENCHMARK}.yaml")
    deployment = connect(db)
    with deployment.sessions() as session:  # as a phase added before schema 0004 is
        session.execute(update(Phase).where(Phase.name == "old").values(manifest_sha256=None,
                                                                        baseline_upload_sha256=None))
        session.commit()
    frame = split_frames(manifest)[0][2]
    label = data / frame["label"]["path"]
    corrected = np.array(Image.open(label))
    corrected[-5:] = 2
    Image.fromarray(corrected).save(label)
    new_manifest = tmp_path / "corrected.json"
    segbench_here("manifest", "--data", str(data), "--out", str(new_manifest))

    done = host.rescore(db, BENCHMARK, "test", new_manifest)
    assert (done.queued, done.moved, done.changes.changed) == (0, 0, (frame["frame_id"],))
    with deployment.sessions() as session:
        phase = session.scalar(select(Phase).where(Phase.name == "test"))
    assert phase.dataset_id == split_frames(new_manifest)[1] and phase.baseline_upload_sha256 == sha256_file(baseline)
    assert phase.baseline_counts_sha256 == fresh_counts_sha256_of(data, baseline, "baseline", tmp_path)

    with pytest.raises(SegbenchError, match="phase old of painting-vision: its baseline upload was not kept \\(the "
                                            "phase was added before schema 0004\\): give it again with --baseline"):
        host.rescore(db, BENCHMARK, "old", new_manifest)
    manifest.write_text(new_manifest.read_text())  # the file it was added with, overwritten
    with pytest.raises(SegbenchError, match=f"{manifest}: the phase's manifest now says dataset "
                                            f"{split_frames(new_manifest)[1]}, but the phase is on "):
        host.rescore(db, BENCHMARK, "old", new_manifest, baseline)
    shutil.copyfile(MANIFEST, manifest)
    fresh = make_upload(tmp_path / "fresh.zip", 0.5, data=data, manifest=new_manifest)
    assert host.rescore(db, BENCHMARK, "old", new_manifest, fresh).new_dataset_id == split_frames(new_manifest)[1]
    with deployment.sessions() as session:
        old = session.scalar(select(Phase).where(Phase.name == "old"))
    assert old.baseline_counts_sha256 == fresh_counts_sha256_of(data, fresh, "baseline", tmp_path)
