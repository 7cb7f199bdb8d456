"""One deployment as a process sees it: the database (migrated by `segbench server init`), the
store named in it, and the hidden split of each phase, verified once per process."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from .. import __version__
from ..errors import SegbenchError
from .database import check_current, engine_for, sessions
from .hidden import HiddenSplit, hidden_split
from .models import Phase, Setting
from .settings import DEFAULTS, Settings
from .store import Store, open_store

STORE_KEY = "store_url"
CODE_VERSION = f"segbench {__version__}"


@dataclass
class Deployment:
    engine: Engine
    sessions: sessionmaker[Session]
    store: Store
    settings: Settings

    def hidden(self, phase: Phase) -> HiddenSplit:
        return hidden_split(phase.benchmark, phase.split, phase.data_dir, phase.manifest_path, phase.dataset_id)


def stored_setting(session: Session, key: str) -> str | None:
    found = session.get(Setting, key)
    return None if found is None else found.value


def connect(db_url: str, settings: Settings = DEFAULTS) -> Deployment:
    engine = engine_for(db_url)
    check_current(engine)
    factory = sessions(engine)
    with factory() as session:
        store_url = stored_setting(session, STORE_KEY)
    if store_url is None:
        raise SegbenchError(f"{engine.url!r}: no store recorded: run `segbench server init --db URL --store ...`")
    return Deployment(engine, factory, open_store(store_url), settings)


def verify_phases(deployment: Deployment) -> list[str]:
    """Open every phase's hidden split (its data checked against its manifest and dataset_id) at
    start, so a server never serves a phase whose data changed under it."""
    with deployment.sessions() as session:
        phases = session.scalars(select(Phase).order_by(Phase.id)).all()
    return [f"{p.benchmark}/{p.name}: {deployment.hidden(p).dataset_id}" for p in phases]
