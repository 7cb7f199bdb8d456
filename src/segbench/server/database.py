"""The database: an engine for an SQLAlchemy URL (SQLite by default, PostgreSQL deployed, the same
code) and its migration to the newest schema by the Alembic scripts shipped in the package."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ..errors import SegbenchError

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_BUSY_MS = 30_000  # a writer waits this long for SQLite's one write lock before failing
# The web app answers on anyio's worker threads (40), each holding at most one connection at a time:
# a pool as large never makes a request wait for a connection (opened only when needed).
POOL = {"pool_size": 10, "max_overflow": 30}


URL_FORMS = "sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST[:PORT]/DATABASE"
# The drivers the package installs, by backend; a URL naming none gets its backend's (SQLAlchemy's
# own default for postgresql:// is psycopg2, which is not installed).
DRIVERS = {"sqlite": "pysqlite", "postgresql": "psycopg"}


def database_url(text: str) -> URL:
    """The SQLAlchemy URL `text` (--db or $SEGBENCH_DB) names, for a backend the server runs on."""
    try:
        url = make_url(text)
    except ArgumentError:  # the text itself may hold a password: not repeated
        raise SegbenchError(f"the database URL (--db or $SEGBENCH_DB) is not a URL; the forms: {URL_FORMS}") from None
    backend, driver = url.get_backend_name(), url.get_driver_name()
    shown = url.render_as_string(hide_password=True)
    if backend not in DRIVERS:
        raise SegbenchError(f"database URL {shown}: the server runs on {' or '.join(DRIVERS)}, not {backend!r}; "
                            f"the forms: {URL_FORMS}")
    if backend == "sqlite" and url.database in (None, "", ":memory:"):  # one process's own, no worker's
        raise SegbenchError(f"database URL {shown}: the server's SQLite database is a file: sqlite:///PATH")
    if "+" not in url.drivername:
        return url.set(drivername=f"{backend}+{DRIVERS[backend]}")
    if driver != DRIVERS[backend]:
        raise SegbenchError(f"database URL {shown}: the server connects to {backend} through {DRIVERS[backend]}, "
                            f"not {driver}: {backend}+{DRIVERS[backend]}:// or {backend}://")
    return url


def engine_for(text: str) -> Engine:
    url = database_url(text)
    if url.get_backend_name() == "sqlite":
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
