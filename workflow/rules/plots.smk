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


rule plot_iou:
    input:
        **COMPARED,
    output:
        png=report(
            path("plot_iou"),
            caption="../report/iou.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "per-class IoU", "space": "{report}"},
        ),
        csv=path("plot_iou_csv"),
    log:
        f"{LOGS}/plot_iou/{{benchmark}}/{{split}}/{{model}}/{{report}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
        report="[A-Za-z0-9_]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("plot-iou"),
        compare=comparison_argument,
    shell:
        cli(
            "plot-iou",
            "--benchmark {wildcards.benchmark:q} --report {wildcards.report:q} --counts {input.counts:q} "
            "{params.compare} --out {output.png:q} --csv-out {output.csv:q}",
        )


rule plot_confusion:
    input:
        counts=model_counts,
        definition=definition_files,
    output:
        png=report(
            path("plot_confusion"),
            caption="../report/confusion.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "confusion", "space": "{space}"},
        ),
        csv=path("plot_confusion_csv"),
    log:
        f"{LOGS}/plot_confusion/{{benchmark}}/{{split}}/{{model}}/{{space}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
        space="[A-Za-z0-9_-]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("plot-confusion"),
    shell:
        cli(
            "plot-confusion",
            "--benchmark {wildcards.benchmark:q} --space {wildcards.space:q} --counts {input.counts:q} "
            "--out {output.png:q} --csv-out {output.csv:q}",
        )


rule plot_fraction:
    input:
        **COMPARED,
    output:
        report(
            path("plot_fraction"),
            caption="../report/fraction.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "per-frame fraction", "space": "{metric}"},
        ),
    log:
        f"{LOGS}/plot_fraction/{{benchmark}}/{{split}}/{{model}}/{{metric}}.log",
    wildcard_constraints:
        model=one_of(MODEL_NAMES),
        metric=r"[A-Za-z0-9_]+\.[A-Za-z0-9_]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        rerun_when_code_changes=code("plot-fraction"),
        compare=comparison_argument,
    shell:
        cli(
            "plot-fraction",
            "--benchmark {wildcards.benchmark:q} --metric {wildcards.metric:q} --counts {input.counts:q} "
            "{params.compare} --out {output:q}",
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


rule plot_data:
    input:
        iou=TARGETS.plot_data_files("iou"),
        confusion=TARGETS.plot_data_files("confusion"),
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
    shell:
        cli(
            "plot-data",
            "--iou {input.iou:q} --confusion {input.confusion:q} "
            "--iou-out {output.iou:q} --confusion-out {output.confusion:q}",
        )
