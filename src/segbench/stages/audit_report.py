"""The audit's report: its findings (errors and warnings, in a fixed order of codes), as JSON and
as text, and the one-line summary a failed audit stops the run with."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AuditFailed
from ..io.fileio import atomic_write_text

ERROR = "error"
WARNING = "warning"
SUMMARY_LINES = 20

# Report order of the finding codes.
CODES = (
    "empty-dataset",
    "empty-split",
    "group-crosses-splits",
    "image-bytes-across-splits",
    "unlabelled-split",
    "meta-contradicts-folders",
    "missing-image",
    "two-images",
    "missing-label",
    "unlisted-file",
    "unreadable-file",
    "label-not-single-channel",
    "label-size-mismatch",
    "label-values",
    "near-duplicate",
    "classes-absent",
    "label-provenance",
    "images-absent",
)


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str  # ERROR or WARNING
    message: str
    frames: tuple[str, ...] = ()
    walls: tuple[str, ...] = ()  # the groups involved: walls, drives or users, as the benchmark's group_key says

    def to_json(self, groups_key: str = "walls") -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "frames": list(self.frames),
            groups_key: list(self.walls),
        }

    def sort_key(self) -> tuple:
        return (self.severity != ERROR, CODES.index(self.code), self.frames, self.walls, self.message)


@dataclass
class AuditReport:
    data_dir: Path
    benchmark: str
    splits_evaluated: tuple[str, ...]
    counts: dict[str, dict[str, int]]  # split -> {"frames": n, "<group>s": m}
    findings: list[Finding] = field(default_factory=list)
    group_noun: str = "wall"  # what a group is called: wall, drive, user

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=Finding.sort_key)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def groups_key(self) -> str:
        return f"{self.group_noun}s"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "segbench-audit",
            "version": 1,
            "data_dir": str(self.data_dir),
            "benchmark": self.benchmark,
            "splits_evaluated": list(self.splits_evaluated),
            "ok": self.ok,
            "counts": self.counts,
            "error_count": len(self.errors),
            "warning_count": len(self.warnings),
            "findings": [f.to_json(self.groups_key) for f in self.findings],
        }

    def to_text(self) -> str:
        evaluated = f", evaluating split {', '.join(repr(s) for s in self.splits_evaluated)}" if self.splits_evaluated else ""
        lines = [f"Dataset audit of {self.data_dir} (benchmark {self.benchmark}{evaluated})"]
        groups = self.groups_key
        lines.append("Frames: " + ", ".join(f"{s} {c['frames']} ({c[groups]} {groups})" for s, c in self.counts.items()))
        status = "PASSED" if self.ok else "FAILED"
        lines.append(f"Result: {status}: {len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        for title, findings in (("Errors", self.errors), ("Warnings", self.warnings)):
            if not findings:
                continue
            lines += ["", f"{title}:"]
            for f in findings:
                lines.append(f"  [{f.code}] {f.message}")
                if f.frames:
                    lines.append(f"      frames: {', '.join(f.frames)}")
                if f.walls:
                    lines.append(f"      {groups}: {', '.join(f.walls)}")
        return "\n".join(lines) + "\n"

    def write(self, json_path: Path | None, text_path: Path | None) -> None:
        """The JSON and the text report, each where a path is given."""
        if json_path is not None:
            atomic_write_text(json_path, json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n")
        if text_path is not None:
            atomic_write_text(text_path, self.to_text())

    def raise_if_failed(self, report_path: Path | None = None) -> None:
        """Raise AuditFailed summarising the errors (at most SUMMARY_LINES of them)."""
        if self.ok:
            return
        errors = self.errors
        lines = [f"dataset audit of {self.data_dir} failed with {len(errors)} error(s):"]
        lines += [f"  [{f.code}] {f.message}" for f in errors[:SUMMARY_LINES]]
        if len(errors) > SUMMARY_LINES:
            lines.append(f"  ... and {len(errors) - SUMMARY_LINES} more")
        if report_path is not None:
            lines.append(f"full report: {report_path}")
        raise AuditFailed("\n".join(lines))
