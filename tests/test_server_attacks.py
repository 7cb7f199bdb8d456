"""The attack catalogue: hostile requests against one running server (a module's deployment, no
worker, so nothing moves on its own), each refused with its status and a JSON error (a form's:
its page), and nothing changed in the database or the store (every table's rows but the browser
sessions', and the store's listing, compared before and after each attack)."""

from __future__ import annotations

import io
import re
import socket
import tempfile
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from server_fixtures import BENCHMARK, PHASE, PHASES, Deployment, call, in_process, make_upload, segbench_here, split_frames

LIMIT = 200_000
QUOTA = 5
# Besides `test`: `race` (a quota the race exhausts) and `closed` (ended in 2000).
ATTACK_PHASES = PHASES + f"""  - name: race
    split: test
    quota_total: {QUOTA}
    selection: 1
    show_scores: true
    private_fraction: 0.5
  - name: closed
    split: test
    end: "2000-01-01T00:00:00+00:00"
    selection: 1
    show_scores: true
    private_fraction: 0.5
"""
SQL = "x'; DROP TABLE submissions; --"
TABLES = ("settings", "host_tokens", "teams", "phases", "submissions")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    deployment = Deployment(tmp_path_factory.mktemp("server"), ("--max-upload-bytes", str(LIMIT),
                                                                 "--uploads-per-hour", "10000"),
                            phases_file=ATTACK_PHASES, phase_names=(PHASE, "race", "closed"))
    line = in_process("server", "add-team", "revoked", "--db", deployment.db).strip()
    deployment.tokens["revoked"] = line.removeprefix("token for revoked: ")
    in_process("server", "revoke-team", "revoked", "--db", deployment.db)
    yield deployment
    deployment.close()


@pytest.fixture(scope="module")
def upload(tmp_path_factory) -> bytes:
    return make_upload(tmp_path_factory.mktemp("upload") / "upload.zip").read_bytes()


@pytest.fixture(scope="module")
def alphas_submission(served, upload) -> str:
    status, accepted = served.upload("alpha", upload, "own")
    assert status == 201
    return accepted["id"]


def state(served: Deployment) -> tuple:
    return tuple(sorted(served.sql(f"SELECT * FROM {t}"), key=repr) for t in TABLES), served.stored_objects()


def upload_bytes(**kwargs) -> bytes:
    """The bytes of make_upload's zip (its keyword arguments), made in a folder removed after."""
    with tempfile.TemporaryDirectory(prefix="attack-") as folder:
        return make_upload(Path(folder) / "upload.zip", **kwargs).read_bytes()


def members(**extra: bytes) -> bytes:
    """The valid upload's members plus `extra`, as a zip's bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(upload_bytes())) as base, \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in base.infolist():
            out.writestr(info.filename, base.read(info))
        for name, data in extra.items():
            out.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


def replaced(frame_png: bytes) -> bytes:
    """The valid upload with its first frame's mask replaced by `frame_png`."""
    first = split_frames()[0][0]["frame_id"] + ".png"
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(upload_bytes())) as base, \
            zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in base.infolist():
            out.writestr(info.filename, frame_png if info.filename == first else base.read(info))
    return buffer.getvalue()


def png_bomb() -> bytes:
    """A valid PNG header declaring 100000 x 100000 pixels (10 GB decoded) with a tiny body."""
    import struct
    import zlib

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b"")


