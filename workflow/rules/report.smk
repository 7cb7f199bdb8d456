# The results table over every (benchmark, model, split), grouped by comparability triple.


rule leaderboard:
    input:
        submissions=[f"{R}/{b}/{s}/{m}/submission.json" for b, s, m in PLAN.evaluations()],
        floors=sorted({f"{R}/{b}/{s}/floor/metrics.json" for b, s, _ in PLAN.evaluations()}),
        code=CODE_REPORT,
    output:
        leaderboard_outputs(),
    params:
        results=R,
    log:
        f"{R}/logs/leaderboard.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    shell:
        cli(
            "leaderboard --submissions {input.submissions} --floors {input.floors} "
            "--out {params.results}/leaderboard --metrics-out {params.results}/metrics.json"
        )
