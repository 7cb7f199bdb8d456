# Provenance: restore pinned inputs, identify the dataset bytes and each checkpoint.


checkpoint pull_pinned:
    input:
        ancient(lambda w: dvc_file(PINNED[w.pin])),
    output:
        f"{R}/pinned/{{pin}}.json",
    log:
        f"{LOGS}/pull_pinned/{{pin}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        path=lambda w: PINNED[w.pin],
    shell:
        cli("pull {params.path} --out {output}")


rule dataset_identity:
    input:
        files=dataset_files,
        manifest=lambda w: [bench(w).manifest] if bench(w).manifest else [],
        code=[f"{SOURCE}/provenance.py"] + CODE_DATASETS,
    output:
        manifest=f"{R}/{{benchmark}}/manifest.json",
        dataset=f"{R}/{{benchmark}}/dataset.json",
    log:
        f"{LOGS}/dataset_identity/{{benchmark}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        data=lambda w: bench(w).data,
        verify=lambda w: f"--verify {bench(w).manifest}" if bench(w).manifest else "",
        fingerprint=dataset_fingerprint,
    shell:
        cli(
            "manifest --benchmark {wildcards.benchmark} --data {params.data} {params.verify} "
            "--out {output.manifest} --dataset-id-out {output.dataset}"
        )


rule checkpoint_identity:
    input:
        model=lambda w: model_inputs(w.model),
    output:
        f"{R}/{{benchmark}}/models/{{model}}/identity.json",
    log:
        f"{LOGS}/checkpoint_identity/{{benchmark}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        model=lambda w: config["models"][w.model],
    shell:
        cli(
            "identify --benchmark {wildcards.benchmark} --model {wildcards.model} --out {output}"
        )
