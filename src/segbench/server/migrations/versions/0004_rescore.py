"""Label corrections: the phase's manifest and baseline upload kept in the store, the superseded
datasets of a phase, and a submission's re-score (the one it re-scores, the frames it has no
mask for)."""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as phases:
        phases.add_column(sa.Column("manifest_sha256", sa.String(64), nullable=True))
        phases.add_column(sa.Column("baseline_upload_sha256", sa.String(64), nullable=True))
    with op.batch_alter_table("submissions") as submissions:
        submissions.add_column(sa.Column("rescore_of", sa.String(32), nullable=True))
        submissions.add_column(sa.Column("not_predicted", sa.Text(), nullable=True))
        submissions.create_foreign_key("fk_submissions_rescore_of", "submissions", ["rescore_of"], ["id"])
        submissions.create_index("ix_submissions_rescore_of", ["rescore_of"])
    op.create_table(
        "superseded_datasets",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("phase_id", sa.Integer(), sa.ForeignKey("phases.id"), nullable=False),
        sa.Column("dataset_id", sa.String(128), nullable=False),
        sa.Column("manifest_sha256", sa.String(64), nullable=False),
        sa.Column("floor_counts_sha256", sa.String(64), nullable=False),
        sa.Column("floor_results", sa.Text(), nullable=False),
        sa.Column("floor_private_results", sa.Text(), nullable=True),
        sa.Column("baseline_counts_sha256", sa.String(64), nullable=True),
        sa.Column("baseline_results", sa.Text(), nullable=True),
        sa.Column("changes", sa.Text(), nullable=False),
        sa.Column("superseded_by", sa.String(128), nullable=False),
        sa.Column("superseded_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("phase_id", "dataset_id"),
    )
    op.create_index("ix_superseded_datasets_phase_id", "superseded_datasets", ["phase_id"])


def downgrade() -> None:
    op.drop_index("ix_superseded_datasets_phase_id", "superseded_datasets")
    op.drop_table("superseded_datasets")
    with op.batch_alter_table("submissions") as submissions:
        submissions.drop_index("ix_submissions_rescore_of")
        submissions.drop_constraint("fk_submissions_rescore_of", type_="foreignkey")
        submissions.drop_column("not_predicted")
        submissions.drop_column("rescore_of")
    with op.batch_alter_table("phases") as phases:
        phases.drop_column("baseline_upload_sha256")
        phases.drop_column("manifest_sha256")
