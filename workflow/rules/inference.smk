# Inference, one job per fixed-size shard of frames: the unit a cluster executor distributes.


rule infer:
    input:
        audit=f"{R}/{{benchmark}}/audit.json",
        model=lambda w: model_inputs(w.model),
        images=lambda w: shard_files(w, "image"),
        labels=lambda w: shard_files(w, "label"),
        code=CODE_INFERENCE,
    output:
        directory(f"{R}/{{benchmark}}/{{split}}/{{model}}/predictions/shard-{{shard}}"),
    log:
        f"{LOGS}/infer/{{benchmark}}/{{split}}/{{model}}/shard-{{shard}}.log",
    conda:
        ENV
    threads: 2
    resources:
        **INFERENCE_GPU,
        mem_mb=4000,
    params:
        data=lambda w: bench(w).data,
        shard_size=shard_size,
        device=INFERENCE["device"],
        batch_size=INFERENCE["batch_size"],
        model=lambda w: config["models"][w.model],
    shell:
        cli(
            "infer --benchmark {wildcards.benchmark} --data {params.data} --split {wildcards.split} "
            "--shard {wildcards.shard} --shard-size {params.shard_size} --model {wildcards.model} "
            "--batch-size {params.batch_size} --device {params.device} --quiet --out {output}"
        )
