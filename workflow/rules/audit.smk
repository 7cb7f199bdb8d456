# The dataset audit: a failure stops the run before any inference, naming the report (its
# output, which inference and scoring read). It re-runs when the dataset's content does.


rule audit:
    input:
        content=content("dataset"),
        manifest=dataset_manifest,
        dataset=dataset_record,
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
    shell:
        cli(
            "audit",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} {params.splits} "
            "--json-out {output.json:q} --text-out {output.text:q}",
        )
