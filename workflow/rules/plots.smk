# Plots, qualitative overlays and bootstrap intervals, all from the stored confusion counts
# (nothing is re-scored); the overlays read only the few frames they show.


include: "plots_common.smk"


rule uncertainty:
    input:
        counts=lambda w: counts_of(w, w.model),
        baseline=baseline_counts,
        floor=floor_counts,
        manifest=f"{R}/{{benchmark}}/manifest.json",
        definition=definition_files,
        code=CODE_BOOTSTRAP,
    output:
        f"{R}/{{benchmark}}/{{split}}/{{model}}/uncertainty.json",
    log:
        f"{LOGS}/uncertainty/{{benchmark}}/{{split}}/{{model}}.log",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        compare=comparison_arguments,
        resamples=BOOTSTRAP["resamples"],
        seed=BOOTSTRAP["seed"],
    shell:
        cli(
            "uncertainty --benchmark {wildcards.benchmark} --counts {input.counts} {params.compare} "
            "--manifest {input.manifest} --resamples {params.resamples} --seed {params.seed} --out {output}"
        )


rule plot_iou:
    input:
        counts=lambda w: counts_of(w, w.model),
        baseline=baseline_counts,
        floor=floor_counts,
        definition=definition_files,
        code=CODE_PLOTS,
    output:
        png=report(
            f"{R}/{{benchmark}}/{{split}}/{{model}}/plots/iou-{{report}}.png",
            caption="../report/iou.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "per-class IoU", "space": "{report}"},
        ),
        csv=f"{R}/{{benchmark}}/{{split}}/{{model}}/plots/iou-{{report}}.csv",
    log:
        f"{LOGS}/plot_iou/{{benchmark}}/{{split}}/{{model}}/{{report}}.log",
    wildcard_constraints:
        model=r"(?!floor$)[A-Za-z0-9_.-]+",
        report="[A-Za-z0-9_]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        compare=comparison_arguments,
    shell:
        cli(
            "plot-iou --benchmark {wildcards.benchmark} --report {wildcards.report} --counts {input.counts} "
            "{params.compare} --png {output.png} --csv {output.csv}"
        )


rule plot_confusion:
    input:
        counts=lambda w: counts_of(w, w.model),
        definition=definition_files,
        code=CODE_PLOTS,
    output:
        png=report(
            f"{R}/{{benchmark}}/{{split}}/{{model}}/plots/confusion-{{space}}.png",
            caption="../report/confusion.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "confusion", "space": "{space}"},
        ),
        csv=f"{R}/{{benchmark}}/{{split}}/{{model}}/plots/confusion-{{space}}.csv",
    log:
        f"{LOGS}/plot_confusion/{{benchmark}}/{{split}}/{{model}}/{{space}}.log",
    wildcard_constraints:
        model=r"(?!floor$)[A-Za-z0-9_.-]+",
        space="[A-Za-z0-9_-]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    shell:
        cli(
            "plot-confusion --benchmark {wildcards.benchmark} --space {wildcards.space} --counts {input.counts} "
            "--png {output.png} --csv {output.csv}"
        )


rule plot_fraction:
    input:
        counts=lambda w: counts_of(w, w.model),
        baseline=baseline_counts,
        floor=floor_counts,
        definition=definition_files,
        code=CODE_PLOTS,
    output:
        report(
            f"{R}/{{benchmark}}/{{split}}/{{model}}/plots/fraction-{{metric}}.png",
            caption="../report/fraction.rst",
            category=PLOT_CATEGORY,
            subcategory="{model}",
            labels={"figure": "per-frame fraction", "space": "{metric}"},
        ),
    log:
        f"{LOGS}/plot_fraction/{{benchmark}}/{{split}}/{{model}}/{{metric}}.log",
    wildcard_constraints:
        model=r"(?!floor$)[A-Za-z0-9_.-]+",
        metric=r"[A-Za-z0-9_]+\.[A-Za-z0-9_]+",
    conda:
        ENV
    resources:
        mem_mb=1000,
    params:
        compare=comparison_arguments,
    shell:
        cli(
            "plot-fraction --benchmark {wildcards.benchmark} --metric {wildcards.metric} --counts {input.counts} "
            "{params.compare} --png {output}"
        )


rule overlays:
    input:
        counts=lambda w: counts_of(w, w.model),
        predictions=prediction_folders,
        files=split_files,
        definition=definition_files,
        code=CODE_OVERLAYS,
    output:
        frames=f"{R}/{{benchmark}}/{{split}}/{{model}}/overlays/frames.json",
        images=[
            report(
                path,
                caption="../report/overlay.rst",
                category=PLOT_CATEGORY,
                subcategory="{model}",
                labels={"figure": "overlay", "space": Path(path).stem},
            )
            for path in overlay_files(
                f"{R}/{{benchmark}}/{{split}}/{{model}}/overlays"
            )
        ],
    log:
        f"{LOGS}/overlays/{{benchmark}}/{{split}}/{{model}}.log",
    wildcard_constraints:
        model=r"(?!floor$)[A-Za-z0-9_.-]+",
    conda:
        ENV
    resources:
        mem_mb=2000,
    params:
        data=lambda w: bench(w).data,
        frames=OVERLAY_FRAMES,
        folder=lambda w, output: Path(output.frames).parent,
        model=lambda w: config["models"][w.model],
    shell:
        cli(
            "overlays --benchmark {wildcards.benchmark} --data {params.data} --split {wildcards.split} "
            "--counts {input.counts} --predictions {input.predictions} --frames {params.frames} "
            "--out-dir {params.folder}"
        )


rule plot_data:
    input:
        iou=plot_data_files("iou"),
        confusion=plot_data_files("confusion"),
        code=[f"{SOURCE}/cli.py"],
    output:
        iou=f"{R}/plots/iou.csv",
        confusion=f"{R}/plots/confusion.csv",
    log:
        f"{LOGS}/plot_data.log",
    conda:
        ENV
    resources:
        mem_mb=1000,
    shell:
        cli(
            "plot-data --iou {input.iou} --confusion {input.confusion} "
            "--iou-out {output.iou} --confusion-out {output.confusion}"
        )
