"""Blum & Hardt's boosting attack against a naive public board and against the Ladder.

    .venv/bin/python benchmarks/ladder_attack.py [--walls 44] [--frames-per-wall 10]
        [--mixes 400] [--attacks 40] [--resamples 1000] [--json build/ladder_attack.json]
        [--server FOLDER]

1. draws a Painting Vision test split of WALLS walls of FRAMES_PER_WALL frames with the embedded
   generator's scenes (segbench.synthetic.attack_data: labels only, 128x96 crops of each
   wall's scene) and two honest prediction sets A and B (the labels with wrong-class rectangles
   over 0-60% of each frame, each set better on different frames, equally good on each wall);
2. divides the walls into a public and a private half by the keyed hash (core/public_private.py);
3. replays the boosting attack (core/boosting_attack.py) ATTACKS times (coin seeds 0, 1, ...),
   MIXES mixes each: against a naive board (every submission's exact public score released),
   keeping the mixes that score above the reference; against the Ladder, keeping the mixes it
   released as new bests (Blum & Hardt's attack on the Ladder); and against the Ladder with the
   naive board's rule (which, once the Ladder has released one mix, keeps every later one);
4. prints, per board and attack, the kept mixes, the public and private gains of the final
   submission over the reference (the honest set with the better released public score), the
   gap between them and the gap's standard error; and per board the means over the attacks,
   each with its standard error over them (the attacks' standard deviation over sqrt(ATTACKS)),
   and the mean gap over the mean gap SE.

With --server FOLDER, the Ladder's row (Blum & Hardt's attack) is also replayed through a
server's HTTP API, as a team would: a deployment in FOLDER (`segbench server init`, SQLite and a
local store; the split written there as a Painting Vision dataset, its phase `attack` with no
quota; one team per attack; `segbench server run` and a worker), every submission a zip of the
attacker's masks uploaded with segbench.server.client, its release read off the public board
(a new best: the team's entry changed). The gains are measured from the counts the server
stored for the final submission and the reference. The engine's rows then use the server's
host secret (its division of the walls), so the two replays see the same parts; the script
prints whether they agree (the same kept mixes, reference and gains in every attack).

Targets (issue 23), on the means over the attacks: on the naive board the public gain is well
above the private one (the mean gap more than 3 mean gap SEs); on the Ladder, against Blum &
Hardt's attack, the public gain within one standard error of the private gain (mean gap at
most one mean gap SE). Each is printed as met or MISSED (as the other benchmarks print theirs);
the script's status is 0 either way.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image

from segbench.core.boosting_attack import AttackResult, Board, Release, boosting_attack, ladder_board, measure, naive_board, play
from segbench.server import client
from segbench.server.deployment import connect
from segbench.server.launch import start_server
from segbench.server.models import Phase, Submission
from segbench.server.parts import PRIVATE, PUBLIC, stored_headline
from segbench.synthetic.attack_data import FRAME_SIZE, attack_parts, attack_split, honest_predictions

SECRET = b"ladder-attack-benchmark"  # the host secret choosing the private walls
PRIVATE_FRACTION = 0.5
ERROR_SHARE = (0.0, 0.6)
SE_SEED = 0  # the bootstrap draws of the Ladder and of the gains' standard errors


NAIVE, LADDER, LADDER_THRESHOLD = "naive", "ladder", "ladder, naive rule"


def boards() -> dict[str, tuple[Callable[[], Board], bool]]:
    """name -> (a fresh board, whether the attacker keeps only the board's new bests)."""
    return {
        NAIVE: (naive_board, False),
        LADDER: (ladder_board, True),
        LADDER_THRESHOLD: (ladder_board, False),
    }


def in_errors(gap: float, error: float) -> float:
    """The gap in standard errors (a gap of 0 with an SE of 0, no kept mix, is 0)."""
    return gap / error if error else 0.0


def line(name: str, seed: int, mixes: int, result: AttackResult, seconds: float) -> str:
    return (f"{name:18s} attack {seed}: kept {result.kept:4d}/{mixes}  reference {result.reference}  "
            f"public {result.public_gain:+.4f}  private {result.private_gain:+.4f}  "
            f"gap {result.gap:+.4f} (SE {result.gap_se:.4f}, {in_errors(result.gap, result.gap_se):+.2f} SE)  [{seconds:.1f} s]")


def run(walls: int, frames_per_wall: int, mixes: int, attacks: int, resamples: int, secret: bytes = SECRET,
        report=print) -> dict[str, list[AttackResult]]:
    public, private = attack_parts(walls, frames_per_wall, secret, PRIVATE_FRACTION, ERROR_SHARE)
    results: dict[str, list[AttackResult]] = {}
    for name, (make, new_bests) in boards().items():
        for seed in range(attacks):
            started = time.perf_counter()
            result = boosting_attack(make(), public, private, mixes, seed, resamples, SE_SEED, new_bests)
            results.setdefault(name, []).append(result)
            report(line(name, seed, mixes, result, time.perf_counter() - started))
    return results


SERVER_BENCHMARK, SERVER_PHASE = "painting-vision", "attack"
SERVER_LADDER = "ladder, server"
PHASES = f"""benchmark: {SERVER_BENCHMARK}
phases:
  - name: {SERVER_PHASE}
    split: test
    selection: 1
    show_scores: true
    private_fraction: {PRIVATE_FRACTION}
"""
UNLIMITED = ("--uploads-per-hour", "1000000", "--requests-per-minute", "1000000")


def segbench(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "segbench", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"segbench {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask).save(buffer, format="PNG")
    return buffer.getvalue()


def write_split(folder: Path, walls: int, frames_per_wall: int) -> tuple[Path, Path]:
    """The attack's split as a Painting Vision dataset (every frame a test frame; a grey image,
    which the attack never looks at) and its manifest."""
    split = attack_split(walls, frames_per_wall)
    data = folder / "data"
    for sub in ("images", "labels"):
        (data / sub).mkdir(parents=True)
    grey = Image.new("RGB", FRAME_SIZE, (128, 128, 128))
    rows = ["frame_id,wall_id,split,lighting"]
    for frame_id, label in zip(split.frame_ids, split.labels):
        grey.save(data / "images" / f"{frame_id}.jpg", format="JPEG")
        (data / "labels" / f"{frame_id}.png").write_bytes(png(label))
        rows.append(f"{frame_id},{split.groups[frame_id]},test,lit_from_left")
    (data / "frames.csv").write_text("\n".join(rows) + "\n")
    manifest = folder / "manifest.json"
    segbench("manifest", "--benchmark", SERVER_BENCHMARK, "--data", str(data), "--out", str(manifest))
    return data, manifest


@contextmanager
def deployment(folder: Path, walls: int, frames_per_wall: int, teams: int, resamples: int) -> Iterator[tuple[str, str, dict]]:
    """(server URL, database URL, team name -> token) of a fresh local deployment in `folder`,
    serving the attack's split as phase `attack`, with a server and a worker running."""
    if folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"--server {folder}: not empty; the deployment needs an empty or absent folder")
    folder.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{folder / 'server.db'}"
    segbench("server", "init", "--db", db, "--store", str(folder / "store"))
    data, manifest = write_split(folder, walls, frames_per_wall)
    (folder / f"{SERVER_BENCHMARK}.yaml").write_text(PHASES)
    segbench("server", "add-phase", "--db", db, "--benchmark", SERVER_BENCHMARK, "--phase", SERVER_PHASE,
             "--data", str(data), "--dataset-manifest", str(manifest), "--phases", str(folder / f"{SERVER_BENCHMARK}.yaml"))
    tokens = {}
    for index in range(teams):
        name = f"attacker-{index}"
        tokens[name] = segbench("server", "add-team", name, "--db", db).strip().split(": ", 1)[1]
    processes = []
    try:
        server, url = start_server(db, *UNLIMITED, "--resamples", str(resamples), log=folder / "run.log")
        processes.append(server)
        processes.append(subprocess.Popen([sys.executable, "-m", "segbench", "server", "worker", "--db", db, *UNLIMITED,
                                           "--resamples", str(resamples), "--poll-seconds", "0.05"],
                                          stdout=(folder / "worker.log").open("w"), stderr=subprocess.STDOUT))
        yield url, db, tokens
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def server_submit(url: str, team: str, token: str, uploads: Path, walls: int, frames_per_wall: int,
                  ids: list[str]) -> Callable[[np.ndarray], Release]:
    """A team's submissions through the API: the zip of its masks (B's where chosen, else A's),
    uploaded and waited for; the release is the team's entry on the public board, a new best
    when it changed. Each submission's id is appended to `ids`."""
    split = attack_split(walls, frames_per_wall)
    masks = [[png(mask) for mask in masks] for masks in honest_predictions(split, ERROR_SHARE)]
    dataset_id = json.loads((uploads.parent / "manifest.json").read_text())["dataset_id"]
    board = f"/api/v1/benchmarks/{SERVER_BENCHMARK}/phases/{SERVER_PHASE}/leaderboard"
    shown: list[float | None] = [None]

    def submit(from_b: np.ndarray) -> Release:
        path = uploads / f"{team}-{len(ids)}.zip"
        with zipfile.ZipFile(path, "w") as upload:
            for index, frame_id in enumerate(split.frame_ids):
                upload.writestr(f"{frame_id}.png", masks[int(from_b[index])][index])
            upload.writestr("dataset_id.txt", dataset_id + "\n")
        accepted = client.submit(url, token, SERVER_BENCHMARK, SERVER_PHASE, path, method=f"mix {len(ids)}")
        path.unlink()
        ids.append(accepted["id"])
        view = client.wait(url, token, accepted["id"], timeout=600, poll=0.05)
        if view["status"] != "scored":
            raise SystemExit(f"submission {accepted['id']} was not scored: {view['error']}")
        entries = [e for g in client.request(url, token, board)["groups"] for e in g["entries"] if e["team"] == team]
        score = entries[0]["headline"]["value"] if entries else None
        new_best = score != shown[0]
        shown[0] = score
        return Release(score, new_best)

    return submit


def server_run(folder: Path, walls: int, frames_per_wall: int, mixes: int, attacks: int, resamples: int,
               report=print) -> tuple[bytes, list[AttackResult]]:
    """(the deployment's secret, the Ladder row's results) of Blum & Hardt's attack through the API."""
    results = []
    with deployment(folder, walls, frames_per_wall, attacks, resamples) as (url, db, tokens):
        host = connect(db)
        with host.sessions() as session:
            phase = session.query(Phase).filter_by(name=SERVER_PHASE).one()
        hidden, parts = host.hidden(phase), host.parts(phase)
        uploads = folder / "uploads"
        uploads.mkdir()

        def stored(submission_id: str, part: str):
            """The headline data of the counts the server stored for the submission, on the part."""
            with host.sessions() as session:
                sha = session.get(Submission, submission_id).counts_sha256
            return stored_headline(host.store, hidden, sha, parts[part])

        for seed, (team, token) in enumerate(tokens.items()):
            started = time.perf_counter()
            ids: list[str] = []
            submit = server_submit(url, team, token, uploads, walls, frames_per_wall, ids)
            played = play(submit, len(hidden.groups), mixes, seed, keep_new_best=True)
            submit(played.final)
            final, reference = ids[-1], ids[int(played.reference_is_b)]
            result = measure(played, *((stored(final, part), stored(reference, part)) for part in (PUBLIC, PRIVATE)),
                             resamples, SE_SEED)
            results.append(result)
            report(line(SERVER_LADDER, seed, mixes, result, time.perf_counter() - started))
        return host.secret, results


def mean_and_error(values: list[float]) -> tuple[float, float]:
    """The mean over the attacks and its standard error (0 for one attack)."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.mean(values), spread / len(values) ** 0.5


FIGURES = {"kept": lambda r: r.kept, "public_gain": lambda r: r.public_gain, "private_gain": lambda r: r.private_gain,
           "gap": lambda r: r.gap, "gap_se": lambda r: r.gap_se}


def summary(results: dict[str, list[AttackResult]]) -> dict[str, dict[str, float]]:
    """Per board, each figure's mean over the attacks and that mean's standard error."""
    out = {}
    for name, runs in results.items():
        figures = {}
        for figure, of in FIGURES.items():
            figures[figure], figures[f"{figure}_error"] = mean_and_error([of(r) for r in runs])
        out[name] = figures
    return out


def targets(means: dict[str, dict[str, float]]) -> dict[str, bool]:
    naive, ladder = means[NAIVE], means[LADDER]
    return {"naive: gap > 3 SE": naive["gap"] > 3 * naive["gap_se"],
            "ladder: |gap| <= 1 SE": abs(ladder["gap"]) <= ladder["gap_se"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walls", type=int, default=44)
    parser.add_argument("--frames-per-wall", type=int, default=10)
    parser.add_argument("--mixes", type=int, default=400)
    parser.add_argument("--attacks", type=int, default=40)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--server", type=Path, metavar="FOLDER",
                        help="also replay the Ladder's row through a server deployed in FOLDER (absent or empty)")
    args = parser.parse_args()
    print(f"{args.walls} walls x {args.frames_per_wall} frames, private fraction {PRIVATE_FRACTION}, "
          f"{args.mixes} mixes, {args.attacks} attacks, {args.resamples} resamples")
    secret, served = SECRET, None
    if args.server:
        secret, served = server_run(args.server, args.walls, args.frames_per_wall, args.mixes, args.attacks,
                                    args.resamples)
    results = run(args.walls, args.frames_per_wall, args.mixes, args.attacks, args.resamples, secret)
    if served is not None:
        agree = [(r.kept, r.reference, r.public_gain, r.public_se, r.private_gain, r.private_se) ==
                 (e.kept, e.reference, e.public_gain, e.public_se, e.private_gain, e.private_se)
                 for r, e in zip(served, results[LADDER])]
        print(f"server and engine: {'the same' if all(agree) else 'DIFFERENT'} kept mixes, reference and gains "
              f"in {sum(agree)} of {len(agree)} attacks")
        results[SERVER_LADDER] = served
    means = summary(results)
    for name, mean in means.items():
        print(f"{name:18s} mean: kept {mean['kept']:.1f}  public {mean['public_gain']:+.4f} ± {mean['public_gain_error']:.4f}  "
              f"private {mean['private_gain']:+.4f} ± {mean['private_gain_error']:.4f}  "
              f"gap {mean['gap']:+.4f} ± {mean['gap_error']:.4f} (SE {mean['gap_se']:.4f}: "
              f"{in_errors(mean['gap'], mean['gap_se']):+.2f} ± {in_errors(mean['gap_error'], mean['gap_se']):.2f} SE)")
    met = targets(means)
    for target, ok in met.items():
        print(f"target {target}: {'met' if ok else 'MISSED'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"arguments": {k: str(v) for k, v in vars(args).items()},
                                         "attacks": {n: [vars(r) for r in runs] for n, runs in results.items()},
                                         "means": means, "targets": met}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
