"""The static results page (segbench.stages.results_page), also in a real headless browser."""

from __future__ import annotations

import os

import pytest

from browser import chromium, console_errors, probe
from results_fixtures import groups, sliced
from segbench.stages import results_page


def test_page_is_self_contained():
    page = results_page.to_html(groups())
    assert "http://" not in page and "https://" not in page and "src=" not in page and "<link" not in page
    assert page.count('<table class="leaderboard"') == 2
    assert page.count("<details") == 4 and " open" not in page  # one per report and group, collapsed
    assert page.count('<table class="detail"') == 4 + 2  # each report's scalars; main's dice by class, twice


def row_html(page: str, model: str) -> str:
    start = page.index(f'<tr data-model="{model}">')
    return page[start:page.index("</tr>", start)]


def test_page_marks_significance_by_the_unit_rule():
    page = results_page.to_html(groups())
    alpha, gamma, other = (row_html(page, m) for m in ("alpha", "gamma", "other"))
    assert alpha.count(" ✱") == 2 and alpha.endswith('<td class="text" data-sort="yes">yes</td>')  # 6 walls
    assert "+0.6000 <span" in alpha and gamma.count(" ✱") == 1  # vs base; -0.05 vs the floor includes 0
    assert gamma.endswith('<td class="text" data-sort="within noise">within noise</td>')
    # 2 walls: +0.2 [+0.15, +0.25] excludes 0 but is not marked; the verdict says why
    assert " ✱" not in other and 'class="sig"' not in other
    assert other.endswith('>too few units (2 wall_id units) for an interval</td>')
    assert page.count("too few units (2 wall_id units) for an interval: no difference is marked significant") == 1


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_page_in_a_headless_browser(tmp_path):
    page = tmp_path / "leaderboard.html"
    page.write_text(results_page.to_html(groups()))
    found, stderr = probe(page, ["model", "main.mIoU", "vs_floor"], tmp_path)
    assert found["errors"] == [] and console_errors(stderr) == []
    first, second = found["tables"]
    assert (first["benchmark"], second["benchmark"]) == ("bench-a", "bench-b")
    assert first["initial"] == ["alpha", "base", "gamma", "floor"]  # ranked by the headline, floor last
    assert second["initial"] == ["other", "floor"]
    ascending, descending = first["clicks"]["model"]
    assert ascending == {"order": ["alpha", "base", "floor", "gamma"], "sort": "ascending"}
    assert descending == {"order": ["gamma", "floor", "base", "alpha"], "sort": "descending"}
    ascending, descending = first["clicks"]["main.mIoU"]
    assert ascending["order"] == ["gamma", "floor", "base", "alpha"]  # numeric, not text, order
    assert descending["order"] == ["alpha", "base", "floor", "gamma"]
    ascending, descending = first["clicks"]["vs_floor"]
    assert ascending["order"][:3] == ["gamma", "base", "alpha"] and ascending["order"][-1] == "floor"  # empty last


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_collapsed_tables_sort_in_a_headless_browser(tmp_path):
    page = tmp_path / "leaderboard.html"
    page.write_text(results_page.to_html(groups()))
    found, stderr = probe(page, ["main.acc", "gamma"], tmp_path, selector="table.detail")
    assert found["errors"] == [] and console_errors(stderr) == []
    tables = {(t["benchmark"], t["report"], t["metric"]): t for t in found["tables"]}
    assert all(t["collapsed"] for t in found["tables"])
    scalars = tables[("bench-a", "main", "")]
    assert scalars["initial"] == ["alpha", "base", "gamma", "floor"]
    ascending, descending = scalars["clicks"]["main.acc"]
    assert ascending["order"] == ["gamma", "floor", "base", "alpha"] and descending["order"] == ["alpha", "base", "floor", "gamma"]
    by_class = tables[("bench-a", "main", "dice")]
    assert by_class["initial"] == ["road", "sky"]
    ascending, _ = by_class["clicks"]["gamma"]
    assert ascending["order"] == ["road", "sky"]  # sky is undefined: empty values sort last


WIDTH_ACTIONS = """
window.__actions = Array.prototype.map.call(document.querySelectorAll('table.leaderboard'), function (table) {
  return {table: table.parentNode.scrollWidth, frame: table.parentNode.clientWidth};  // its div.scroll
});
"""


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_the_whole_leaderboard_shows_in_a_report_pane(tmp_path):
    """A 1,000-pixel window: a little less than `snakemake --report`'s pane beside its menu in a
    1,400-pixel one. A header, a value and its interval and the verdict wrap there, so no table
    scrolls sideways (with every cell on one line the two were 1,083 and 1,152 pixels wide in a
    frame of 921)."""
    page = tmp_path / "leaderboard.html"
    page.write_text(results_page.to_html(groups()))
    found, stderr = probe(page, [], tmp_path, actions=WIDTH_ACTIONS, width=1000)
    assert found["errors"] == [] and console_errors(stderr) == []
    assert len(found["actions"]) == 2
    for widths in found["actions"]:
        assert widths["table"] <= widths["frame"], widths


SLICE_ACTIONS = """
(function () {
  var select = document.querySelector('select.slice-selector');
  function visible() {
    return Array.prototype.filter.call(select.closest('details').querySelectorAll('div.slice'),
      function (d) { return !d.hidden; }).map(function (d) {
        var rows = d.querySelectorAll('tbody tr');
        return {slice: d.getAttribute('data-slicing') + '=' + d.getAttribute('data-value'),
                models: Array.prototype.map.call(rows, function (r) { return r.getAttribute('data-model'); }),
                first: Array.prototype.map.call(rows[0].cells, function (c) { return c.textContent; })};
      });
  }
  var found = {options: Array.prototype.map.call(select.options, function (o) { return o.textContent; }),
               initial: visible()};
  select.value = '1';
  select.dispatchEvent(new Event('change'));
  found.after = visible();
  window.__actions = found;
})();
"""


@pytest.mark.skipif(chromium() is None and not os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"),
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_slice_selector_in_a_headless_browser(tmp_path):
    page = tmp_path / "board.html"
    page.write_text(results_page.to_html(sliced()))
    found, stderr = probe(page, ["main.mIoU"], tmp_path, selector="table.detail[data-slice]", actions=SLICE_ACTIONS)
    assert found["errors"] == [] and console_errors(stderr) == []
    actions = found["actions"]
    assert actions["options"] == ["lighting = left", "lighting = right", "lighting = missing"]
    assert [v["slice"] for v in actions["initial"]] == ["lighting=left"]  # one slice shown at a time
    first = actions["initial"][0]["first"]
    assert first[:3] == ["alpha", "2", "1"] and first[3] == "0.5000" and first[4] == "+0.2000"
    assert first[6].startswith("1 wall_id unit: too few to resample")
    after = actions["after"]
    assert [v["slice"] for v in after] == ["lighting=right"] and after[0]["models"] == ["alpha", "gamma"]
    assert after[0]["first"][3] == "0.7000 [0.6000, 0.8000]" and after[0]["first"][4] == "+0.1000 [+0.0500, +0.1500]"
    left = found["tables"][0]  # the slices' tables in page order: left first, sortable like the others
    assert left["headers"][:7] == ["model", "frames", "units", "main.mIoU", "vs_baseline", "vs_floor", "interval_note"]
    assert left["headers"][7:] == ["main.acc", "second.aAcc"]
    assert [c["order"] for c in left["clicks"]["main.mIoU"]] == [["gamma", "alpha"], ["alpha", "gamma"]]
    assert left["collapsed"] is True and len(found["tables"]) == 3
