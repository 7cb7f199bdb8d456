# Inference, one job per shard of frames (by a hash of the frame id): the unit a cluster
# executor distributes. It runs when its content key changes: the model or a frame's image.


rule infer:
    input:
        audit=audit_gate,
        frames=frame_index,
        identity=identity_record,
        model=model_input,
        pinned=pins("data", "model"),
        data=dataset_inputs("shard"),
        definition=definition_files,
    output:
        directory(path("predictions")),
    log:
        f"{LOGS}/infer/{{benchmark}}/{{split}}/{{model}}/shard-{{shard}}.log",
    conda:
        ENV
    threads: 2
    resources:
        **INFERENCE_GPU,
        mem_mb=4000,
    params:
        rerun_when_code_changes=code("infer"),
        rerun_when_content_changes=inference_key,
        data=data_argument("shard"),
        shards=shard_total,
        device=INFERENCE["device"],
        batch_size=INFERENCE["batch_size"],
    shell:
        cli(
            "infer",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --frames {input.frames:q} "
            "--split {wildcards.split:q} --shard {wildcards.shard} --shards {params.shards} "
            "--identity {input.identity:q} --model-path {input.model:q} "
            "--batch-size {params.batch_size} --device {params.device:q} --quiet --out {output:q}",
        )
