"""The server's settings: every limit, rate and lease time in one place, each with its default
(docs/server.md lists them). Set on the command line of `segbench server run` / `worker`."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import SegbenchError


ZERO_ALLOWED = {"seed", "kept_labels_mib"}


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
    kept_labels_mib: int = 1024  # hidden labels a worker keeps decoded, with their bands, between uploads; 0: none

    def __post_init__(self) -> None:
        # Each must be above zero (a lease of 0 s would hand a submission to every worker; an upload
        # limit of -1 would refuse every upload), the seed at least zero (numpy's generators' rule),
        # the labels kept too (none kept is a choice).
        for field in fields(self):
            value = getattr(self, field.name)
            number = isinstance(value, int if isinstance(field.default, int) else (int, float))
            zero = field.name in ZERO_ALLOWED
            if isinstance(value, bool) or not number or not (value >= 0 if zero else value > 0):
                bound = "0 or more" if zero else "above 0"
                kind = "a whole number" if isinstance(field.default, int) else "a number"
                raise SegbenchError(f"--{field.name.replace('_', '-')} {value!r}: must be {kind} {bound}")


DEFAULTS = Settings()
