"""The hosted evaluation end to end, against real processes: `segbench server init`, a phase on
the embedded Painting Vision test split, two teams, a server (uvicorn) and a worker as
subprocesses, shared by the module's tests; once on SQLite and once on PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import requests
from PIL import Image
from server_fixtures import (BACKENDS, BENCHMARK, DATA, MANIFEST, PHASE, SPLIT, Deployment, as_process, environment,
                             in_process, make_upload, segbench, segbench_here)

from segbench.commands import cli
from segbench.errors import SegbenchError
from segbench.protocols.definitions import load_benchmark
from segbench.records.countsio import read_counts
from segbench.server import client
from segbench.server.store import FolderStore
from segbench.steps.metrics import document

LIMIT = 200_000  # the server's upload limit here: above the uploads, below the oversized one


@pytest.fixture(scope="module", params=BACKENDS)
def served(tmp_path_factory, request):
    baseline = make_upload(tmp_path_factory.mktemp("baseline") / "baseline.zip", blank_rows=0.5)
    # set up by the commands as processes, as a host runs them (the other modules: in their process)
    deployment = Deployment(tmp_path_factory.mktemp("server"), ("--max-upload-bytes", str(LIMIT)), baseline,
                            request.param, command=as_process)
    deployment.worker()
    yield deployment
    deployment.close()


@pytest.fixture(scope="module")
def upload(tmp_path_factory):
    return make_upload(tmp_path_factory.mktemp("upload") / "upload.zip")


def stored_row(deployment: Deployment, table: str, column: str, key: str, value: str):
    return deployment.sql(f"SELECT {column} FROM {table} WHERE {key} = :value", value=value)[0][0]


def test_an_upload_is_queued_then_scored_as_segbench_metrics_scores_it(served, upload, tmp_path):
    status, accepted = served.upload("alpha", upload.read_bytes(), "thirds")
    assert status == 201 and accepted["status"] == "queued" and len(accepted["id"]) == 32
    view = served.wait_for("alpha", accepted["id"])
    assert view["status"] == "scored", view["error"]
    segbench_here("metrics", "--benchmark", BENCHMARK, "--predictions", str(upload), "--label-space",
             load_benchmark(BENCHMARK).ground_truth.name, "--data", str(DATA), "--split", SPLIT,
             "--out", str(tmp_path / "metrics.json"))
    expected = json.loads((tmp_path / "metrics.json").read_text())
    # The stored counts are the CLI's: every metric on the whole split recomputed from them is its.
    counts, _ = read_counts(FolderStore(served.store).path(stored_row(served, "submissions", "counts_sha256", "id",
                                                                      accepted["id"])))
    whole = document(load_benchmark(BENCHMARK), counts, load_benchmark(BENCHMARK).ground_truth, SPLIT, "x", "predictions")
    assert whole["results"] == expected["results"] and whole["frames"] == expected["frames"]
    assert view["upload_sha256"] == hashlib.sha256(upload.read_bytes()).hexdigest()
    assert view["ladder"]["note"] == "first score" and view["ladder"]["released"] is True
    assert "results" not in view and "private" not in view and "public" not in view  # no exact number before the reveal

    status, board = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")
    assert status == 200
    (group,) = board["groups"]
    assert group["part"] == "public"
    entry = next(e for e in group["entries"] if e["team"] == "alpha")
    report, metric = group["headline"].split(".")
    public = json.loads(stored_row(served, "submissions", "results", "id", accepted["id"]))
    assert entry["headline"]["value"] == view["ladder"]["public_score"] == round(
        public["results"][report][metric], view["ladder"]["decimals"])
    assert entry["headline"]["ci_low"] is None and entry["vs_floor"] is None and entry["vs_baseline"] is None
    assert entry["method"] == "thirds" and entry["provenance"]["upload_sha256"] == view["upload_sha256"]
    assert entry["provenance"]["dataset_id"] == group["dataset_id"] == view["dataset_id"]
    assert entry["beats_floor"] == "too few units (2 wall_id units) for an interval"  # the public part: 2 of 4 walls
    floor = group["entries"][-1]
    assert floor["kind"] == "floor" and floor["frames"] == public["frames"]
    baseline = json.loads(stored_row(served, "phases", "baseline_results", "name", PHASE))
    assert baseline["frames"] == public["frames"]  # the baseline on the public part, as the entries


def test_a_better_upload_within_too_few_units_keeps_the_teams_first_score(served, upload, tmp_path):
    better = make_upload(tmp_path / "better.zip", blank_rows=0.1)
    status, accepted = served.upload("alpha", better.read_bytes(), "tenth")
    assert status == 201
    view = served.wait_for("alpha", accepted["id"])
    assert view["ladder"]["released"] is False
    assert view["ladder"]["note"] == "too few units (2 wall_id units) for an interval"
    status, worse = served.upload("beta", upload.read_bytes(), "thirds")
    assert served.wait_for("beta", worse["id"])["status"] == "scored"
    entries = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[1]["groups"][0]["entries"]
    # The same released score: ranked by the time of release, and tied (too few units to tell).
    assert [(e["rank"], e["team"], e["method"], e["tied_with_above"]) for e in entries] == [
        (1, "alpha", "thirds", False), (2, "beta", "thirds", True), (None, None, None, None)]


REFUSALS = [
    ("not a zip", lambda tmp: b"plain text, not an archive", 400, "upload.zip: an upload must be a zip archive"),
    ("another dataset", lambda tmp: make_upload(tmp / "u.zip", dataset_id="pv1:" + "0" * 64).read_bytes(), 400,
     "upload refused: 1 problem:\n  the dataset the upload was made for (dataset_id.txt) (1):\n"
     "    upload.zip: dataset_id.txt says pv1:" + "0" * 64),
    ("a frame missing", lambda tmp: make_upload(tmp / "u.zip", skip=1).read_bytes(), 400, "missing"),
    ("an unexpected member", lambda tmp: make_upload(tmp / "u.zip", extra={"../x.png": b"x"}).read_bytes(), 400, "x.png"),
    ("over the size limit", lambda tmp: b"\0" * (LIMIT + 1), 413, f"upload.zip: more than the upload limit of {LIMIT} bytes"),
]


@pytest.mark.parametrize(("case", "body", "status", "message"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_refused_upload_gets_the_clis_message_and_leaves_nothing(served, tmp_path, case, body, status, message):
    data = body(tmp_path)
    objects, submissions = served.stored_objects(), served.rows("submissions")
    got, answer = served.upload("beta", data)
    assert got == status and message in answer["error"]
    assert str(tmp_path) not in answer["error"] and "/tmp/" not in answer["error"]
    assert served.stored_objects() == objects and served.rows("submissions") == submissions
    if status == 400:  # the CLI says the same of the same bytes
        (tmp_path / "upload.zip").write_bytes(data)
        cli = segbench("check-submission", str(tmp_path / "upload.zip"), "--benchmark", BENCHMARK,
                       "--dataset-manifest", str(MANIFEST), "--split", SPLIT,
                       "--data", str(DATA), check=False)
        assert cli.returncode == 1
        assert cli.stderr.strip().removeprefix("segbench: error: ") == answer["error"].replace(
            "upload.zip", str(tmp_path / "upload.zip"))


def test_a_team_reads_only_its_own_submissions(served, upload):
    status, accepted = served.upload("alpha", upload.read_bytes())
    assert status == 201
    assert served.api(f"/submissions/{accepted['id']}", "beta") == (
        404, {"error": f"no submission '{accepted['id']}' of team beta"})
    mine = {s["id"] for s in served.api("/submissions", "alpha")[1]["submissions"]}
    theirs = {s["id"] for s in served.api("/submissions", "beta")[1]["submissions"]}
    assert accepted["id"] in mine and accepted["id"] not in theirs and not mine & theirs
    listed = segbench("submissions", "--server", served.url, "--token", served.tokens["beta"]).stdout
    assert accepted["id"] not in listed and all(i in listed for i in theirs)


@pytest.mark.parametrize(("token", "status"), [(None, 401), ("sbt_not-a-token", 401), ("alpha", 403)])
def test_a_host_endpoint_needs_the_host_token(served, token, status):
    got, answer = served.api("/host/submissions", token)
    assert got == status and set(answer) == {"error"}


def test_the_host_sees_every_teams_submissions(served):
    status, answer = served.api("/host/submissions", served.host_token)
    assert status == 200
    assert {s["team"] for s in answer["submissions"]} == {"alpha", "beta"}
    assert len(answer["submissions"]) == served.rows("submissions")


@pytest.mark.parametrize("token", [None, "sbt_wrong"])
def test_no_team_no_upload(served, upload, token):
    submissions = served.rows("submissions")
    got, answer = served.upload(token, upload.read_bytes())
    assert got == 401 and set(answer) == {"error"} and served.rows("submissions") == submissions


def test_the_client_submits_with_the_token_from_the_environment_and_waits(served, upload):
    done = subprocess.run([sys.executable, "-m", "segbench", "submit", str(upload), "--server", served.url,
                           "--benchmark", BENCHMARK, "--phase", PHASE, "--method", "cli", "--wait", "--timeout", "120"],
                          env={**environment(), "SEGBENCH_TOKEN": served.tokens["beta"]}, capture_output=True,
                          text=True, timeout=200)
    assert done.returncode == 0, done.stderr
    submission_id, rest = done.stdout.split("\n", 1)
    result = json.loads(rest)
    assert (result["id"], result["status"], result["method"]) == (submission_id, "scored", "cli")
    assert served.api(f"/submissions/{submission_id}", "beta")[1] == result


@pytest.mark.parametrize(("token", "phase", "refusal"), [
    ("sbt_wrong", PHASE, "refused (401): the token is not a live team's"),
    ("beta", "nope", f"refused (404): no phase 'nope' of benchmark '{BENCHMARK}'"),
    ("beta", PHASE, f"refused (413): upload.zip: more than the upload limit of {LIMIT} bytes")])
def test_the_client_reports_a_refusal_given_before_a_large_upload_is_sent(served, tmp_path, token, phase, refusal):
    """16 MB, more than the connection's buffers: without `Expect: 100-continue` the server's early
    answer and close met a body still being sent, and `submit` said "cannot reach the server"."""
    large = tmp_path / "upload.zip"
    large.write_bytes(b"\0" * (16 << 20))
    submissions = served.rows("submissions")
    with pytest.raises(SegbenchError) as info:
        client.submit(served.url, served.tokens.get(token, token), BENCHMARK, phase, large)
    assert str(info.value) == f"{served.url}: {refusal}"
    assert served.rows("submissions") == submissions


def test_an_accepted_upload_carries_the_intakes_warnings_as_check_submission_words_them(served, tmp_path):
    """The upload keeps the labels' void pixels (255) below its blanked rows: each frame's count,
    from the masks here, is in the 201 answer, the submission's view and page, and `submit`'s stderr."""
    upload = make_upload(tmp_path / "upload.zip", blank_rows=0.25)
    with zipfile.ZipFile(upload) as archive:
        void = {name.removesuffix(".png"): int((np.asarray(Image.open(io.BytesIO(archive.read(name)))) == 255).sum())
                for name in sorted(archive.namelist()) if name.endswith(".png")}
    expected = [f"frame {frame}: {count:,} pixels predicted as void (255) in 'painting-vision-10', counted as misses"
                for frame, count in void.items() if count]
    assert expected  # the labels have void pixels below a quarter of their rows
    status, accepted = served.upload("beta", upload.read_bytes(), "warned")
    assert (status, accepted["warnings"]) == (201, expected)
    assert served.api(f"/submissions/{accepted['id']}", "beta")[1]["warnings"] == expected
    page = signed_in_browser(served, "beta").get(f"{served.url}/submissions/{accepted['id']}").text
    assert f'<td class="warnings"><pre>{html.escape(chr(10).join(expected))}</pre></td>' in page
    done = subprocess.run([sys.executable, "-m", "segbench", "submit", str(upload), "--server", served.url,
                           "--benchmark", BENCHMARK, "--phase", PHASE, "--method", "warned again"],
                          env={**environment(), "SEGBENCH_TOKEN": served.tokens["beta"]}, capture_output=True,
                          text=True, timeout=200)
    assert done.returncode == 0 and done.stderr == "".join(f"warning: {line}\n" for line in expected)
    for submission_id in (accepted["id"], done.stdout.strip()):  # scored before the next test counts the store
        assert served.wait_for("beta", submission_id)["warnings"] == expected


def signed_in_browser(served, team: str):
    """A browser (requests' session keeps the cookies) signed in with the team's token."""
    browser = requests.Session()
    front = browser.get(served.url + "/")
    csrf = re.search(r'name="csrf" value="([^"]+)"', front.text).group(1)
    signin = browser.post(served.url + "/signin", data={"token": served.tokens[team], "csrf": csrf},
                          allow_redirects=False)
    assert signin.status_code == 303 and signin.headers["location"] == "/team"
    cookie = signin.headers["set-cookie"]
    assert "segbench_session=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    return browser


def page_csrf(browser, url: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', browser.get(url).text).group(1)


def test_a_browser_signs_in_uploads_through_the_form_and_sees_its_submission(served, upload):
    browser = signed_in_browser(served, "alpha")
    csrf = page_csrf(browser, served.url + "/team")
    sent = browser.post(served.url + "/team/upload", data={"csrf": csrf, "phase": f"{BENCHMARK}/{PHASE}",
                                                          "method": "form", "description": ""},
                        files={"upload": ("upload.zip", upload.read_bytes(), "application/zip")},
                        allow_redirects=False)
    assert sent.status_code == 303, sent.text
    submission_id = sent.headers["location"].rsplit("/", 1)[1]
    assert served.wait_for("alpha", submission_id)["status"] == "scored"
    page = browser.get(served.url + f"/submissions/{submission_id}")
    assert page.status_code == 200 and "public score" in page.text and "Every metric" not in page.text
    assert submission_id in browser.get(served.url + "/team").text
    board = requests.get(served.url + f"/boards/{BENCHMARK}/{PHASE}")
    entries = served.api(f"/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard")[1]["groups"][0]["entries"]
    assert board.status_code == 200
    assert re.findall(r"<tr><td>(\w+)</td><td>(\w+)</td>", board.text) == [
        (e["team"], e["method"]) for e in entries if e["kind"] == "upload"]
    other = signed_in_browser(served, "beta")
    assert other.get(served.url + f"/submissions/{submission_id}").status_code == 404


def test_the_form_takes_the_description_the_api_takes_in_any_script_and_says_what_it_refuses(served, tmp_path):
    """4,000 characters of three UTF-8 bytes each (12,000 bytes) went past the form's 8 KB parts."""
    browser = signed_in_browser(served, "beta")
    csrf = page_csrf(browser, served.url + "/team")

    def sent(description: str, upload: bytes = b"") -> requests.Response:
        return browser.post(served.url + "/team/upload", data={"csrf": csrf, "phase": f"{BENCHMARK}/{PHASE}",
                                                              "method": "cjk", "description": description},
                            files={"upload": ("upload.zip", upload, "application/zip")}, allow_redirects=False)

    accepted = sent("漢" * 4000, make_upload(tmp_path / "upload.zip", blank_rows=0.2).read_bytes())
    assert accepted.status_code == 303, accepted.text
    view = served.wait_for("beta", accepted.headers["location"].rsplit("/", 1)[1])  # scored before the next test
    assert view["description"] == "漢" * 4000
    submissions = served.rows("submissions")
    for description, message in (("漢" * 4001, "description: at most 4000 characters"),
                                 ("𝔸" * 5000, "the upload form: Part exceeded maximum size of 15KB. (it takes 1 file(s), "
                                              "8 fields, each text at most 4000 characters)")):
        refused = sent(description)
        assert refused.status_code == 400 and f"<pre>{message}</pre>" in refused.text
    assert served.rows("submissions") == submissions


@pytest.mark.parametrize("csrf", [None, "forged"])
def test_a_form_without_its_csrf_token_changes_nothing(served, upload, csrf):
    browser = signed_in_browser(served, "beta")
    objects, submissions = served.stored_objects(), served.rows("submissions")
    data = {"phase": f"{BENCHMARK}/{PHASE}", "method": "m", **({"csrf": csrf} if csrf else {})}
    sent = browser.post(served.url + "/team/upload", data=data,
                        files={"upload": ("upload.zip", upload.read_bytes(), "application/zip")}, allow_redirects=False)
    assert sent.status_code == 403 and "CSRF" in sent.text
    assert served.stored_objects() == objects and served.rows("submissions") == submissions
    signout = browser.post(served.url + "/signout", data=data, allow_redirects=False)
    assert signout.status_code == 403 and browser.get(served.url + "/team").status_code == 200


def test_signing_in_needs_the_sign_in_forms_csrf_token_and_a_live_token(served):
    browser = requests.Session()
    browser.get(served.url + "/")
    assert browser.post(served.url + "/signin", data={"token": served.tokens["alpha"], "csrf": "forged"},
                        allow_redirects=False).status_code == 403
    csrf = page_csrf(browser, served.url + "/")
    assert browser.post(served.url + "/signin", data={"token": "sbt_wrong", "csrf": csrf},
                        allow_redirects=False).status_code == 401
    assert browser.get(served.url + "/team").status_code == 401
    # the form's own mistakes answered as pages that say what to do
    empty = browser.post(served.url + "/signin", data={"token": " ", "csrf": csrf}, allow_redirects=False)
    assert empty.status_code == 401 and "<pre>enter your team&#x27;s token (the one the host gave you)</pre>" in empty.text
    long = browser.post(served.url + "/signin", data={"token": "t" * 5000, "csrf": csrf}, allow_redirects=False)
    assert long.status_code == 400 and long.headers["content-type"].startswith("text/html")
    assert ("<pre>the sign-in form: Field exceeded maximum size of 1KB. (it takes 0 file(s), 4 fields, each text at "
            "most 256 characters)</pre>") in long.text
    assert browser.get(served.url + "/team").status_code == 401


def test_a_revoked_token_opens_nothing(served, upload):
    line = segbench_here("server", "add-team", "gamma", "--db", served.db).stdout.strip()
    token = line.removeprefix("token for gamma: ")
    assert served.api("/submissions", token)[0] == 200
    assert segbench_here("server", "revoke-team", "gamma", "--db", served.db).stdout.strip() == "team gamma: token revoked"
    submissions = served.rows("submissions")
    assert served.api("/submissions", token) == (401, {"error": "the token is not a live team's"})
    assert served.upload(token, upload.read_bytes())[0] == 401 and served.rows("submissions") == submissions


def test_a_new_token_replaces_the_old_one_and_its_sessions_and_keeps_the_submissions(served, upload, capsys):
    # the commands in this process (the same entry as the host's, without an interpreter start each)
    old = in_process("server", "add-team", "delta", "--db", served.db).strip().removeprefix("token for delta: ")
    status, accepted = served.upload(old, upload.read_bytes(), "before-the-new-token")
    assert status == 201
    browser = requests.Session()
    csrf = page_csrf(browser, served.url + "/")
    assert browser.post(served.url + "/signin", data={"token": old, "csrf": csrf}, allow_redirects=False).status_code == 303

    line = in_process("server", "new-token", "delta", "--db", served.db).strip()
    assert line.startswith("token for delta: sbt_")
    new = line.removeprefix("token for delta: ")
    logs = "".join(log.read_text(errors="replace") for log in served.folder.glob("*.log"))
    assert new != old and logs and old not in logs and new not in logs  # no token in the server's or workers' logs
    assert served.api("/submissions", old) == (401, {"error": "the token is not a live team's"})
    assert browser.get(served.url + "/team").status_code == 401  # the old token's browser session closed
    status, listed = served.api("/submissions", new)
    assert status == 200 and [s["id"] for s in listed["submissions"]] == [accepted["id"]]

    # revoked, then a new token: live again
    in_process("server", "revoke-team", "delta", "--db", served.db)
    assert served.api("/submissions", new)[0] == 401
    newer = in_process("server", "new-token", "delta", "--db", served.db).strip().removeprefix("token for delta: ")
    assert served.api("/submissions", newer)[0] == 200

    capsys.readouterr()
    assert cli.main(["server", "new-token", "nobody", "--db", served.db]) == 1
    assert capsys.readouterr().err == "segbench: error: no team named 'nobody'\n"


def csp_sources(policy: str) -> dict[str, set[str]]:
    """'directive' -> its sources, parsed from a Content-Security-Policy header."""
    return {name: set(sources) for name, *sources in (part.split() for part in policy.split(";") if part.strip())}


def test_every_response_carries_the_browser_protections_and_the_pages_run_only_their_hashed_blocks(served, upload):
    browser = signed_in_browser(served, "alpha")
    status, accepted = served.upload("alpha", upload.read_bytes(), "headers")
    assert status == 201
    responses = [browser.get(served.url + path) for path in (
        "/", "/team", f"/submissions/{accepted['id']}", f"/boards/{BENCHMARK}/{PHASE}", "/boards/nope/none",
        f"/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard", "/api/v1/submissions")]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 404, 200, 401]
    for response in responses:
        headers = response.headers
        assert (headers["x-frame-options"], headers["x-content-type-options"], headers["referrer-policy"]) == (
            "DENY", "nosniff", "same-origin")
        policy = csp_sources(headers["content-security-policy"])
        assert policy["default-src"] == policy["frame-ancestors"] == policy["base-uri"] == {"'none'"}
        assert policy["form-action"] == {"'self'"}
        if not headers["content-type"].startswith("text/html"):
            continue
        # Each inline block's SHA-256, computed here, is a source its directive names; no markup
        # carries a style or an event handler of its own, which no hash would allow.
        for kind, text in re.findall(r"<(style|script)>(.*?)</\1>", response.text, re.S):
            digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in policy[f"{kind}-src"], (response.url, kind)
        assert not re.search(r"<[^>]*\s(style|on[a-z]+)\s*=", response.text), response.url
    board = responses[3].text
    assert "<script>" in board and "<style>" in board  # the board's sorting script and its style both checked


