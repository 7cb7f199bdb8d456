"""The results in Markdown (segbench.stages.results_markdown): the compact table and the per-report tables."""

from __future__ import annotations

from results_fixtures import floor, groups, record, uncertainty
from segbench.stages import leaderboard, results_markdown


def test_compact_table_reads_in_100_columns():
    markdown = results_markdown.to_markdown(groups())
    lines = markdown.splitlines()
    assert max(len(line) for line in lines) <= 100
    first = lines.index("## bench-a v1.0 (taxonomy 1.0), split test")
    assert lines[first + 6:first + 12] == [  # ranked; the baseline marked; Δ floor's star by its interval, 6 walls
        "model     main.mIoU              Δ baseline                Δ floor  beats floor",
        "--------  ---------------------  ------------------------  -------  ------------",
        "alpha     0.700 [0.600, 0.800]   +0.100* [+0.050, +0.150]  +0.600*  yes",
        "base (b)  0.600 [0.500, 0.700]   —                         +0.500*  yes",
        "gamma     0.050 [-0.050, 0.150]  -0.550* [-0.600, -0.500]  -0.050   within noise",
        "floor     0.100 [0.000, 0.200]   -0.500* [-0.550, -0.450]  —        —",
    ]
    second = lines.index("## bench-b v1.0 (taxonomy 1.0), split test")
    assert lines[second + 4:second + 11] == [  # 2 walls: nothing starred although +0.2 ± 0.05 excludes 0, no verdict
        "**too few units (2 wall_id units) for an interval: nothing starred, no verdict**",
        "",
        "```text",
        "model  main.mIoU             Δ baseline  Δ floor  beats floor",
        "-----  --------------------  ----------  -------  -----------",
        "other  0.300 [0.200, 0.400]  —           +0.200   —",
        "floor  0.200                 —           —        —",
    ]
    assert "main.acc" not in markdown and "dice" not in markdown  # everything else: results/tables
    assert "too few units" not in "\n".join(lines[:second])


def test_compact_table_shows_the_inference_mode_when_present():
    records = [{**record("easyportrait-best", 0.5, 0.5, "yes"), "inference": {"mode": "multi-scale", "size": 512, "scales": [0.5, 1.0], "flip": True},
                "model": {"name": "easyportrait-best", "kind": "hf-segformer", "label_space": "s"}},
               record("b", 0.4, 0.5, "yes")]
    board = leaderboard.attach_intervals(leaderboard.build(records, [floor(0.1)]),
                                         [uncertainty("easyportrait-best", 0.5), uncertainty("b", 0.4)])
    table = results_markdown.compact_table(board[0])
    header, _, first, second, last = table.splitlines()
    assert header.split()[:2] == ["model", "mode"]
    assert first.split()[:2] == ["easyportrait-best", "multi-scale"]
    assert second.split()[:2] == ["b", "—"] and last.split()[:2] == ["floor", "—"]
    assert max(len(line) for line in table.splitlines()) <= 100
    assert board[0]["rows"][0]["inference_mode"] == "multi-scale" and "inference.mode" not in board[0]["rows"][0]
    banner = "**rows use different inference modes (column `inference`): their ranks compare unlike runs**"
    markdown = results_markdown.to_markdown(board)  # b has no inference block (masks): no second mode
    assert banner not in markdown and max(len(line) for line in markdown.splitlines()) <= 100
    whole = {**records[1], "inference": {"mode": "whole", "size": 512}}
    mixed = leaderboard.build([records[0], whole], [floor(0.1)])
    assert mixed[0]["inference_modes"] == ["multi-scale 512 x[0.5, 1.0] +flip", "whole 512"]
    assert banner in results_markdown.to_markdown(mixed)


def test_report_tables_name_report_metric_and_class():
    tables = results_markdown.report_tables(groups())
    assert sorted(tables) == ["bench-a/test/main.md", "bench-a/test/second.md", "bench-b/test/main.md",
                              "bench-b/test/second.md"]
    main = tables["bench-a/test/main.md"]
    assert "| model | kind | main.mIoU | main.acc |" in main
    assert "### `main.dice` by class" in main and "| class | alpha | base | gamma | floor |" in main
    assert "| road | 0.350 | 0.300 | 0.025 | 0.000 |" in main and "| sky | — | — | — | — |" in main
