# Plots, qualitative overlays and bootstrap intervals, all from the stored confusion counts
# (nothing is re-scored); the overlays read only the few frames they show.


rule uncertainty:
    input:
        **COMPARED,
        content=content("dataset"),  # the document names the dataset
        frames=frame_index,
        dataset=dataset_record,
    output:
        path("uncertainty"),
    log:
        f"{LOGS}/uncertainty/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        rerun_when_code_changes=code("uncertainty"),
        compare=comparison_argument,
        resamples=BOOTSTRAP["resamples"],
        seed=BOOTSTRAP["seed"],
    shell:
        cli(
            "uncertainty",
            "--benchmark {wildcards.benchmark:q} --counts {input.counts:q} {params.compare} "
            "--frames {input.frames:q} --resamples {params.resamples} --seed {params.seed} --out {output:q}",
        )


# The frame index carries each frame's group and metadata: the slices are made from what the
# dataset_identity job read, never from a dataset file opened again; the slicings are the
# definition's, or the config entry's list passed as a parameter (never config.yaml re-read).
rule slices:
    input:
        **COMPARED,
        frames=frame_index,
    output:
        path("slices"),
    log:
        f"{LOGS}/slices/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        rerun_when_code_changes=code("slices"),
        compare=comparison_argument,
        slicings=lambda w: arguments.slicings_argument(
            config["benchmarks"][w.benchmark]
        ),
        resamples=BOOTSTRAP["resamples"],
        seed=BOOTSTRAP["seed"],
    shell:
        cli(
            "slices",
            "--benchmark {wildcards.benchmark:q} --counts {input.counts:q} {params.compare} "
            "--frames {input.frames:q} {params.slicings} --resamples {params.resamples} --seed {params.seed} "
            "--out {output:q}",
        )


# One job draws every figure of a model (core.figures: the benchmark's reports decide how many),
# so its folder is the output; the report picks the PNGs out of it by kind.
rule figures:
    input:
        **COMPARED,
    output:
        report(
            directory(path("plots")),
            patterns=figure_report.report_patterns(),
            caption="../report/figures.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels=figure_report.report_labels,
        ),
    log:
        f"{LOGS}/figures/{{benchmark}}/{{split}}/{{model}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("figures"),
        compare=comparison_argument,
    shell:
        cli(
            "figures",
            "--benchmark {wildcards.benchmark:q} --counts {input.counts:q} {params.compare} --out {output:q}",
        )


rule overlays:
    input:
        counts=model_counts,
        predictions=masks_input("split"),
        frames=frame_index,
        data=dataset_inputs("split"),
        definition=definition_files,
    output:
        frames=path("overlay_frames"),
        images=[
            report(
                p,
                caption="../report/overlay.rst",
                category=PLOT_CATEGORY,
                subcategory="{model}",
                labels={"figure": "overlay", "space": Path(p).stem},
            )
            for p in TARGETS.overlay_files(path("overlays"))
        ],
    log:
        f"{LOGS}/overlays/{{benchmark}}/{{split}}/{{model}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        rerun_when_code_changes=code("overlays"),
        data=data_argument("split"),
        predictions=masks_paths,
        per_kind=TARGETS.overlay_frames,
        folder=lambda w, output: Path(output.frames).parent,
    shell:
        cli(
            "overlays",
            "--benchmark {wildcards.benchmark:q} --data {params.data:q} --split {wildcards.split:q} "
            "--frames-index {input.frames:q} --counts {input.counts:q} --predictions {params.predictions:q} "
            "--examples {params.per_kind} --out {params.folder:q}",
        )


# The figures' CSVs lie in the figures jobs' folders (its inputs); which ones, the plan says.
rule plot_data:
    input:
        TARGETS.each("plots"),
    output:
        iou=path("plot_data_iou"),
        confusion=path("plot_data_confusion"),
    log:
        f"{LOGS}/plot_data.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("plot-data"),
        iou=TARGETS.plot_data_files("iou"),
        confusion=TARGETS.plot_data_files("confusion"),
    shell:
        cli(
            "plot-data",
            "--iou {params.iou:q} --confusion {params.confusion:q} "
            "--iou-out {output.iou:q} --confusion-out {output.confusion:q}",
        )
