"""The version of what a phase's boards show (server/board_cache.py): bumped with every change a
board shows, so each server process rebuilds its kept boards exactly when they went stale."""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as phases:
        phases.add_column(sa.Column("board_version", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("phases") as phases:
        phases.drop_column("board_version")
