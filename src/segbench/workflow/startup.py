"""What the Snakefile does once at each start, before any rule: recover from a killed run's lock,
check the config, and plan the benchmarks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .config import ConfigSources, check_config
from .plan import Plan
from .runlock import claim_folder

CHECKED_MANIFESTS = Path(".snakemake/segbench/checked-manifests")  # plan.BenchmarkPlan.checked


def recover_lock(folder: Path = Path(".snakemake")) -> None:
    """Remove the lock a killed run left, a live run's never (runlock.py), so a plain `snakemake`
    after a `kill -9` recovers; say so on stderr."""
    stale = claim_folder(folder)
    if stale:
        print(f"segbench: removed the lock of a killed run ({', '.join(map(str, stale))}): no other snakemake runs "
              "in this folder; the killed jobs' files are re-made (rerun-incomplete)", file=sys.stderr)


def checked_plan(config: dict[str, Any], workflow_config: str | None, configfiles: list[str],
                 overrides: dict[str, Any]) -> Plan:
    """The plan of the config Snakemake merged, validated first (config.py): each refusal names
    the file and line holding the value: the Snakefile's config file `workflow_config` (None with
    --replace-workflow-config), each --configfile, then --config. Pinned inputs must exist or be
    restorable (plan.check_pinned)."""
    check_config(config, ConfigSources.workflow(([workflow_config] if workflow_config else []) + configfiles,
                                                overrides))
    plan = Plan(config, checked=CHECKED_MANIFESTS)
    plan.check_pinned_inputs()
    return plan
