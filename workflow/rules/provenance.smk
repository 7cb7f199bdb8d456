# Provenance: restore pinned inputs, identify the dataset bytes and each checkpoint, and the
# markers of the content keys. Only the restore is a checkpoint: what comes after it is planned
# once the restored bytes are there to identify (keys.py).


checkpoint pull_pinned:
    input:
        pins=ancient([dvc_file(p) for p in PINNED]),
    output:
        path("pinned"),
    log:
        f"{LOGS}/pull_pinned.log",
    localrule: True  # on a cluster, the head node: it reaches the DVC remote, a compute node may not
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("pull"),
        paths=PINNED,
    shell:
        # every missing pin in one `dvc fetch` and one `dvc checkout` (pinning.restore)
        cli("pull", "{params.paths:q} --out {output:q}")


# A job's content key, as a file named by it: the job reads it as an input (keys.py, `marker`).
# It runs in Snakemake's own process (keys.settle; the default profile's force-use-threads, as a
# cluster executor runs local rules): its metadata are there, and a job is one file.
rule content_key:
    input:
        records=key_records,
    output:
        marker("{slot}", "{key}"),
    log:
        f"{LOGS}/content_key/{{slot}}.{{key}}.log",
    wildcard_constraints:
        key=r"[0-9a-f]{32}",
    localrule: True
    run:
        settle(output[0], log[0], forget_metadata)


rule dataset_identity:
    input:
        content=content("dataset"),
        data=dataset_inputs("all"),
        manifest=manifest_file,
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
            input.manifest or bench(w).manifest
        ),
    shell:
        cli(
            "manifest",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} {params.dataset_manifest} "
            "--out {output.manifest:q} --dataset-id-out {output.dataset:q} --index-out {output.frames:q}",
        )


rule checkpoint_identity:
    input:
        content=content("model"),
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
