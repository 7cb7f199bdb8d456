"""The public and private boards of the hosted evaluation end to end (issue 23), against real
processes (one deployment for the module, server_fixtures): the keyed division of the server's
phase, the Ladder through the API replayed from the stored counts, the team's selection raced by
20 requests, the reveal gate on every route before and after `segbench server reveal`, and a
phase with show_scores false. The tests run in order on the module's deployment."""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from server_fixtures import (BENCHMARK, DATA, MANIFEST, PHASE, PHASES, SPLIT, Deployment, environment, in_process,
                             make_upload, segbench_here, split_frames)
from test_server import page_csrf, signed_in_browser

from segbench.core.headline import headline_data
from segbench.core.ladder import replay
from segbench.protocols.definitions import load_benchmark
from segbench.records.countsio import read_counts
from segbench.server import api, browser
from segbench.server.pages import BOARD_NOTES
from segbench.server.parts import PRIVATE, PUBLIC
from segbench.server.store import FolderStore
from segbench.stages.results_page import INTERVALS, SLICES
from segbench.synthetic.painting_vision import build_dataset

BLIND, WIDE = "blind", "wide"
MORE_PHASES = f"""  - name: {BLIND}
    split: {SPLIT}
    quota_total: 100
    selection: 1
    show_scores: false
    private_fraction: 0.5
  - name: {WIDE}
    split: {SPLIT}
    selection: 1
    private_fraction: 0.5
"""
WIDE_WALLS = 35  # the generator's 4/14 of them test walls: 10, 5 public
RESAMPLES, SEED = 50, 0  # the workers' (server_fixtures.WORKER_OPTIONS)
TOO_FEW = "too few units (2 wall_id units) for an interval"
REPORT, METRIC = "shared_metrics", "mIoU"
BOARD = f"/benchmarks/{BENCHMARK}/phases/{PHASE}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    deployment = Deployment(tmp_path_factory.mktemp("board"))
    phases = deployment.folder / "both" / f"{BENCHMARK}.yaml"
    phases.parent.mkdir()
    phases.write_text(PHASES + MORE_PHASES)
    in_process("server", "add-phase", "--db", deployment.db, "--benchmark", BENCHMARK, "--phase", BLIND, "--data",
               str(DATA), "--dataset-manifest", str(MANIFEST), "--phases", str(phases))
    wide, manifest = wide_split(deployment)
    in_process("server", "add-phase", "--db", deployment.db, "--benchmark", BENCHMARK, "--phase", WIDE, "--data",
               str(wide), "--dataset-manifest", str(manifest), "--phases", str(phases))
    deployment.worker()
    yield deployment
    deployment.close()


def wide_split(deployment: Deployment):
    """A Painting Vision dataset of WIDE_WALLS walls of 2 frames from the embedded generator, and its manifest."""
    data, manifest = deployment.folder / "wide", deployment.folder / "wide_manifest.json"
    build_dataset(data, seed=0, walls=WIDE_WALLS, frames_per_wall=2)
    in_process("manifest", "--benchmark", BENCHMARK, "--data", str(data), "--out", str(manifest))
    return data, manifest


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uploads")
    return {name: make_upload(folder / f"{name}.zip", blank_rows=rows).read_bytes()
            for name, rows in (("thirds", 1 / 3), ("tenth", 0.1), ("half", 0.5))}


