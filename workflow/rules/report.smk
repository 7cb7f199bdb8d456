# The results table over every (benchmark, model, split), grouped by comparability triple.


rule leaderboard:
    input:
        submissions=[
            f"{R}/{b}/{s}/{m}/submission.json" for b, s, m in PLAN.evaluations()
        ],
        floors=sorted(
            {f"{R}/{b}/{s}/floor/metrics.json" for b, s, _ in PLAN.evaluations()}
        ),
        code=CODE_REPORT,
    output:
        csv=f"{R}/leaderboard.csv",
        md=f"{R}/leaderboard.md",
        json=f"{R}/leaderboard.json",
        metrics=config["metrics_file"],
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
            "leaderboard --submissions {input.submissions} --floors {input.floors} "
            "--out {params.stem} --metrics-out {output.metrics}"
        )
