# Scoring: per-shard confusion counts, merged into metrics; the floor from ground truth alone.


rule score:
    input:
        audit=f"{R}/{{benchmark}}/audit.json",
        predictions=predictions_input,
        labels=lambda w: shard_files(w, "label"),
        definition=definition_files,  # its boundary bands
        code=CODE_SCORING,
    output:
        f"{R}/{{benchmark}}/{{split}}/{{model}}/counts/shard-{{shard}}.parquet",
    log:
        f"{LOGS}/score/{{benchmark}}/{{split}}/{{model}}/shard-{{shard}}.log",
    wildcard_constraints:
        model=r"(?!floor/)[A-Za-z0-9_.-]+",  # the floor has its own rule
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=1000,
    params:
        data=lambda w: bench(w).data,
        shard_size=shard_size,
        predictions=predictions_argument,
        model=lambda w: config["models"][w.model],
    shell:
        cli(
            "score --benchmark {wildcards.benchmark} --data {params.data} --split {wildcards.split} "
            "--shard {wildcards.shard} --shard-size {params.shard_size} --model {wildcards.model} "
            "{params.predictions} --out {output}"
        )


rule score_floor:
    input:
        audit=f"{R}/{{benchmark}}/audit.json",
        labels=lambda w: shard_files(w, "label"),
        definition=definition_files,
        code=CODE_SCORING,
    output:
        f"{R}/{{benchmark}}/{{split}}/floor/counts/shard-{{shard}}.parquet",
    log:
        f"{LOGS}/score_floor/{{benchmark}}/{{split}}/shard-{{shard}}.log",
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=1000,
    params:
        data=lambda w: bench(w).data,
        shard_size=shard_size,
    shell:
        cli(
            "score --benchmark {wildcards.benchmark} --data {params.data} --split {wildcards.split} "
            "--shard {wildcards.shard} --shard-size {params.shard_size} --floor --out {output}"
        )


rule metrics:
    input:
        counts=lambda w: expand(
            f"{R}/{w.benchmark}/{w.split}/{w.model}/counts/shard-{{shard}}.parquet",
            shard=bench(w).shards(w.split),
        ),
        definition=definition_files,
        code=CODE_METRICS,
    output:
        f"{R}/{{benchmark}}/{{split}}/{{model}}/metrics.json",
    log:
        f"{LOGS}/metrics/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    shell:
        cli(
            "metrics --benchmark {wildcards.benchmark} --counts {input.counts} --out {output}"
        )


rule submission:
    input:
        metrics=f"{R}/{{benchmark}}/{{split}}/{{model}}/metrics.json",
        floor=f"{R}/{{benchmark}}/{{split}}/floor/metrics.json",
        identity=f"{R}/{{benchmark}}/models/{{model}}/identity.json",
        dataset=f"{R}/{{benchmark}}/dataset.json",
        definition=definition_files,  # its `record` fields
        code=CODE_SUBMISSION,
    output:
        f"{R}/{{benchmark}}/{{split}}/{{model}}/submission.json",
    log:
        f"{LOGS}/submission/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        model=lambda w: config["models"][w.model],
    shell:
        cli(
            "submit --benchmark {wildcards.benchmark} --model {wildcards.model} --metrics {input.metrics} "
            "--floor-metrics {input.floor} --identity {input.identity} --dataset-id {input.dataset} "
            "--out {output}"
        )
