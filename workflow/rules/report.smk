# The results table over every (benchmark, model, split), grouped by comparability triple, with
# the bootstrap intervals beside the spec's fields; also as a static, sortable HTML page, and every
# metric per report and per class in results/tables (long.csv: one row per value).


rule leaderboard:
    input:
        submissions=[
            f"{R}/{b}/{s}/{m}/submission.json" for b, s, m in PLAN.evaluations()
        ],
        floors=sorted(
            {f"{R}/{b}/{s}/floor/metrics.json" for b, s, _ in PLAN.evaluations()}
        ),
        metrics=[f"{R}/{b}/{s}/{m}/metrics.json" for b, s, m in PLAN.evaluations()],
        uncertainty=uncertainty_files(),
        code=CODE_REPORT,
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
        stem=lambda w, output: Path(output.csv).with_suffix(""),
    shell:
        cli(
            "results --submissions {input.submissions} --floors {input.floors} --metrics {input.metrics} "
            "--uncertainty {input.uncertainty} --out {params.stem} --metrics-out {output.metrics} "
            "--tables {output.tables}"
        )
