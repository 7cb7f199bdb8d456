# Provenance: restore pinned inputs, identify the dataset bytes and each checkpoint. The identity
# jobs are checkpoints: what comes after them is planned with the identities they wrote.


checkpoint pull_pinned:
    input:
        pin=ancient(lambda w: dvc_file(PINNED[w.pin])),
    output:
        path("pinned"),
    log:
        f"{LOGS}/pull_pinned/{{pin}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("pull"),
        path=lambda w: PINNED[w.pin],
    shell:
        cli("pull", "{params.path:q} --out {output:q}")


checkpoint dataset_identity:
    input:
        pinned=pins("data"),
        data=dataset_inputs("all"),
        manifest=lambda w: [bench(w).manifest] if bench(w).manifest else [],
        definition=definition_files,
    output:
        manifest=path("manifest"),
        dataset=path("dataset"),
        frames=path("frames"),
    log:
        f"{LOGS}/dataset_identity/{{benchmark}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("manifest"),
        data=data_argument("all"),
        dataset_manifest=lambda w, input: arguments.dataset_manifest_argument(
            input.manifest
        ),
        rerun_when_dataset_files_change=dataset_fingerprint,
    shell:
        cli(
            "manifest",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} {params.dataset_manifest} "
            "--out {output.manifest:q} --dataset-id-out {output.dataset:q} --index-out {output.frames:q}",
        )


checkpoint checkpoint_identity:
    input:
        pinned=pins("model"),
        model=model_files,
        definition=definition_files,
    output:
        path("identity"),
    log:
        f"{LOGS}/checkpoint_identity/{{benchmark}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("identify"),
        spec=lambda w, input: MODE.model_spec(
            w.model, config["models"][w.model], arguments.as_list(input.model)
        ),
    shell:
        cli(
            "identify",
            "--benchmark {wildcards.benchmark:q} --model-spec {params.spec:q} --out {output:q}",
        )