def query(deployment: Deployment, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(deployment.db.removeprefix("sqlite:///")) as db:
        return db.execute(sql, args).fetchall()


def submit(deployment: Deployment, team: str, data: bytes, method: str, phase: str = PHASE) -> dict:
    status, accepted = deployment.api(f"/benchmarks/{BENCHMARK}/phases/{phase}/submissions?method={method}", team,
                                      body=data, headers={"Content-Type": "application/zip"})
    assert status == 201, accepted
    view = deployment.wait_for(team, accepted["id"])
    assert view["status"] == "scored", view["error"]
    return view


def private_walls(deployment: Deployment, manifest: Path = MANIFEST) -> set[str]:
    """The private walls by hand: the test walls ranked by HMAC-SHA256 under the stored secret,
    the first half of them (4 embedded walls: 2)."""
    (secret,), = query(deployment, "SELECT value FROM settings WHERE key = 'division_secret'")
    walls = sorted({f["wall_id"] for f in split_frames(manifest)[0]})
    ranked = sorted(walls, key=lambda w: hmac.new(bytes.fromhex(secret), w.encode(), hashlib.sha256).hexdigest())
    return set(ranked[: len(walls) // 2])


def part_frames(deployment: Deployment, manifest: Path = MANIFEST) -> dict[str, list[str]]:
    private = private_walls(deployment, manifest)
    frames = split_frames(manifest)[0]
    return {"public": sorted(f["frame_id"] for f in frames if f["wall_id"] not in private),
            "private": sorted(f["frame_id"] for f in frames if f["wall_id"] in private)}


def test_the_keyed_division_is_stable_and_balanced_on_the_servers_phase(served, uploads):
    view = submit(served, "alpha", uploads["thirds"], "thirds")
    (secret,), = query(served, "SELECT value FROM settings WHERE key = 'division_secret'")
    assert len(bytes.fromhex(secret)) == 32
    frames = part_frames(served)
    assert len(frames["public"]) == len(frames["private"]) == 8  # 2 walls of 4 frames each
    results, private, bootstrap, private_bootstrap = query(
        served, "SELECT results, private_results, uncertainty, private_uncertainty FROM submissions WHERE id = ?",
        view["id"])[0]
    assert json.loads(results)["frames"] == json.loads(private)["frames"] == 8
    assert json.loads(bootstrap)["groups"] == json.loads(private_bootstrap)["groups"] == 2
    # The floor, scored when the phase was added, on the same parts.
    floor_public, floor_private = query(served, "SELECT floor_results, floor_private_results FROM phases WHERE "
                                                "name = ?", PHASE)[0]
    assert json.loads(floor_public)["frames"] == json.loads(floor_private)["frames"] == 8


def stored_counts(deployment: Deployment, submission_id: str):
    (sha,), = query(deployment, "SELECT counts_sha256 FROM submissions WHERE id = ?", submission_id)
    return read_counts(FolderStore(deployment.store).path(sha))[0]


def exact(deployment: Deployment, submission_id: str, column: str) -> float:
    (document,), = query(deployment, f"SELECT {column} FROM submissions WHERE id = ?", submission_id)
    return json.loads(document)["results"][REPORT][METRIC]


def test_the_ladder_through_the_api_and_replayed_from_the_stored_counts(served, uploads):
    first = served.api("/submissions", "alpha")[1]["submissions"][0]
    tenth = submit(served, "alpha", uploads["tenth"], "tenth")
    half = submit(served, "alpha", uploads["half"], "half")
    # By hand: two public walls, so the first score is released and then kept whatever comes.
    assert exact(served, tenth["id"], "results") > exact(served, first["id"], "results") > exact(
        served, half["id"], "results")
    ladder = [served.api(f"/submissions/{s}", "alpha")[1]["ladder"] for s in (first["id"], tenth["id"], half["id"])]
    assert [(d["released"], d["note"]) for d in ladder] == [(True, "first score"), (False, TOO_FEW), (False, TOO_FEW)]
    score, decimals = ladder[0]["public_score"], ladder[0]["decimals"]
    assert score == round(exact(served, first["id"], "results"), decimals)
    assert [(d["public_score"], d["decimals"]) for d in ladder] == [(score, decimals)] * 3
    (entry, floor), = [g["entries"] for g in served.api(f"{BOARD}/leaderboard")[1]["groups"]]
    assert (entry["team"], entry["method"], entry["headline"]["value"], entry["headline"]["decimals"]) == (
        "alpha", "thirds", score, decimals)
    assert entry["beats_floor"] == TOO_FEW and floor["kind"] == "floor"

    assert_replayed(served, "alpha", PHASE, MANIFEST)


def assert_replayed(deployment: Deployment, team: str, phase: str, manifest: Path) -> None:
    """Every released number of the team's in the phase again from the store: core.ladder.replay
    over the stored counts, in the Ladder's order."""
    benchmark = load_benchmark(BENCHMARK)
    groups = {f["frame_id"]: f["wall_id"] for f in split_frames(manifest)[0]}
    order = query(deployment, "SELECT id, released, public_score, public_decimals, ladder_note FROM submissions WHERE "
                              "ladder_position IS NOT NULL AND team_id = (SELECT id FROM teams WHERE name = ?) AND "
                              "phase_id = (SELECT id FROM phases WHERE name = ?) ORDER BY ladder_position", team, phase)
    data = [headline_data(benchmark, stored_counts(deployment, row[0]), benchmark.ground_truth, groups,
                          part_frames(deployment, manifest)["public"]) for row in order]
    assert order and [(bool(r[1]), r[2], r[3], r[4]) for r in order] == [
        (d.released, d.score, d.decimals, d.note) for d in replay(data)]


def test_twenty_concurrent_selections_select_exactly_the_phases_one(served):
    ids = [s["id"] for s in served.api("/submissions", "alpha")[1]["submissions"] if s["phase"] == PHASE]
    assert len(ids) == 3

    def choose(i: int) -> int:
        return served.api(f"/submissions/{ids[i % 3]}/select", "alpha", method="POST")[0]

    with ThreadPoolExecutor(20) as pool:
        statuses = list(pool.map(choose, range(20)))
    assert set(statuses) <= {200, 409} and 200 in statuses
    chosen = query(served, "SELECT id FROM submissions WHERE selected")
    assert len(chosen) == 1
    # Unselect it and choose the 'tenth' upload; a second choice is refused while one is chosen.
    assert served.api(f"/submissions/{chosen[0][0]}/select", "alpha", method="DELETE")[0] == 200
    tenth = next(s["id"] for s in served.api("/submissions", "alpha")[1]["submissions"] if s["method"] == "tenth")
    status, view = served.api(f"/submissions/{tenth}/select", "alpha", method="POST")
    assert status == 200 and view["selected"] is True
    other = next(i for i in ids if i != tenth)
    assert served.api(f"/submissions/{other}/select", "alpha", method="POST") == (409, {
        "error": f"selection: at most 1 submission(s) of phase '{PHASE}', all chosen; unselect one first"})
    assert served.api(f"/submissions/{tenth}/select", "beta", method="POST")[0] == 404  # not beta's


# Every route of the app, and how the gate test calls it (the test fails when a route is added).
ROUTES = {
    ("POST", "/api/v1/benchmarks/{benchmark}/phases/{phase}/submissions"),
    ("GET", "/api/v1/submissions"), ("GET", "/api/v1/submissions/{submission_id}"),
    ("POST", "/api/v1/submissions/{submission_id}/select"), ("DELETE", "/api/v1/submissions/{submission_id}/select"),
    ("GET", "/api/v1/phases"), ("GET", "/api/v1/benchmarks/{benchmark}/phases/{phase}/leaderboard"),
    ("GET", "/api/v1/benchmarks/{benchmark}/phases/{phase}/private-leaderboard"), ("GET", "/api/v1/host/submissions"),
    ("GET", "/"), ("POST", "/signin"), ("POST", "/signout"), ("GET", "/team"), ("POST", "/team/upload"),
    ("GET", "/submissions/{submission_id}"), ("GET", "/boards/{benchmark}/{phase}"),
    ("GET", "/boards/{benchmark}/{phase}/private"),
}


def every_answer(served, uploads) -> dict[tuple[str, str], tuple[int, str]]:
    """(method, route) -> (status, body) of a call of every route, by the team, the host or a
    signed-in browser; beta's upload, its selection and the browser's upload are real."""
    url = served.url
    beta = {"Authorization": f"Bearer {served.tokens['beta']}"}
    host = {"Authorization": f"Bearer {served.host_token}"}
    own = next(s["id"] for s in served.api("/submissions", "alpha")[1]["submissions"] if s["method"] == "tenth")
    answers = {}

    def record(key, response):
        answers[key] = (response.status_code, response.text)

    record(("POST", "/api/v1/benchmarks/{benchmark}/phases/{phase}/submissions"),
           requests.post(f"{url}/api/v1{BOARD}/submissions?method=gate", data=uploads["half"],
                         headers={**beta, "Content-Type": "application/zip"}))
    beta_id = json.loads(answers[("POST", "/api/v1/benchmarks/{benchmark}/phases/{phase}/submissions")][1])["id"]
    served.wait_for("beta", beta_id)
    record(("GET", "/api/v1/submissions"), requests.get(f"{url}/api/v1/submissions", headers=beta))
    record(("GET", "/api/v1/submissions/{submission_id}"), requests.get(f"{url}/api/v1/submissions/{beta_id}", headers=beta))
    record(("POST", "/api/v1/submissions/{submission_id}/select"),
           requests.post(f"{url}/api/v1/submissions/{beta_id}/select", headers=beta))
    record(("DELETE", "/api/v1/submissions/{submission_id}/select"),
           requests.delete(f"{url}/api/v1/submissions/{beta_id}/select", headers=beta))
    record(("GET", "/api/v1/phases"), requests.get(f"{url}/api/v1/phases"))
    record(("GET", "/api/v1/benchmarks/{benchmark}/phases/{phase}/leaderboard"), requests.get(f"{url}/api/v1{BOARD}/leaderboard"))
    record(("GET", "/api/v1/benchmarks/{benchmark}/phases/{phase}/private-leaderboard"),
           requests.get(f"{url}/api/v1{BOARD}/private-leaderboard"))
    record(("GET", "/api/v1/host/submissions"), requests.get(f"{url}/api/v1/host/submissions", headers=host))
    session = signed_in_browser(served, "alpha")
    record(("POST", "/signin"), requests.post(f"{url}/signin", data={"token": "x", "csrf": "y"}))
    record(("GET", "/"), session.get(f"{url}/"))
    record(("GET", "/team"), session.get(f"{url}/team"))
    record(("POST", "/team/upload"), session.post(
        f"{url}/team/upload", data={"csrf": page_csrf(session, f"{url}/team"), "phase": f"{BENCHMARK}/{BLIND}",
                                    "method": "form", "description": ""},
        files={"upload": ("upload.zip", uploads["thirds"], "application/zip")}))
    served.wait_for("alpha", session.get(f"{url}/team").text.split('href="/submissions/')[1].split('"')[0])
    record(("GET", "/submissions/{submission_id}"), session.get(f"{url}/submissions/{own}"))
    record(("GET", "/boards/{benchmark}/{phase}"), requests.get(f"{url}/boards/{BENCHMARK}/{PHASE}"))
    record(("GET", "/boards/{benchmark}/{phase}/private"), requests.get(f"{url}/boards/{BENCHMARK}/{PHASE}/private"))
    record(("POST", "/signout"), session.post(f"{url}/signout", data={"csrf": page_csrf(session, f"{url}/team")}))
    client = subprocess.run([sys.executable, "-m", "segbench", "submissions", "--server", url], capture_output=True,
                            text=True, env={**environment(), "SEGBENCH_TOKEN": served.tokens["alpha"]}, timeout=120)
    answers[("client", "segbench submissions")] = (client.returncode, client.stdout + client.stderr)
    return answers


def private_numbers(served) -> list[str]:
    """Every exact private headline stored, as JSON and as a page would write them."""
    values = [json.loads(r[0])["results"][REPORT][METRIC] for r in query(
        served, "SELECT private_results FROM submissions WHERE private_results IS NOT NULL")]
    return [text for v in values for text in (json.dumps(v), f"{v:.4f}")]


def test_the_private_board_is_hidden_on_every_route_until_the_reveal(served, uploads):
    # HEAD, which every GET route answers with the GET's head (test_server.py), is not a route of its own here
    assert {(m, r.path) for router in (api.router, browser.router) for r in router.routes for m in r.methods
            if m != "HEAD"} == ROUTES
    before = every_answer(served, uploads)
    assert set(before) == ROUTES | {("client", "segbench submissions")}
    secrets_ = private_numbers(served)
    assert len(secrets_) == 2 * 5  # alpha's three, beta's, the browser's upload to the blind phase
    for key, (status, body) in before.items():
        assert not [s for s in secrets_ if s in body], key
        assert '"private"' not in body and "private part" not in body, key
    assert before[("GET", "/api/v1/benchmarks/{benchmark}/phases/{phase}/private-leaderboard")] == (
        403, json.dumps({"error": f"the private board of phase '{PHASE}' is not revealed yet"}, separators=(",", ":")))
    assert before[("GET", "/boards/{benchmark}/{phase}/private")][0] == 403
    # the public page says what it shows: released scores, no interval (the results page's note would promise them)
    public_page = before[("GET", "/boards/{benchmark}/{phase}")][1]
    assert BOARD_NOTES[PUBLIC] in public_page and "released scores: the intervals are on the private board" in public_page
    assert INTERVALS not in public_page and "uncertainty.json" not in public_page

    done = segbench_here("server", "reveal", "--db", served.db, "--benchmark", BENCHMARK, "--phase", PHASE)
    assert done.stdout.startswith(f"phase {PHASE} of {BENCHMARK}: private board revealed at ")
    again = segbench_here("server", "reveal", "--db", served.db, "--benchmark", BENCHMARK, "--phase", PHASE, check=False)
    assert again.returncode != 0 and "was revealed at" in again.stderr and "Traceback" not in again.stderr

    status, board = served.api(f"{BOARD}/private-leaderboard")
    assert status == 200
    (group,) = board["groups"]
    assert group["part"] == "private"
    tenth = next(s["id"] for s in served.api("/submissions", "alpha")[1]["submissions"] if s["method"] == "tenth")
    betas = [s for s in served.api("/submissions", "beta")[1]["submissions"]]
    (beta_id,) = [s["id"] for s in betas]
    # alpha's selected 'tenth', beta's default (its only, released, submission), ranked by the private headline.
    expected = sorted([("alpha", "tenth", exact(served, tenth, "private_results")),
                       ("beta", "gate", exact(served, beta_id, "private_results"))], key=lambda e: -e[2])
    assert [(e["team"], e["method"], e["headline"]["value"]) for e in group["entries"][:2]] == expected
    assert [e["tied_with_above"] for e in group["entries"]] == [False, True, None]  # 2 walls: nothing told apart
    assert [e["beats_floor"] for e in group["entries"][:2]] == [TOO_FEW, TOO_FEW]
    assert group["entries"][0]["headline"]["ci_low"] <= expected[0][2] <= group["entries"][0]["headline"]["ci_high"]
    view = served.api(f"/submissions/{tenth}", "alpha")[1]
    assert view["private"]["results"][REPORT][METRIC] == exact(served, tenth, "private_results")
    assert view["public"]["results"][REPORT][METRIC] == exact(served, tenth, "results")
    page = requests.get(f"{served.url}/boards/{BENCHMARK}/{PHASE}/private")
    assert page.status_code == 200 and f"{expected[0][2]:.4f}" in page.text
    assert BOARD_NOTES[PRIVATE] in page.text and INTERVALS in page.text and SLICES not in page.text
    assert f"95% bootstrap intervals: {RESAMPLES} resamples of " in page.text
    assert served.api(f"/submissions/{tenth}/select", "alpha", method="DELETE") == (
        403, {"error": f"phase '{PHASE}' is revealed: its selection is closed"})


def test_a_phase_without_scores_shows_that_each_submission_was_scored_and_nothing_else(served):
    blind = [s for s in served.api("/submissions", "alpha")[1]["submissions"] if s["phase"] == BLIND]
    (submission,) = blind
    view = served.wait_for("alpha", submission["id"])
    assert view["status"] == "scored" and "ladder" not in view and "private" not in view
    (entry, floor), = [g["entries"] for g in served.api(f"/benchmarks/{BENCHMARK}/phases/{BLIND}/leaderboard")[1]["groups"]]
    assert (entry["rank"], entry["team"], entry["headline"]["value"], entry["beats_floor"],
            entry["tied_with_above"]) == (None, "alpha", None, None, None)
    assert served.api(f"/benchmarks/{BENCHMARK}/phases/{BLIND}/private-leaderboard")[0] == 403


def test_a_hand_worked_ladder_on_five_public_walls(served, tmp_path):
    data, manifest = served.folder / "wide", served.folder / "wide_manifest.json"
    frames, _ = split_frames(manifest)
    assert len({f["wall_id"] for f in frames}) == 10 and len(frames) == 20
    views = [submit(served, "beta", make_upload(tmp_path / f"{i}.zip", blank_rows=rows, data=data,
                                                manifest=manifest).read_bytes(), f"b{i}", WIDE)
             for i, rows in enumerate((1 / 3, 0.1, 0.2, 0.0))]
    ladder = [v["ladder"] for v in views]
    values = [exact(served, v["id"], "results") for v in views]
    # By hand (the division, so the exact values, changes with each deployment's secret; the notes
    # do not): a tenth of each frame blanked beats a third on every wall, by far more than one paired
    # standard error; a fifth blanked is below the best; the ground truth itself is above it again.
    assert [(d["released"], d["note"]) for d in ladder] == [
        (True, "first score"), (True, "new best"), (False, "within noise of your best"), (True, "new best")]
    scores = [d["public_score"] for d in ladder]
    assert [scores[i] for i in (0, 1, 3)] == [round(values[i], ladder[i]["decimals"]) for i in (0, 1, 3)]
    assert (scores[2], ladder[2]["decimals"]) == (scores[1], ladder[1]["decimals"]) and values[2] < values[1]
    assert values[3] == scores[3] == 1.0
    assert_replayed(served, "beta", WIDE, manifest)
    (entry, floor), = [g["entries"] for g in served.api(f"/benchmarks/{BENCHMARK}/phases/{WIDE}/leaderboard")[1]["groups"]]
    assert (entry["team"], entry["method"], entry["headline"]["value"], entry["tied_with_above"]) == (
        "beta", "b3", 1.0, False)
    assert entry["beats_floor"] == "yes"  # five public walls: the interval rule decides
    page = signed_in_browser(served, "beta").get(f"{served.url}/submissions/{views[2]['id']}")
    kept = f"{scores[2]:.{ladder[2]['decimals']}f}"
    assert "<pre>within noise of your best</pre>" in page.text and f"<pre>{kept}</pre>" in page.text
