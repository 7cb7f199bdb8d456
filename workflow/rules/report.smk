# The results table over every (benchmark, model, split), grouped by comparability triple, with
# the bootstrap intervals beside the spec's fields; also as a static, sortable HTML page, and every
# metric per report and per class in results/tables (long.csv: one row per value).


rule leaderboard:
    input:
        submissions=[
            path("submission", benchmark=b, split=s, model=m)
            for b, s, m in PLAN.evaluations()
        ],
        floors=sorted(
            {
                path("metrics", benchmark=b, split=s, model="floor")
                for b, s, _ in PLAN.evaluations()
            }
        ),
        metrics=[
            path("metrics", benchmark=b, split=s, model=m)
            for b, s, m in PLAN.evaluations()
        ],
        uncertainty=uncertainty_files(),
        slices=slice_files(),
    output:
        csv=f"{R}/leaderboard.csv",
        md=f"{R}/leaderboard.md",
        json=f"{R}/leaderboard.json",
        html=report(
            f"{R}/leaderboard.html",
            caption="../report/leaderboard.rst",
            category="Leaderboard",
            labels={"table": "leaderboard"},
        ),
        metrics=config["metrics_file"],
        tables=directory(f"{R}/tables"),
    log:
        f"{LOGS}/leaderboard.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        code=code("results"),
        stem=lambda w, output: Path(output.csv).with_suffix(""),
        # A label, not a path the job opens: the Markdown names the results' folder, never a
        # job's staged local copy of it.
        tables_label=lambda w: f"{R}/tables",
    shell:
        cli(
            "results",
            "--submissions {input.submissions:q} --floors {input.floors:q} --metrics {input.metrics:q} "
            "--uncertainty {input.uncertainty:q} --slices {input.slices:q} --out {params.stem:q} --metrics-out {output.metrics:q} "
            "--tables {output.tables:q} --tables-label {params.tables_label:q}",
        )
