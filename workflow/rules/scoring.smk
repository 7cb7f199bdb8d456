# Scoring: per-shard confusion counts, merged into metrics; the floor from ground truth alone.
# A shard is re-scored when its predictions are re-made or its content key changes (its labels).


rule score:
    input:
        audit=audit_gate,
        frames=frame_index,
        identity=identity_record,
        predictions=predictions_input,
        files=dataset_inputs("shard-labels"),
        definition=definition_files,
    output:
        path("counts"),
    log:
        f"{LOGS}/score/{{benchmark}}/{{split}}/{{model}}/shard-{{shard}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),  # the floor has its own rule
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=1000,
    params:
        code=code("score"),
        key=scoring_key,
        data=data_argument("shard-labels"),
        predictions=predictions_argument,
        shards=shard_total,
    shell:
        cli(
            "score",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --frames {input.frames:q} "
            "--split {wildcards.split:q} --shard {wildcards.shard} --shards {params.shards} "
            "--identity {input.identity:q} --predictions {params.predictions:q} --out {output:q}",
        )


rule score_floor:
    input:
        audit=audit_gate,
        frames=frame_index,
        files=dataset_inputs("shard-labels"),
        definition=definition_files,
    output:
        path("counts", model="floor"),
    log:
        f"{LOGS}/score_floor/{{benchmark}}/{{split}}/shard-{{shard}}.log",
    conda:
        ENV
    threads: 2
    resources:
        mem_mb=1000,
    params:
        code=code("score"),
        key=scoring_key,
        data=data_argument("shard-labels"),
        shards=shard_total,
    shell:
        cli(
            "score",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --frames {input.frames:q} "
            "--split {wildcards.split:q} --shard {wildcards.shard} --shards {params.shards} "
            "--floor --out {output:q}",
        )


rule metrics:
    input:
        counts=lambda w: counts_of(w, w.model),
        frames=frame_index,
        definition=definition_files,
    output:
        path("metrics"),
    log:
        f"{LOGS}/metrics/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        code=code("metrics"),
        # a re-run trigger: the document names the dataset, so a change anywhere in the data (an
        # image, a train label) that leaves these counts alone still re-makes it
        dataset_id=dataset_id,
    shell:
        cli(
            "metrics",
            "--benchmark {wildcards.benchmark:q} --counts {input.counts:q} --frames {input.frames:q} "
            "--out {output:q}",
        )


rule submission:
    input:
        metrics=path("metrics"),
        floor=path("metrics", model="floor"),
        uncertainty=path("uncertainty"),
        identity=identity_record,
        dataset=dataset_record,
        definition=definition_files,
    output:
        path("submission"),
    log:
        f"{LOGS}/submission/{{benchmark}}/{{split}}/{{model}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        code=code("record"),
        dataset_id=dataset_id,
        checkpoint_sha256=checkpoint_sha256,
    shell:
        cli(
            "record",
            "--benchmark {wildcards.benchmark:q} --metrics {input.metrics:q} "
            "--floor-metrics {input.floor:q} --identity {input.identity:q} --dataset-id {input.dataset:q} "
            "--uncertainty {input.uncertainty:q} --out {output:q}",
        )
