"""The first schema: settings, host tokens, teams, phases, submissions, browser sessions."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "host_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_upload_at", sa.DateTime(), nullable=True),
    )
    op.create_table(
        "phases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("benchmark", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("split", sa.String(64), nullable=False),
        sa.Column("data_dir", sa.Text(), nullable=False),
        sa.Column("manifest_path", sa.Text(), nullable=False),
        sa.Column("dataset_id", sa.String(128), nullable=False),
        sa.Column("floor_counts_sha256", sa.String(64), nullable=False),
        sa.Column("floor_results", sa.Text(), nullable=False),
        sa.Column("baseline_counts_sha256", sa.String(64), nullable=True),
        sa.Column("baseline_results", sa.Text(), nullable=True),
        sa.Column("opens_at", sa.DateTime(), nullable=True),
        sa.Column("closes_at", sa.DateTime(), nullable=True),
        sa.Column("quota_per_day", sa.Integer(), nullable=True),
        sa.Column("quota_total", sa.Integer(), nullable=True),
        sa.Column("selection", sa.Integer(), nullable=False),
        sa.Column("show_scores", sa.Boolean(), nullable=False),
        sa.Column("private_fraction", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("benchmark", "name"),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=False, index=True),
        sa.Column("phase_id", sa.Integer(), sa.ForeignKey("phases.id"), nullable=False, index=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("method", sa.String(128), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("upload_sha256", sa.String(64), nullable=False),
        sa.Column("upload_bytes", sa.BigInteger(), nullable=False),
        sa.Column("dataset_id", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False, index=True),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_expires", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("counts_sha256", sa.String(64), nullable=True),
        sa.Column("results", sa.Text(), nullable=True),
        sa.Column("uncertainty", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("scored_at", sa.DateTime(), nullable=True),
        sa.Column("code_version", sa.String(64), nullable=True),
    )
    op.create_table(
        "browser_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    for table in ("browser_sessions", "submissions", "phases", "teams", "host_tokens", "settings"):
        op.drop_table(table)
