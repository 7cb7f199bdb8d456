"""One deployment as a process sees it: the database (migrated by `segbench server init`), the
store and the host secret recorded in it, and the hidden split of each phase, verified once per
process, with its public and private parts."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from .. import __version__
from ..errors import SegbenchError
from ..stages.truth import KeptLabels
from .database import check_current, engine_for, sessions
from .hidden import HiddenSplit, hidden_split
from .models import Phase, Setting
from .parts import part_frames
from .settings import DEFAULTS, Settings
from .store import Store, open_store

STORE_KEY = "store_url"
# The key of the keyed hash that divides each phase's units into its public and private parts
# (hex): it must be usable, so it is kept as it is (no endpoint serves the settings table).
SECRET_KEY = "division_secret"
CODE_VERSION = f"segbench {__version__}"


@dataclass
class Deployment:
    engine: Engine
    sessions: sessionmaker[Session]
    store: Store
    settings: Settings
    secret: bytes
    # The hidden labels this process keeps decoded for its scoring (a worker's: stages.truth).
    labels: KeptLabels = field(init=False)

    def __post_init__(self) -> None:
        self.labels = KeptLabels(self.settings.kept_labels_mib << 20)

    def hidden(self, phase: Phase) -> HiddenSplit:
        return hidden_split(phase.benchmark, phase.split, phase.data_dir, phase.manifest_path, phase.dataset_id)

    def parts(self, phase: Phase) -> dict[str, tuple[str, ...]]:
        """part -> its sorted frame ids (core.public_private with this deployment's secret)."""
        return part_frames(self.hidden(phase), self.secret, phase.private_fraction)


def stored_setting(session: Session, key: str) -> str | None:
    found = session.get(Setting, key)
    return None if found is None else found.value


def connect(db_url: str, settings: Settings = DEFAULTS) -> Deployment:
    engine = engine_for(db_url)
    check_current(engine)
    factory = sessions(engine)
    with factory() as session:
        store_url, secret = stored_setting(session, STORE_KEY), stored_setting(session, SECRET_KEY)
    if store_url is None or secret is None:
        raise SegbenchError(f"{engine.url!r}: no store or host secret recorded: run `segbench server init --db URL "
                            "--store ...`")
    return Deployment(engine, factory, open_store(store_url), settings, bytes.fromhex(secret))


@contextmanager
def connected(db_url: str, settings: Settings = DEFAULTS) -> Iterator[Deployment]:
    """The deployment for one command's use: its database connections closed when it is done."""
    deployment = connect(db_url, settings)
    try:
        yield deployment
    finally:
        deployment.engine.dispose()


def verify_phases(deployment: Deployment) -> list[str]:
    """Open every phase's hidden split (its data checked against its manifest and dataset_id) at
    start, so a server never serves a phase whose data changed under it."""
    with deployment.sessions() as session:
        phases = session.scalars(select(Phase).order_by(Phase.id)).all()
    return [f"{p.benchmark}/{p.name}: {deployment.hidden(p).dataset_id}" for p in phases]
