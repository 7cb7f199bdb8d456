"""The host's commands (`segbench server init | add-team | revoke-team | add-phase | run | worker`), each a
function of its arguments; segbench.commands reaches them through its table of subcommands."""

from __future__ import annotations

import tempfile
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ..errors import SegbenchError
from ..protocols.phases import load_phases, phases_path
from . import accounts
from .database import engine_for, migrate, sessions
from .deployment import STORE_KEY, Deployment, connect, verify_phases
from .hidden import open_hidden
from .intake import check
from .models import HostToken, Phase, Setting
from .scoring import as_json, score_phase_floor, score_upload
from .settings import DEFAULTS, Settings
from .store import open_store


def init(db_url: str, store_url: str) -> tuple[str, str | None]:
    """Create or migrate the database and record the store; returns (schema revision, the host
    token when this call made it: shown once, only its hash kept)."""
    engine = engine_for(db_url)
    revision = migrate(engine)
    open_store(store_url)  # refused here, not at the first upload, when it cannot be opened
    with sessions(engine)() as session:
        session.merge(Setting(key=STORE_KEY, value=store_url))
        session.commit()
        has_host = session.scalar(select(HostToken.id).limit(1)) is not None
        token = None if has_host else accounts.add_host_token(session)
    return revision, token


def add_team(db_url: str, name: str) -> str:
    deployment = connect(db_url)
    with deployment.sessions() as session:
        return accounts.add_team(session, name)


def revoke_team(db_url: str, name: str) -> None:
    """The team's token stops working at once; its browser sessions are closed."""
    deployment = connect(db_url)
    with deployment.sessions() as session:
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
    deployment = connect(db_url)
    hidden = open_hidden(benchmark, definition.split, data.resolve(), manifest.resolve())
    with tempfile.TemporaryDirectory(prefix="segbench-phase-") as folder:
        floor_sha, floor_document = score_phase_floor(deployment.store, hidden, Path(folder))
        baseline_sha = baseline_document = None
        if baseline is not None:
            check(hidden, baseline, str(baseline))
            baseline_sha, _, baseline_document = score_upload(deployment.store, hidden, baseline, "baseline",
                                                              Path(folder))
    phase = Phase.of(definition, data_dir=str(hidden.data), manifest_path=str(hidden.manifest),
                     dataset_id=hidden.dataset_id, floor_counts_sha256=floor_sha, floor_results=as_json(floor_document),
                     baseline_counts_sha256=baseline_sha,
                     baseline_results=None if baseline_document is None else as_json(baseline_document))
    with deployment.sessions() as session:
        session.add(phase)
        try:
            session.commit()
        except IntegrityError:
            raise SegbenchError(f"benchmark {benchmark} has a phase named {name!r} already") from None
    return phase


def serve(db_url: str, host: str, port: int, settings: Settings = DEFAULTS) -> None:
    import uvicorn

    from .app import create_app

    deployment = connect(db_url, settings)
    for line in verify_phases(deployment):
        print(f"phase {line}", flush=True)
    # No access log: a request line may carry a query string, and nothing a client sends is logged.
    uvicorn.run(create_app(deployment), host=host, port=port, access_log=False, log_level="warning")


def work(db_url: str, settings: Settings = DEFAULTS, once: bool = False) -> int:
    from .worker import run_worker

    deployment: Deployment = connect(db_url, settings)
    verify_phases(deployment)
    return run_worker(deployment, once)


def settings_of(options: dict) -> Settings:
    """The settings among command-line options (one per field, as commands.arguments makes them)."""
    from dataclasses import fields

    return Settings(**{f.name: options[f.name] for f in fields(Settings) if f.name in options})
