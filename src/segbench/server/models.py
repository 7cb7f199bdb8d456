"""The server's tables, as SQLAlchemy 2 ORM classes. The schema itself is made by the Alembic
migrations (migrations/versions), which a test compares with these classes.

Times are naive UTC (`utcnow`): SQLite keeps no time zone, and one convention serves both engines."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from ..core.phase import Phase as PhaseDefinition

# A submission's life: accepted as QUEUED; a worker's claim makes it SCORING (with a lease); the
# result makes it SCORED, a refusal by the scorer FAILED. A re-score (server/rescore.py) of an upload
# that has no mask for a frame added to the split since makes it INCOMPLETE for the new data.
QUEUED, SCORING, SCORED, FAILED, INCOMPLETE = "queued", "scoring", "scored", "failed", "incomplete"
STATUSES = (QUEUED, SCORING, SCORED, FAILED, INCOMPLETE)


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def aware(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.replace(tzinfo=timezone.utc)


def naive(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Setting(Base):
    """The deployment's own facts, written by `segbench server init` (e.g. the store's URL)."""

    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class HostToken(Base):
    __tablename__ = "host_tokens"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Team(Base):
    __tablename__ = "teams"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # Touched by every accepting transaction first: the row lock that serialises one team's
    # uploads, so its quota is checked and consumed atomically (PostgreSQL and SQLite alike).
    last_upload_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Phase(Base):
    """A phase of a benchmark: its definition as the host's phases file gave it when the phase was
    added (core.phase.Phase's fields), and its hidden split: where the host keeps its data and
    manifest, the floor's and the baseline's counts."""

    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("benchmark", "name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    benchmark: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(64))
    split: Mapped[str] = mapped_column(String(64))
    data_dir: Mapped[str] = mapped_column(Text)
    manifest_path: Mapped[str] = mapped_column(Text)
    dataset_id: Mapped[str] = mapped_column(String(128))
    floor_counts_sha256: Mapped[str] = mapped_column(String(64))  # the floor's per-frame counts, in the store
    floor_results: Mapped[str] = mapped_column(Text)  # JSON: the floor's metrics on the public part
    floor_private_results: Mapped[str | None] = mapped_column(Text, nullable=True)  # on the private part (None: none)
    # The host's baseline upload, scored when the phase is added (None: no baseline).
    baseline_counts_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    baseline_results: Mapped[str | None] = mapped_column(Text, nullable=True)  # on the public part
    # The manifest and the baseline upload as they were added, kept in the store for a later
    # correction of the labels (None: added before schema 0004, or no baseline).
    manifest_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    baseline_upload_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    opens_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    closes_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    quota_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    quota_total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    selection: Mapped[int] = mapped_column(Integer, default=1)
    show_scores: Mapped[bool] = mapped_column(Boolean, default=True)
    private_fraction: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # Set by `segbench server reveal`: from then on the private board is served (None: hidden).
    revealed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # Bumped in the transaction of every change the phase's boards show (server/board_cache.py).
    board_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    def definition(self) -> PhaseDefinition:
        return PhaseDefinition(name=self.name, benchmark=self.benchmark, split=self.split, start=aware(self.opens_at),
                               end=aware(self.closes_at), quota_per_day=self.quota_per_day,
                               quota_total=self.quota_total, selection=self.selection, show_scores=self.show_scores,
                               private_fraction=self.private_fraction)

    @classmethod
    def of(cls, definition: PhaseDefinition, **hidden) -> Phase:
        return cls(benchmark=definition.benchmark, name=definition.name, split=definition.split,
                   opens_at=naive(definition.start), closes_at=naive(definition.end),
                   quota_per_day=definition.quota_per_day, quota_total=definition.quota_total,
                   selection=definition.selection, show_scores=definition.show_scores,
                   private_fraction=definition.private_fraction, **hidden)


class Submission(Base):
    __tablename__ = "submissions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # random: an id reveals nothing of others
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    method: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(Text)
    upload_sha256: Mapped[str] = mapped_column(String(64))
    upload_bytes: Mapped[int] = mapped_column(BigInteger)
    dataset_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_expires: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    counts_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # JSON, on the public part: every report, as `segbench metrics`; the bootstrap, as `segbench uncertainty`.
    results: Mapped[str | None] = mapped_column(Text, nullable=True)
    uncertainty: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The same on the private part (None: the phase has none); served only after the reveal.
    private_results: Mapped[str | None] = mapped_column(Text, nullable=True)
    private_uncertainty: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The public board's Ladder (core.ladder), decided when the result is written: the position of
    # this submission in its team's sequence for the phase and dataset, whether it became the team's
    # best, the team's released public score after it (rounded to `public_decimals`), the note.
    ladder_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    released: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    public_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    public_decimals: Mapped[int | None] = mapped_column(Integer, nullable=True)
    ladder_note: Mapped[str | None] = mapped_column(String(128), nullable=True)
    # Chosen by the team for the private ranking (POST .../select); none chosen: core.ladder.default_selection.
    selected: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    scored_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    code_version: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # A re-score after a label correction is a submission of its own on the new dataset_id: the
    # same upload, team, method and submission time as the submission it re-scores (`rescore_of`),
    # its counts those of the original but for the frames whose labels changed or were added.
    rescore_of: Mapped[str | None] = mapped_column(ForeignKey("submissions.id"), nullable=True, index=True)
    # JSON list: the frames of the split that the upload has no mask for (status INCOMPLETE).
    not_predicted: Mapped[str | None] = mapped_column(Text, nullable=True)
    # JSON list: what the intake warned of, as `segbench check-submission` does (void pixels); None: none.
    warnings: Mapped[str | None] = mapped_column(Text, nullable=True)

    team: Mapped[Team] = relationship()
    phase: Mapped[Phase] = relationship()


class SupersededDataset(Base):
    """A phase's earlier hidden data, replaced by a label correction (`segbench server rescore`):
    what its board still needs (its manifest in the store, its floor's and baseline's numbers),
    what the correction changed and when, and the dataset_id that replaced it."""

    __tablename__ = "superseded_datasets"
    __table_args__ = (UniqueConstraint("phase_id", "dataset_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id"), index=True)
    dataset_id: Mapped[str] = mapped_column(String(128))
    manifest_sha256: Mapped[str] = mapped_column(String(64))
    floor_counts_sha256: Mapped[str] = mapped_column(String(64))
    floor_results: Mapped[str] = mapped_column(Text)
    floor_private_results: Mapped[str | None] = mapped_column(Text, nullable=True)
    baseline_counts_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    baseline_results: Mapped[str | None] = mapped_column(Text, nullable=True)
    changes: Mapped[str] = mapped_column(Text)  # JSON: core.label_changes.LabelChanges.as_dict()
    superseded_by: Mapped[str] = mapped_column(String(128))
    superseded_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class BrowserSession(Base):
    """A signed-in browser: the cookie holds a random id whose hash is this row's key."""

    __tablename__ = "browser_sessions"
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"))
    csrf: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime)

    team: Mapped[Team] = relationship()
