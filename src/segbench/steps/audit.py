"""The dataset audit as a step: both reports written, failure raised naming them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..core.benchmark import Benchmark
from ..stages import audit as audit_module


def run_audit(
    benchmark: Benchmark, data: Path, splits: Sequence[str], json_path: Path, text_path: Path
) -> audit_module.AuditReport:
    """Audit the dataset, write both reports, and raise AuditFailed (naming them) on any error."""
    report = audit_module.audit_dataset(data, benchmark, splits)
    report.write(json_path, text_path)
    report.raise_if_failed(json_path)
    return report
