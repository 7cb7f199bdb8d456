"""The public and private parts: the private part's results, the Ladder's decision per
submission, the team's selection, the phase's reveal."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

SUBMISSION_COLUMNS = (
    sa.Column("private_results", sa.Text(), nullable=True),
    sa.Column("private_uncertainty", sa.Text(), nullable=True),
    sa.Column("ladder_position", sa.Integer(), nullable=True),
    sa.Column("released", sa.Boolean(), nullable=True),
    sa.Column("public_score", sa.Float(), nullable=True),
    sa.Column("public_decimals", sa.Integer(), nullable=True),
    sa.Column("ladder_note", sa.String(128), nullable=True),
)


def upgrade() -> None:
    with op.batch_alter_table("phases") as phases:
        phases.add_column(sa.Column("floor_private_results", sa.Text(), nullable=True))
        phases.add_column(sa.Column("revealed_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("submissions") as submissions:
        for column in SUBMISSION_COLUMNS:
            submissions.add_column(column)
        submissions.add_column(sa.Column("selected", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as submissions:
        for name in ("selected", *(c.name for c in SUBMISSION_COLUMNS)):
            submissions.drop_column(name)
    with op.batch_alter_table("phases") as phases:
        phases.drop_column("revealed_at")
        phases.drop_column("floor_private_results")
