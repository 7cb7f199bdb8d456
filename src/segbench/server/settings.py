"""The server's settings: every limit, rate and lease time in one place, each with its default
(docs/server.md lists them). Set on the command line of `segbench server run` / `worker`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    max_upload_bytes: int = 512 << 20  # one upload's body, enforced while it is read
    requests_per_minute: int = 600  # per team; a request naming no live team counts against its address
    uploads_per_hour: int = 60  # per team, accepted or refused
    lease_seconds: float = 300.0  # a worker's claim on a submission; an expired one goes to another
    max_attempts: int = 3  # claims of one submission (workers that died on it) before it is marked failed
    poll_seconds: float = 1.0  # how long an idle worker waits before looking for work again
    session_hours: float = 12.0  # a browser session's life
    resamples: int = 1000  # the bootstrap's, as the workflow's table (config.yaml: bootstrap)
    seed: int = 0


DEFAULTS = Settings()
