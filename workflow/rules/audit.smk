# The dataset audit: a failure stops the run before any inference, naming the report. It is a
# checkpoint: it re-runs when the dataset_id does, and inference and scoring wait for it.


checkpoint audit:
    input:
        manifest=dataset_manifest,
        dataset=dataset_record,
        pinned=pins("data"),
        data=dataset_inputs("all"),
        definition=definition_files,
    output:
        json=path("audit"),
        text=path("audit_text"),
    log:
        f"{LOGS}/audit/{{benchmark}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        rerun_when_code_changes=code("audit"),
        data=data_argument("all"),
        splits=lambda w: arguments.splits_argument(bench(w).splits),
        rerun_when_dataset_changes=dataset_id,
    shell:
        cli(
            "audit",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} {params.splits} "
            "--json-out {output.json:q} --text-out {output.text:q}",
        )
