"""What the Snakefile does once at each start, before any rule: recover from a killed run's lock,
check the config, and plan the benchmarks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .config import ConfigSources, check_config
from .plan import Plan
from .runlock import claim_folder

WORKFLOW_CONFIG = "config/config.yaml"  # the Snakefile's configfile
CHECKED_MANIFESTS = Path(".snakemake/segbench/checked-manifests")  # plan.BenchmarkPlan.checked
FILE_DIGESTS = Path(".snakemake/segbench/file-digests.json")  # digests.DigestCache


def recover_lock(folder: Path = Path(".snakemake")) -> None:
    """Remove the lock a killed run left, a live run's never (runlock.py), so a plain `snakemake`
    after a `kill -9` recovers; say so on stderr."""
    stale = claim_folder(folder)
    if stale:
        print(f"segbench: removed the lock of a killed run ({', '.join(map(str, stale))}): no other snakemake runs "
              "in this folder; the killed jobs' files are re-made (rerun-incomplete)", file=sys.stderr)


def checked_plan(config: dict[str, Any], settings: Any) -> Plan:
    """The plan of the config Snakemake merged (its `settings`: workflow.config_settings),
    validated first (config.py): each refusal names the file and line holding the value: the
    Snakefile's config file (unless --replace-workflow-config), each --configfile, then --config.
    Pinned inputs must exist or be restorable (plan.check_pinned)."""
    files = ([] if settings.replace_workflow_config else [WORKFLOW_CONFIG]) + list(settings.configfiles)
    check_config(config, ConfigSources.workflow(files, settings.config))
    plan = Plan(config, checked=CHECKED_MANIFESTS)
    plan.check_pinned_inputs()
    return plan


def gpu_resources(inference: dict[str, Any]) -> dict[str, Any]:
    """The inference jobs' GPU request: only when the config asks for GPUs (gpu_model then
    narrows it)."""
    model = {"gpu_model": inference["gpu_model"]} if inference["gpu"] and inference.get("gpu_model") else {}
    return {"gpu": inference["gpu"]} | model
