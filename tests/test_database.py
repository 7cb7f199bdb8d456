"""server/database.py: which database URLs the server takes, and the driver each one gets."""

from __future__ import annotations

import pytest

from segbench.errors import SegbenchError
from segbench.server.database import database_url


@pytest.mark.parametrize(("text", "driver"), [
    ("postgresql://u:pw@db.example:5433/board", "postgresql+psycopg"),  # SQLAlchemy's own default: psycopg2
    ("postgresql+psycopg://u:pw@db.example:5433/board", "postgresql+psycopg"),
    ("sqlite:////srv/board/server.db", "sqlite+pysqlite"),
    ("sqlite+pysqlite:///server.db", "sqlite+pysqlite"),
])
def test_a_url_gets_the_installed_driver_of_its_backend(text, driver):
    url = database_url(text)
    assert url.drivername == driver
    assert url.render_as_string(hide_password=False).split("://", 1)[1] == text.split("://", 1)[1]


@pytest.mark.parametrize("text", ["postgresql+psycopg2://u:s3cret@h/db", "mysql://u:s3cret@h/db",
                                  "postgresql+asyncpg://u:s3cret@h/db"])
def test_a_refused_url_is_shown_without_its_password(text):
    with pytest.raises(SegbenchError) as refused:
        database_url(text)
    assert "s3cret" not in str(refused.value) and "u:***@h/db" in str(refused.value)


@pytest.mark.parametrize("text", ["", "server.db", "postgres ql://u:s3cret@h/db"])
def test_text_that_is_no_url_is_not_repeated(text):
    with pytest.raises(SegbenchError, match=r"^the database URL \(--db or \$SEGBENCH_DB\) is not a URL; the forms: "
                                            r"sqlite:///PATH or postgresql\+psycopg://") as refused:
        database_url(text)
    assert "s3cret" not in str(refused.value)


def test_a_plain_postgresql_url_connects_through_psycopg():
    from server_fixtures import postgres_url
    from sqlalchemy import text

    from segbench.server.database import engine_for

    engine = engine_for(postgres_url().replace("postgresql+psycopg://", "postgresql://", 1))
    try:
        with engine.connect() as connection:
            assert connection.execute(text("select 1")).scalar_one() == 1
    finally:
        engine.dispose()
