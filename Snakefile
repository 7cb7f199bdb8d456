# segbench workflow: every result regenerated from (data, checkpoints, config, code).
# Thin on purpose: the rules call the `segbench` command; the DAG comes from segbench.workflow.plan.
from snakemake.utils import min_version

from segbench.workflow.config import readable_config

min_version("9.0")


# a YAML error named with the file and line (Snakemake's own message names neither)
configfile: readable_config("config/config.yaml")


# `snakemake --report` opens on the results table (the rule graph beside it).
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/provenance.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/inference.smk"
include: "workflow/rules/scoring.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        TARGETS.leaderboard_outputs(),
        TARGETS.plot_outputs(),


# A run prints one line per job, its rule and wildcards (every rule's message, set here); a dry
# run (`snakemake -n`, which runs no hook) still shows each job's block of input, output and log
# files, and a failed job its files and log (Snakemake's `Error in rule ...`).
onstart:
    for each in workflow.rules:
        shown = "{rule} {wildcards}" if each.wildcard_names else "{rule}"
        each.message = each.message or shown


# A run ends with the results table (profiles/default keeps the rest of the output short).
onsuccess:
    if Path(f"{path('leaderboard')}.md").is_file():
        print(Path(f"{path('leaderboard')}.md").read_text(), end="")
