"""The dataset audit as a step: its reports written (those asked for), failure raised naming them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..stages.audit import audit_dataset
from ..stages.audit_report import AuditReport


def run_audit(
    benchmark: Benchmark, data: Path, splits: Sequence[str], json_path: Path | None, text_path: Path | None
) -> AuditReport:
    """Audit the dataset, write the reports given a path, and raise AuditFailed (naming the JSON
    report, when written) on any error."""
    report = audit_dataset(data, benchmark, splits)
    report.write(json_path, text_path)
    report.raise_if_failed(json_path)
    return report
