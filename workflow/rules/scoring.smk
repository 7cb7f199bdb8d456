# Scoring: per-shard confusion counts, merged into metrics; the floor from ground truth alone.
# A shard is re-scored when its predictions are re-made or its content key changes (its labels).


rule score:
    input:
        content=content("score"),
        audit=audit_gate,
        frames=frame_index,
        identity=identity_record,
        predictions=masks_input("shard"),
        data=dataset_inputs("shard-labels"),
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
        rerun_when_code_changes=code("score"),
        data=data_argument("shard-labels"),
        scored=scored_argument,
        shards=shard_total,
    shell:
        cli(
            "score",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --frames {input.frames:q} "
            "--split {wildcards.split:q} --shard {wildcards.shard} --shards {params.shards} "
            "{params.scored} --out {output:q}",
        )


# The floor's counts: the same job without a model (scored_argument: --floor).
use rule score as score_floor with:
    input:
        content=content("score"),
        audit=audit_gate,
        frames=frame_index,
        data=dataset_inputs("shard-labels"),
        definition=definition_files,
    output:
        path("counts", model=FLOOR),
    log:
        f"{LOGS}/score_floor/{{benchmark}}/{{split}}/shard-{{shard}}.log",


rule metrics:
    input:
        content=content("dataset"),  # the document names the dataset: a change anywhere in the
        # data (an image, a train label) that leaves these counts alone still re-makes it
        counts=model_counts,
        frames=frame_index,
        definition=definition_files,
    output:
        path("metrics"),
    log:
        f"{LOGS}/metrics/{{benchmark}}/{{split}}/{{model}}.log",
    localrule: True  # on a cluster, the head node: a sum of small count files, no queue wait
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        rerun_when_code_changes=code("metrics"),
    shell:
        cli(
            "metrics",
            "--benchmark {wildcards.benchmark:q} --counts {input.counts:q} --frames {input.frames:q} "
            "--out {output:q}",
        )


rule submission:
    input:
        metrics=path("metrics"),
        floor=path("metrics", model=FLOOR),
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
    localrule: True  # on a cluster, the head node: a few small documents in, one out
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        # what the record names (dataset_id, checkpoint SHA-256) re-makes the metrics first
        rerun_when_code_changes=code("record"),
    shell:
        cli(
            "record",
            "--benchmark {wildcards.benchmark:q} --metrics {input.metrics:q} "
            "--floor-metrics {input.floor:q} --identity {input.identity:q} --dataset-id {input.dataset:q} "
            "--uncertainty {input.uncertainty:q} --out {output:q}",
        )
