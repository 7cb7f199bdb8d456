"""Driving results/leaderboard.html in Debian's headless chromium, with no server and no network.

The page is copied with two probes added: one first in <head> records uncaught errors and
console.error calls; one after the page's own script clicks headers and records the row order
after each click. `chromium --dump-dom` prints the DOM once scripts have run, and the probes'
findings are read back from it. Chromium's own console log (stderr) is checked too.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]

ERRORS_PROBE = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });
(function () {
  var original = console.error;
  console.error = function () {
    window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' '));
    return original.apply(console, arguments);
  };
})();
</script>"""

CLICK_PROBE = """<script>
(function () {
  function order(table) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return r.getAttribute('data-model') || r.getAttribute('data-row');
    });
  }
  var result = {errors: window.__errors, tables: [], actions: window.__actions || null};
  document.querySelectorAll(SELECTOR).forEach(function (table) {
    var headers = Array.prototype.map.call(table.tHead.rows[0].cells, function (h) {
      return h.getAttribute('data-column');
    });
    var details = table.closest('details');
    var entry = {benchmark: table.getAttribute('data-benchmark'), split: table.getAttribute('data-split'),
                 report: table.getAttribute('data-report'), metric: table.getAttribute('data-metric'),
                 collapsed: details !== null && !details.open, headers: headers, initial: order(table), clicks: {}};
    COLUMNS.forEach(function (column) {
      var index = headers.indexOf(column);
      if (index < 0) { return; }
      var header = table.tHead.rows[0].cells[index];
      header.click();
      var first = {order: order(table), sort: header.getAttribute('aria-sort')};
      header.click();
      var second = {order: order(table), sort: header.getAttribute('aria-sort')};
      entry.clicks[column] = [first, second];
    });
    result.tables.push(entry);
  });
  var pre = document.createElement('pre');
  pre.id = '__probe';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def probe(page: Path, columns: list[str], work: Path, selector: str = "table.leaderboard",
          actions: str = "", width: int | None = None) -> tuple[dict, str]:
    """Load a probed copy of `page` from disk, run the `actions` script (after the page's own; it
    may leave its findings in window.__actions), click the `columns` of every table `selector`
    matches; (what the probes found, chromium's stderr). `width`: the window's, in pixels."""
    assert chromium() is not None, "chromium is not installed: apt-get install -y chromium"
    text = page.read_text()
    assert "<head>" in text and "</body>" in text
    probed = text.replace("<head>", "<head>\n" + ERRORS_PROBE, 1)
    click = CLICK_PROBE.replace("COLUMNS", json.dumps(columns)).replace("SELECTOR", json.dumps(selector))
    probed = probed.replace("</body>", (f"<script>{actions}</script>\n" if actions else "") + click + "\n</body>", 1)
    copy = work / "probed.html"
    copy.write_text(probed)
    profile = work / "profile"
    profile.mkdir(exist_ok=True)
    window = [f"--window-size={width},900"] if width is not None else []
    done = subprocess.run([chromium(), *FLAGS, *window, f"--user-data-dir={profile}", "--dump-dom", copy.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = re.search(r'<pre id="__probe">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the probe did not run:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1))), done.stderr


def console_errors(stderr: str) -> list[str]:
    """Chromium's logged console messages at error level, and uncaught exceptions."""
    return [line for line in stderr.splitlines()
            if ("CONSOLE" in line and ("ERROR" in line.upper().split("CONSOLE")[0] or "Uncaught" in line))
            or "Uncaught" in line]
