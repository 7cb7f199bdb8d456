"""The database: an engine for an SQLAlchemy URL (SQLite by default, PostgreSQL deployed, the same
code) and its migration to the newest schema by the Alembic scripts shipped in the package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import SegbenchError

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_BUSY_MS = 30_000  # a writer waits this long for SQLite's one write lock before failing
# The web app answers on anyio's worker threads (40), each holding at most one connection at a time:
# a pool as large never makes a request wait for a connection (opened only when needed).
POOL = {"pool_size": 10, "max_overflow": 30}


def engine_for(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_MS / 1000, "check_same_thread": False}, **POOL)

        @event.listens_for(engine, "connect")
        def _pragmas(connection, _record) -> None:  # WAL: readers never wait for the one writer
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True, **POOL)  # a restarted PostgreSQL: stale connections replaced


def sessions(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine) -> str:
    """Bring the schema to the newest revision (creating it on an empty database); returns it."""
    config = alembic_config()
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as exc:
        raise SegbenchError(f"{engine.url!r}: cannot migrate the database ({exc.__class__.__name__}: {exc})") from None
    return ScriptDirectory.from_config(config).get_current_head()


def check_current(engine: Engine) -> None:
    """Refuse a database not at the newest schema (`segbench server init` migrates it)."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    except SQLAlchemyError as exc:
        raise SegbenchError(f"{engine.url!r}: cannot open the database ({exc.__class__.__name__})") from None
    if current != head:
        raise SegbenchError(f"{engine.url!r}: the database is at schema {current}, this server needs {head}: "
                            "run `segbench server init --db URL --store ...` to migrate it")
