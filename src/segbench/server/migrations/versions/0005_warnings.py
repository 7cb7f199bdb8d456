"""What an accepted upload was warned of at intake, as `segbench check-submission` warns (frames
holding pixels predicted as void, counted as misses): kept with the submission for its team."""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as submissions:
        submissions.add_column(sa.Column("warnings", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as submissions:
        submissions.drop_column("warnings")
