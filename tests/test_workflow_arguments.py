"""The rules' argument builders (segbench.workflow.arguments): a job's inputs and config entries
turned into its command line, every path quoted."""

from __future__ import annotations

import shlex

from segbench.workflow import arguments


def test_data_folder_is_the_local_copy_of_the_folder_of_the_first_listed_file():
    assert arguments.data_folder("data", [], []) == "data"  # nothing listed: the folder itself
    listed = ["data/labels/a.png", "data/images/a.jpg"]
    assert arguments.data_folder("data", listed, [".snakemake/storage/s3/run/data/labels/a.png", "x"]) == \
        ".snakemake/storage/s3/run/data"
    assert arguments.data_folder("data", ["data/frames.csv"], ["/tmp/copy/data/frames.csv"]) == "/tmp/copy/data"


def test_the_argument_builders_quote_every_path():
    assert arguments.cli("audit", "--out {output:q}") == \
        "segbench audit --out {output:q} > {log:q} 2>&1 || (cat {log:q} >&2; exit 1)"
    assert arguments.as_list("a") == ["a"] and arguments.as_list(("a", "b")) == ["a", "b"]
    assert arguments.comparison_arguments(["b 1.parquet"], ["f.parquet"]) == \
        "--baseline-counts 'b 1.parquet' --floor-counts f.parquet"
    assert arguments.comparison_arguments([], ["f.parquet"]) == "--floor-counts f.parquet"
    assert arguments.comparison_arguments([], []) == ""
    assert arguments.dataset_manifest_argument("my manifest.json") == "--dataset-manifest 'my manifest.json'"
    assert arguments.dataset_manifest_argument(None) == ""
    assert arguments.splits_argument(["test", "val x"]) == "--split test --split 'val x'"
    assert arguments.scored_arguments(None, None) == "--floor"
    assert arguments.scored_arguments("id.json", "shard 0") == "--identity id.json --predictions 'shard 0'"


def test_the_slicings_argument_is_the_config_entrys_own_list_as_json():
    assert arguments.slicings_argument({"data": "data"}) == ""
    entry = {"slices": [{"name": "lit", "column": "light"}]}
    argument = arguments.slicings_argument(entry)
    assert shlex.split(argument) == ["--slicings", '[{"column": "light", "name": "lit"}]']
    assert arguments.slicings_argument({"slices": []}) == "--slicings '[]'"
