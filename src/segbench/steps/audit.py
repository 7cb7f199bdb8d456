"""The dataset audit as a step: both reports written, failure raised naming them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..stages.audit import audit_dataset
from ..stages.audit_report import AuditReport


def run_audit(
    benchmark: Benchmark, data: Path, splits: Sequence[str], json_path: Path, text_path: Path
) -> AuditReport:
    """Audit the dataset, write both reports, and raise AuditFailed (naming them) on any error."""
    report = audit_dataset(data, benchmark, splits)
    report.write(json_path, text_path)
    report.raise_if_failed(json_path)
    return report
