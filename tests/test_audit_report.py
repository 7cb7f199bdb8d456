"""The audit's report (segbench.stages.audit_report): what a failed audit stops the run with."""

from __future__ import annotations

import pytest

from segbench.errors import AuditFailed
from segbench.stages.audit_report import AuditReport, Finding


def test_raise_summary_is_capped(tmp_path):
    findings = [
        Finding("missing-label", "error", f"frame 'f{i:02d}': no label", (f"f{i:02d}",), ("w",)) for i in range(25)
    ]
    report = AuditReport(tmp_path, "painting-vision", "test", {"test": {"frames": 25, "walls": 1}}, findings)
    with pytest.raises(AuditFailed) as exc:
        report.raise_if_failed(tmp_path / "audit.json")
    lines = str(exc.value).splitlines()
    assert lines[0] == f"dataset audit of {tmp_path} failed with 25 error(s):"
    assert lines[1:21] == [f"  [missing-label] frame 'f{i:02d}': no label" for i in range(20)]
    assert lines[21:] == ["  ... and 5 more", f"full report: {tmp_path / 'audit.json'}"]
