"""The host's commands (`segbench server ACTION`: commands/arguments.args_server lists them), each a
function of its arguments; segbench.commands reaches them through its table of subcommands
(`rescore` is server/rescore.py's)."""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ..errors import SegbenchError
from ..protocols.phases import load_phases, phases_path
from . import accounts, board_cache
from .database import engine_for, migrate, sessions
from .deployment import SECRET_KEY, STORE_KEY, Deployment, connect, connected, stored_setting, verify_phases
from .hidden import open_hidden
from .intake import check
from .launch import SERVING
from .models import HostToken, Phase, Setting, utcnow
from .parts import part_frames
from .rescore import rescore  # noqa: F401 (`segbench server rescore`, reached through this module)
from .scoring import reference_columns, score_phase_floor, score_upload
from .settings import DEFAULTS, Settings
from .store import keep, open_store


def init(db_url: str, store_url: str) -> tuple[str, str | None]:
    """Create or migrate the database, record the store and, the first time, the host secret that
    divides the phases' units into public and private parts; returns (schema revision, the host
    token when this call made it: shown once, only its hash kept)."""
    engine = engine_for(db_url)
    try:
        open_store(store_url)  # refused here (before the database is touched), not at the first upload
        revision = migrate(engine)
        with sessions(engine)() as session:
            session.merge(Setting(key=STORE_KEY, value=store_url))
            if stored_setting(session, SECRET_KEY) is None:  # never replaced: it would move units between the parts
                session.add(Setting(key=SECRET_KEY, value=secrets.token_hex(32)))
            session.commit()
            has_host = session.scalar(select(HostToken.id).limit(1)) is not None
            token = None if has_host else accounts.add_host_token(session)
    finally:
        engine.dispose()
    return revision, token


def add_team(db_url: str, name: str) -> str:
    with connected(db_url) as deployment, deployment.sessions() as session:
        return accounts.add_team(session, name)


def new_team_token(db_url: str, name: str) -> str:
    with connected(db_url) as deployment, deployment.sessions() as session:
        return accounts.new_team_token(session, name)


def revoke_team(db_url: str, name: str) -> None:
    """The team's token stops working at once; its browser sessions are closed."""
    with connected(db_url) as deployment, deployment.sessions() as session:
        accounts.revoke_team(session, name)


def add_phase(db_url: str, benchmark: str, name: str, data: Path, manifest: Path, baseline: Path | None = None,
              phases: Path | None = None) -> Phase:
    """Point phase `name` of `benchmark`, as its phases file defines it (default
    config/phases/<benchmark>.yaml), at its hidden split (data verified against the manifest), with
    the floor scored from the labels and, when given, the baseline upload (checked like any upload)
    scored too."""
    path = phases or phases_path(benchmark)
    defined = load_phases(path)
    if name not in defined:
        raise SegbenchError(f"{path}: no phase named {name!r} (it defines {sorted(defined)})")
    definition = defined[name]
    if definition.benchmark != benchmark:
        raise SegbenchError(f"{path}: the phases of {definition.benchmark}, not of {benchmark}")
    with connected(db_url) as deployment:
        hidden = open_hidden(benchmark, definition.split, data.resolve(), manifest.resolve())
        parts = part_frames(hidden, deployment.secret, definition.private_fraction)
        with tempfile.TemporaryDirectory(prefix="segbench-phase-") as folder:
            floor = score_phase_floor(deployment.store, hidden, Path(folder))
            scored_baseline = baseline_upload = None
            if baseline is not None:
                check(hidden, baseline, str(baseline))
                scored_baseline = score_upload(deployment.store, hidden, baseline, "baseline", Path(folder))
                baseline_upload = keep(deployment.store, baseline)  # kept for a later correction's re-score
        # The manifest is kept too: a correction (`segbench server rescore`) compares the next one with it.
        phase = Phase.of(definition, data_dir=str(hidden.data), manifest_path=str(hidden.manifest),
                         dataset_id=hidden.dataset_id, manifest_sha256=keep(deployment.store, hidden.manifest),
                         baseline_upload_sha256=baseline_upload,
                         **reference_columns(hidden, parts, floor, scored_baseline))
        with deployment.sessions() as session:
            session.add(phase)
            try:
                session.commit()
            except IntegrityError:
                raise SegbenchError(f"benchmark {benchmark} has a phase named {name!r} already") from None
        return phase


def reveal(db_url: str, benchmark: str, name: str) -> Phase:
    """Open phase `name`'s private board (every endpoint serves it from now on); a phase is
    revealed once, and its teams' selections are closed from then on."""
    with connected(db_url) as deployment, deployment.sessions() as session:
        phase = session.scalar(select(Phase).where(Phase.benchmark == benchmark, Phase.name == name))
        if phase is None:
            raise SegbenchError(f"no phase {name!r} of benchmark {benchmark!r}")
        if phase.private_fraction == 0:
            raise SegbenchError(f"phase {name!r} of {benchmark} has no private part (private_fraction 0)")
        if phase.revealed_at is not None:
            raise SegbenchError(f"phase {name!r} of {benchmark} was revealed at {phase.revealed_at.isoformat()}Z")
        phase.revealed_at = utcnow()
        board_cache.changed(session, phase.id)
        session.commit()
        return phase


def serve(db_url: str, host: str, port: int, settings: Settings = DEFAULTS, processes: int = 1) -> None:
    """Serve until stopped, in `processes` processes on one listening socket (server/processes.py)."""
    from .processes import run_processes

    smallest = min(settings.requests_per_minute, settings.uploads_per_hour)
    if not 1 <= processes <= smallest:  # each process counts 1/N of each rate limit: at least one of each
        raise SegbenchError(f"--processes {processes}: from 1 to the smallest rate limit ({smallest})")
    deployment = connect(db_url, settings)
    for line in verify_phases(deployment):  # the splits verified once, here; forked processes inherit them
        print(f"phase {line}", flush=True)
    # Bound here, so that port 0 (any free port) can be announced before the first request: who
    # started the server reads the address from this line, with no port probed and freed first.
    try:
        listening = socket.create_server((host, port))
    except OSError as exc:  # in use, an address of no interface here, a port below 1024 without the right
        raise SegbenchError(f"--host {host} --port {port}: cannot listen there ({os.strerror(exc.errno) if exc.errno else exc})") from None
    print(f"{SERVING}http://{host}:{listening.getsockname()[1]}", flush=True)
    if processes == 1:
        serve_on(deployment, listening, 1)
        return
    deployment.engine.dispose()  # no connection crosses a fork: each process connects on its own
    if run_processes(processes, lambda: serve_on(connect(db_url, settings), listening, processes)) != 0:
        raise SegbenchError("a server process stopped on its own (its error is above); the others were stopped")


def serve_on(deployment: Deployment, listening: socket.socket, processes: int) -> None:
    import uvicorn

    from .app import create_app
    from .http_protocol import PROTOCOL

    # No access log: a request line may carry a query string, and nothing a client sends is logged.
    # The event loop: uvloop where installed (uvicorn's "auto").
    config = uvicorn.Config(create_app(deployment, processes), http=PROTOCOL, access_log=False, log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


def work(db_url: str, settings: Settings = DEFAULTS, once: bool = False) -> int:
    from .worker import run_worker

    deployment: Deployment = connect(db_url, settings)
    verify_phases(deployment)
    return run_worker(deployment, once)


def settings_of(options: dict) -> Settings:
    """The settings among command-line options (one per field, as commands.arguments makes them)."""
    from dataclasses import fields

    return Settings(**{f.name: options[f.name] for f in fields(Settings) if f.name in options})
