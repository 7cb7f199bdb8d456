"""`make serve`: the hosted evaluation on the embedded default, on this machine.

A fresh deployment under --dir (SQLite, a local store): each embedded benchmark's test split
(config/config.yaml) as its hidden phase `test` (config/phases/), two demo teams, then a server
on 127.0.0.1:--port and one worker, each a process of its own (`segbench server run` /
`worker`). Prints each team's token (`token for TEAM: TOKEN`) and how to submit; Ctrl-C stops
every process it started."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from segbench.commands import cli
from segbench.commands.arguments import Parser, port_number
from segbench.errors import SegbenchError
from segbench.server.launch import start_server

ROOT = Path(__file__).resolve().parents[1]
TEAMS = ("demo-a", "demo-b")
PHASE = "test"


def segbench(*args: str) -> str:
    """What `segbench ARGS` prints, run in this process: the set-up's commands share one
    interpreter's start and imports (about 1 s a command as processes). Its error ends `make serve`."""
    status, out, err = cli.captured(list(args))
    if status != 0:
        sys.exit(err.strip() or f"segbench {args[0]} {args[1]} failed")
    return out


def interrupted(_signal, _frame) -> None:
    raise KeyboardInterrupt


def main() -> int:
    signal.signal(signal.SIGTERM, interrupted)  # a `kill` stops the processes too, as Ctrl-C does
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=port_number, default=8000)
    parser.add_argument("--dir", type=Path, default=Path("build/server"), help="the deployment's state (made afresh)")
    args = parser.parse_args()
    folder = args.dir.resolve()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = f"sqlite:///{folder / 'server.db'}"
    print(segbench("server", "init", "--db", db, "--store", str(folder / "store")).strip())
    benchmarks = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["benchmarks"]
    for name, entry in benchmarks.items():
        print(segbench("server", "add-phase", "--db", db, "--benchmark", name, "--phase", PHASE,
                       "--data", str(ROOT / entry["data"]), "--dataset-manifest", str(ROOT / entry["manifest"])).strip())
    tokens = [segbench("server", "add-team", team, "--db", db).strip() for team in TEAMS]
    processes = []
    try:
        server, url = start_server(db, log=folder / "server.log", port=args.port, cwd=ROOT)
        processes.append(server)
        with (folder / "worker.log").open("w") as log:
            processes.append(subprocess.Popen([sys.executable, "-m", "segbench", "server", "worker", "--db", db],
                                              cwd=ROOT, stdout=log, stderr=subprocess.STDOUT))
        print("\n".join(tokens))
        first = tokens[0].split(": ", 1)[1]
        print(f"""
serving {url} (boards: {url}/; logs in {folder}); Ctrl-C stops the server and the worker.
To submit (an upload as `segbench export` writes it):
  segbench export --benchmark painting-vision --dataset-manifest data_manifest.json --split test \\
      --predictions PREDICTIONS --out upload.zip
  segbench submit upload.zip --server {url} --token {first} --benchmark painting-vision --phase {PHASE} --wait
  segbench submissions --server {url} --token {first}
The public boards show the Ladder's released scores; to open a phase's private board:
  segbench server reveal --db {db} --benchmark painting-vision --phase {PHASE}""", flush=True)
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)
        return 1  # one of them stopped on its own: its log says why
    except KeyboardInterrupt:
        return 0
    except SegbenchError as error:
        sys.exit(f"make serve: {error}")
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    sys.exit(main())
