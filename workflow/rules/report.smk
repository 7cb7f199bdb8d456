# The results table over every (benchmark, model, split), grouped by comparability triple, with
# the bootstrap intervals beside the spec's fields; also as a static, sortable HTML page, and every
# metric per report and per class in results/tables (long.csv: one row per value).


rule leaderboard:
    input:
        **TARGETS.leaderboard_inputs(),
    output:
        csv=f"{path('leaderboard')}.csv",
        md=f"{path('leaderboard')}.md",
        json=f"{path('leaderboard')}.json",
        html=report(
            f"{path('leaderboard')}.html",
            caption="../report/leaderboard.rst",
            category="Leaderboard",
            labels={"table": "leaderboard"},
        ),
        metrics=config["metrics_file"],
        tables=directory(path("tables")),
    log:
        f"{LOGS}/leaderboard.log",
    localrule: True  # on a cluster, the head node: the records in, the tables out
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("results"),
        stem=lambda w, output: Path(output.csv).with_suffix(""),
        # A label, not a path the job opens: the Markdown names the results' folder, never a
        # job's staged local copy of it.
        tables_label=lambda w: path("tables"),
    shell:
        cli(
            "results",
            "--submissions {input.submissions:q} --floors {input.floors:q} --metrics {input.metrics:q} "
            "--uncertainty {input.uncertainty:q} --slices {input.slices:q} --out {params.stem:q} --metrics-out {output.metrics:q} "
            "--tables {output.tables:q} --tables-label {params.tables_label:q}",
        )