def zip_bomb() -> bytes:
    """One member (a frame's name) that inflates to 100 MB of zeros from about 100 kB."""
    first = split_frames()[0][0]["frame_id"] + ".png"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        with out.open(first, "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(100):
                member.write(block)
    return buffer.getvalue()


def api(served: Deployment, path: str, token: str | None, **kwargs) -> tuple[int, dict]:
    return served.api(path, token, **kwargs)


def post(served: Deployment, token: str | None, body: bytes, query: str = "method=m", phase: str = PHASE,
         benchmark: str = BENCHMARK, content_type: str = "application/zip") -> tuple[int, dict]:
    return call(f"{served.url}/api/v1/benchmarks/{requests.utils.quote(benchmark, safe='')}/phases/"
                f"{requests.utils.quote(phase, safe='')}/submissions?{query}",
                served.tokens.get(token, token), body=body, headers={"Content-Type": content_type})


@dataclass(frozen=True)
class Attack:
    name: str
    run: Callable  # (served, upload, alphas_submission) -> (status, answer)
    status: int
    needle: str  # in the error message


def q(text: str) -> str:
    return requests.utils.quote(text, safe="")


ATTACKS = [
    Attack("no token", lambda s, u, a: post(s, None, u), 401, "no token"),
    Attack("a wrong token", lambda s, u, a: post(s, "sbt_" + "A" * 43, u), 401, "not a live team's"),
    Attack("a revoked token uploads", lambda s, u, a: post(s, "revoked", u), 401, "not a live team's"),
    Attack("a revoked token lists", lambda s, u, a: api(s, "/submissions", s.tokens["revoked"]), 401, "not a live"),
    Attack("a token in another scheme", lambda s, u, a: call(f"{s.url}/api/v1/submissions", None,
                                                             headers={"Authorization": f"Basic {s.tokens['beta']}"}),
           401, "no token"),
    Attack("another team's submission read", lambda s, u, a: api(s, f"/submissions/{a}", s.tokens["beta"]), 404,
           "of team beta"),
    Attack("another team's submission deleted", lambda s, u, a: api(s, f"/submissions/{a}", s.tokens["beta"],
                                                                    method="DELETE"), 405,
           "DELETE is not allowed on /api/v1/submissions/"),
    Attack("a traversing submission id", lambda s, u, a: api(s, "/submissions/..%2F..%2Fetc%2Fpasswd",
                                                             s.tokens["beta"]), 404,
           "nothing at /api/v1/submissions/../../etc/passwd"),
    Attack("a traversing member name", lambda s, u, a: post(s, "beta", members(**{"../../etc/x.png": b"x"})), 400,
           "x.png"),
    Attack("an absolute member name", lambda s, u, a: post(s, "beta", members(**{"/etc/x.png": b"x"})), 400, "x.png"),
    Attack("a backslash member name", lambda s, u, a: post(s, "beta", members(**{"..\\..\\x.png": b"x"})), 400,
           "x.png"),
    Attack("a control character in a member name", lambda s, u, a: post(s, "beta", members(**{"a\x01b.png": b"x"})),
           400, "upload.zip"),
    Attack("a traversing method name", lambda s, u, a: post(s, "beta", u, "method=" + q("../../etc/passwd")), 400,
           "method: '/'"),
    Attack("a backslash method name", lambda s, u, a: post(s, "beta", u, "method=" + q("..\\x")), 400, "method: '/'"),
    Attack("a NUL in the method", lambda s, u, a: post(s, "beta", u, "method=a%00b"), 400, "control characters"),
    Attack("an escape sequence in the method", lambda s, u, a: post(s, "beta", u, "method=" + q("\x1b[31mred")), 400,
           "control characters"),
    Attack("a control character in the description", lambda s, u, a: post(s, "beta", u, "method=d&description=a%07"),
           400, "description: control characters"),
    Attack("a right-to-left override in the method (the board would show it reversed)",
           lambda s, u, a: post(s, "beta", u, "method=" + q("best\u202etsrow")), 400,
           "method: control characters are not allowed (U+202E RIGHT-TO-LEFT OVERRIDE)"),
    Attack("a C1 control in the description", lambda s, u, a: post(s, "beta", u, "method=d&description=" + q("a\x9bb")),
           400, "description: control characters are not allowed (U+009B)"),
    Attack("a misspelt query parameter (the method would be lost)", lambda s, u, a: post(s, "beta", u, "methd=x"), 400,
           "query parameter 'methd': not one /api/v1/benchmarks/{benchmark}/phases/{phase}/submissions takes "
           "(it takes method, description)"),
    Attack("a query parameter given twice", lambda s, u, a: post(s, "beta", u, "method=x&method=" + q(SQL)), 400,
           "query parameter 'method': given 2 times; give it once"),
    Attack("a query parameter a listing does not take", lambda s, u, a: api(s, "/submissions?team=alpha",
                                                                            s.tokens["beta"]), 400,
           "query parameter 'team': not one /api/v1/submissions takes (it takes none)"),
    Attack("an oversized method", lambda s, u, a: post(s, "beta", u, "method=" + "m" * 129), 400, "at most 128"),
    Attack("an oversized description", lambda s, u, a: post(s, "beta", u, "method=d&description=" + "d" * 4001), 400,
           "at most 4000"),
    Attack("over the size limit, declared", lambda s, u, a: post(s, "beta", b"\0" * (LIMIT + 1)), 413,
           f"upload limit of {LIMIT} bytes"),
    Attack("a zip bomb", lambda s, u, a: post(s, "beta", zip_bomb()), 400, "upload.zip"),
    Attack("a PNG bomb", lambda s, u, a: post(s, "beta", replaced(png_bomb())), 400, "100000"),
    Attack("SQL in the method of a refused upload", lambda s, u, a: post(s, "beta", b"not a zip", "method=" + q(SQL)),
           400, "must be a zip archive"),
    Attack("SQL in the description of a refused upload", lambda s, u, a: post(s, "beta", b"not a zip",
                                                                              "method=d&description=" + q(SQL)),
           400, "must be a zip archive"),
    Attack("SQL in the phase", lambda s, u, a: post(s, "beta", u, phase=SQL), 404, "no phase"),
    Attack("SQL in the benchmark", lambda s, u, a: post(s, "beta", u, benchmark=SQL), 404, "no phase"),
    Attack("SQL in the leaderboard's phase", lambda s, u, a: api(s, f"/benchmarks/{BENCHMARK}/phases/{q(SQL)}/"
                                                                    "leaderboard", None), 404, "no phase"),
    Attack("an unknown benchmark", lambda s, u, a: post(s, "beta", u, benchmark="nope"), 404, "no phase"),
    Attack("an unknown phase", lambda s, u, a: post(s, "beta", u, phase="nope"), 404, "no phase 'nope'"),
    Attack("a closed phase", lambda s, u, a: post(s, "beta", u, phase="closed"), 403, "phase 'closed' is closed"),
    Attack("a body that is not a zip", lambda s, u, a: post(s, "beta", b"plain text"), 400, "must be a zip archive"),
    Attack("an empty body", lambda s, u, a: post(s, "beta", b""), 400, "upload.zip"),
    Attack("a truncated zip", lambda s, u, a: post(s, "beta", u[: len(u) // 2]), 400, "upload.zip"),
    Attack("a zip with an extra member", lambda s, u, a: post(s, "beta", members(**{"notes.txt": b"hi"})), 400,
           "notes.txt"),
    Attack("another dataset's dataset_id.txt", lambda s, u, a: post(s, "beta", upload_bytes(
        dataset_id="pv1:" + "0" * 64)), 400,
           "dataset_id.txt says pv1:"),
    Attack("a form content type", lambda s, u, a: post(s, "beta", u, content_type="multipart/form-data"), 415,
           "multipart/form-data"),
    Attack("a text content type", lambda s, u, a: post(s, "beta", u, content_type="text/plain"), 415, "text/plain"),
    Attack("a host endpoint with a team token", lambda s, u, a: api(s, "/host/submissions", s.tokens["alpha"]), 403,
           "host endpoint"),
    Attack("a host endpoint with no token", lambda s, u, a: api(s, "/host/submissions", None), 401, "HOST_TOKEN"),
    Attack("a replayed upload", lambda s, u, a: post(s, "alpha", u, "method=own"), 409, "was accepted as submission"),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_an_attack_is_refused_and_changes_nothing(served, upload, alphas_submission, attack):
    before = state(served)
    status, answer = attack.run(served, upload, alphas_submission)
    assert (status, set(answer)) == (attack.status, {"error"}), answer
    assert attack.needle in answer["error"]
    assert "/tmp/" not in answer["error"] and str(served.folder) not in answer["error"]
    assert state(served) == before


def test_sql_in_an_accepted_uploads_text_is_kept_as_text(served, upload):
    status, accepted = post(served, "beta", upload, f"method={q(SQL)}&description={q(SQL)}")
    assert status == 201
    view = served.api(f"/submissions/{accepted['id']}", "beta")[1]
    assert (view["method"], view["description"]) == (SQL, SQL)
    assert served.rows("submissions") == len(served.api("/host/submissions", served.host_token)[1]["submissions"])


def test_sql_in_a_team_name_is_refused_by_the_host_command(served):
    before = state(served)
    done = segbench_here("server", "add-team", SQL, "--db", served.db, check=False)
    assert done.returncode == 1 and "1 to 64 letters, digits" in done.stderr
    assert state(served) == before


def test_an_upload_streamed_past_the_limit_is_cut_off_before_its_end(served):
    """Chunked, with no Content-Length: the server must stop at the limit, not read 40 MB."""
    before = state(served)
    planned, sent, block = 200 * LIMIT, 0, b"\0" * 65536
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as connection:
        connection.sendall((f"POST /api/v1/benchmarks/{BENCHMARK}/phases/{PHASE}/submissions?method=big HTTP/1.1\r\n"
                            f"Host: 127.0.0.1\r\nAuthorization: Bearer {served.tokens['beta']}\r\n"
                            "Content-Type: application/zip\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
        answer = b""
        try:
            while sent < planned:
                connection.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n")
                sent += len(block)
                connection.setblocking(False)
                try:
                    answer += connection.recv(65536)
                except BlockingIOError:
                    pass
                connection.setblocking(True)
                if answer:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
        connection.settimeout(30)
        try:
            while b"\r\n\r\n" not in answer and (more := connection.recv(65536)):
                answer += more
        except (ConnectionResetError, TimeoutError):
            pass
    assert sent < planned / 4, f"the server read {sent} bytes"
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert state(served) == before


def test_oversized_headers_are_refused_unread(served):
    before = state(served)
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as connection:
        connection.sendall(b"GET /api/v1/phases HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
        answer = connection.recv(4096)
    assert re.match(rb"HTTP/1.1 (400|431) ", answer), answer[:200]
    assert state(served) == before


def signed_in(served: Deployment, team: str) -> tuple[requests.Session, str]:
    browser = requests.Session()
    csrf = re.search(r'name="csrf" value="([^"]+)"', browser.get(served.url + "/").text).group(1)
    assert browser.post(served.url + "/signin", data={"token": served.tokens[team], "csrf": csrf},
                        allow_redirects=False).status_code == 303
    return browser, re.search(r'name="csrf" value="([^"]+)"', browser.get(served.url + "/team").text).group(1)


@pytest.mark.parametrize("csrf", ["missing", "forged", "another session's"])
def test_a_form_upload_without_its_sessions_csrf_token_is_refused(served, upload, csrf):
    browser, own = signed_in(served, "beta")
    other = signed_in(served, "alpha")[1]
    sent = {"missing": {}, "forged": {"csrf": "A" * 43}, "another session's": {"csrf": other}}[csrf]
    before = state(served)
    answer = browser.post(served.url + "/team/upload", data={"phase": f"{BENCHMARK}/{PHASE}", "method": "x", **sent},
                          files={"upload": ("u.zip", upload, "application/zip")}, allow_redirects=False)
    assert answer.status_code == 403 and "CSRF token is missing or wrong" in answer.text
    assert state(served) == before and own != other


def test_signing_in_without_the_forms_csrf_token_is_refused(served):
    before = state(served)
    answer = requests.post(served.url + "/signin", data={"token": served.tokens["alpha"]}, allow_redirects=False)
    assert answer.status_code == 403 and "segbench_session" not in answer.headers.get("set-cookie", "")
    assert state(served) == before


def test_twenty_concurrent_uploads_of_one_team_take_exactly_the_quota(served, upload):
    before = served.rows("submissions")
    outcomes: list[int] = []

    def one(i: int) -> None:  # distinct method names: not replays of each other
        outcomes.append(post(served, "beta", upload, f"method=race{i}", phase="race")[0])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [201] * QUOTA + [429] * (20 - QUOTA)
    assert served.rows("submissions") == before + QUOTA
    assert post(served, "beta", upload, "method=late", phase="race")[0] == 429
