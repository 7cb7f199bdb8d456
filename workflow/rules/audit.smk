# The dataset audit: a failure stops the run before any inference, naming the report.


rule audit:
    input:
        dataset=f"{R}/{{benchmark}}/dataset.json",
        files=dataset_files,
        definition=definition_files,
        code=CODE_AUDIT,
    output:
        json=f"{R}/{{benchmark}}/audit.json",
        text=f"{R}/{{benchmark}}/audit.txt",
    log:
        f"{LOGS}/audit/{{benchmark}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        data=lambda w: bench(w).data,
        splits=lambda w: " ".join(f"--split {s}" for s in bench(w).splits),
    shell:
        cli(
            "audit --benchmark {wildcards.benchmark} --data {params.data} {params.splits} "
            "--json {output.json} --text {output.text}"
        )
