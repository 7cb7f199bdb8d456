# Inference, one job per shard of frames (by a hash of the frame id): the unit a cluster
# executor distributes. It runs when its content key changes: the model or a frame's image.


rule infer:
    input:
        content=content("infer"),
        audit=audit_gate,
        frames=frame_index,
        identity=identity_record,
        model=model_files,
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
        data=data_argument("shard"),
        model=model_path,
        shards=shard_total,
        device=INFERENCE["device"],
        batch_size=INFERENCE["batch_size"],
    shell:
        cli(
            "infer",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --frames {input.frames:q} "
            "--split {wildcards.split:q} --shard {wildcards.shard} --shards {params.shards} "
            "--identity {input.identity:q} --model-path {params.model:q} "
            "--batch-size {params.batch_size} --device {params.device:q} --quiet --out {output:q}",
        )
