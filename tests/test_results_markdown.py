"""The results in Markdown (segbench.stages.results_markdown): the compact table and the per-report tables."""

from __future__ import annotations

from results_fixtures import floor, groups, record, uncertainty
from segbench.stages import leaderboard, results_markdown


def test_compact_table_reads_in_100_columns():
    markdown = results_markdown.to_markdown(groups())
    assert "0.700 [0.600, 0.800]" in markdown and "Δ baseline" in markdown and "beats floor" in markdown
    lines = markdown.splitlines()
    assert max(len(line) for line in lines) <= 100
    alpha = next(line for line in lines if line.startswith("alpha"))
    assert alpha.split() == ["alpha", "checkpoint", "0.700", "[0.600,", "0.800]", "+0.100*", "+0.600*", "yes"]
    gamma = next(line for line in lines if line.startswith("gamma"))
    assert gamma.split()[-3:] == ["-0.550*", "-0.050", "NO"]  # -0.05 ± 0.05 includes 0: no star
    assert "main.acc" not in markdown and "dice" not in markdown  # everything else: results/tables
    header = next(line for line in lines if line.startswith("model"))
    assert header.split()[:3] == ["model", "kind", "main.mIoU"]  # no record has an inference block: no mode


def test_compact_table_shows_the_inference_mode_when_present():
    records = [{**record("easyportrait-best", 0.5, 0.5, True), "inference": {"mode": "multi-scale", "size": 512, "scales": [0.5, 1.0], "flip": True},
                "model": {"name": "easyportrait-best", "kind": "hf-segformer", "label_space": "s"}},
               record("b", 0.4, 0.5, True)]
    board = leaderboard.attach_intervals(leaderboard.build(records, [floor(0.1)]),
                                         [uncertainty("easyportrait-best", 0.5), uncertainty("b", 0.4)])
    table = results_markdown.compact_table(board[0])
    header, _, first, second, last = table.splitlines()
    assert header.split()[:3] == ["model", "kind", "mode"]
    assert first.split()[:3] == ["easyportrait-best", "hf-segformer", "multi-scale"]
    assert second.split()[:3] == ["b", "checkpoint", "—"] and last.split()[:3] == ["floor", "floor", "—"]
    assert max(len(line) for line in table.splitlines()) <= 100
    assert board[0]["rows"][0]["inference_mode"] == "multi-scale" and "inference.mode" not in board[0]["rows"][0]
    markdown = results_markdown.to_markdown(board)  # b has no inference block: a group mixing modes is marked
    assert "**rows use different inference modes (column `inference`): their ranks compare unlike runs**" in markdown
    assert max(len(line) for line in markdown.splitlines()) <= 100


def test_report_tables_name_report_metric_and_class():
    tables = results_markdown.report_tables(groups())
    assert sorted(tables) == ["bench-a/test/main.md", "bench-a/test/second.md", "bench-b/test/main.md",
                              "bench-b/test/second.md"]
    main = tables["bench-a/test/main.md"]
    assert "| model | kind | main.mIoU | main.acc |" in main
    assert "### `main.dice` by class" in main and "| class | alpha | base | gamma | floor |" in main
    assert "| road | 0.350 | 0.300 | 0.025 | 0.000 |" in main and "| sky | — | — | — | — |" in main