def test_every_get_answers_head_with_its_head_alone_and_a_405_names_the_methods_allowed(served, upload):
    browser = signed_in_browser(served, "alpha")
    # The board and the team's page change while the module's worker scores: their heads are
    # compared by kind, those of the phases and the sign-in page whole.
    for path, same in (("/", ("content-length",)), ("/api/v1/phases", ("content-length",)), ("/team", ()),
                       (f"/boards/{BENCHMARK}/{PHASE}", ()),
                       (f"/api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/leaderboard", ())):
        got, head = browser.get(served.url + path), browser.head(served.url + path)
        assert (got.status_code, head.status_code, head.content) == (200, 200, b""), path
        for header in ("content-type", "x-content-type-options", *same):
            assert head.headers[header] == got.headers[header], (path, header)
        assert ("etag" in head.headers) == ("etag" in got.headers), path
    put = requests.put(f"{served.url}/api/v1/phases")
    assert (put.status_code, put.headers["allow"], put.json()) == (
        405, "GET, HEAD", {"error": "PUT is not allowed on /api/v1/phases (it takes GET, HEAD)"})
    page = browser.delete(f"{served.url}/team")
    assert (page.status_code, page.headers["allow"]) == (405, "GET, HEAD")
    assert "<pre>DELETE is not allowed on /team (it takes GET, HEAD)</pre>" in page.text
    missing = requests.get(f"{served.url}/api/v1/nothing-here")
    assert (missing.status_code, missing.json()) == (404, {"error": "nothing at /api/v1/nothing-here"})
