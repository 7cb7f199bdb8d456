"""The browser's pages as HTML text (pure functions of what they show): the phases and sign-in,
a team's own submissions with its upload form, one submission with every metric, and the board
(the workflow's results page, with the entries' methods and provenance below it). Every form
carries its CSRF token; every value is escaped."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from string import Template
from urllib.parse import quote
from typing import Any

from ..stages.results_page import COMPARABLE, DETAILS, FLOOR, INTERVALS, SORT, STYLE, group_sections, page
from ..stages.text_table import flatten
from .board import UPLOAD
from .parts import PRIVATE, PUBLIC
from .released import released_text

FRAME = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
$style</style>
</head>
<body>
<p class="meta"><a href="/">segbench hosted evaluation</a>$who</p>
<h1>$title</h1>
$body
</body>
</html>
""")


FRAME_STYLE = STYLE + "form.inline { display: inline; }\n"  # no style attributes: the CSP allows none (headers.py)


def frame(title: str, body: str, team: str | None = None, csrf: str | None = None) -> str:
    who = ""
    if team is not None:
        who = (f' · signed in as <b>{escape(team)}</b> · <a href="/team">your submissions</a> · '
               f'<form method="post" action="/signout" class="inline">{csrf_field(csrf)}'
               '<button type="submit">sign out</button></form>')
    return FRAME.substitute(title=escape(title), style=FRAME_STYLE, who=who, body=body)


def csrf_field(csrf: str | None) -> str:
    return f'<input type="hidden" name="csrf" value="{escape(csrf or "")}">'


def index_page(phases: Sequence[dict[str, Any]], team: str | None, csrf: str) -> str:
    items = "".join(f'<li><a href="/boards/{escape(p["benchmark"])}/{escape(p["phase"])}">{escape(p["benchmark"])} · '
                    f'phase {escape(p["phase"])}</a> (split {escape(p["split"])}, dataset_id '
                    f'<code>{escape(p["dataset_id"])}</code>)' + (
                        f' · <a href="/boards/{escape(p["benchmark"])}/{escape(p["phase"])}/private">private board</a>'
                        if p["revealed"] else "") + '</li>' for p in phases)
    body = f"<h2>Leaderboards</h2><ul>{items or '<li>no phase yet</li>'}</ul>"
    if team is None:
        body += ('<h2>Sign in</h2><form method="post" action="/signin">' + csrf_field(csrf) +
                 '<label>team token <input type="password" name="token" autocomplete="off" required></label> '
                 '<button type="submit">sign in</button></form>')
        return frame("segbench hosted evaluation", body)
    return frame("segbench hosted evaluation", body, team, csrf)


def team_page(team: str, csrf: str, submissions: Sequence[dict[str, Any]], phases: Sequence[dict[str, Any]]) -> str:
    options = "".join(f'<option value="{escape(p["benchmark"])}/{escape(p["phase"])}">{escape(p["benchmark"])} · '
                      f'{escape(p["phase"])}</option>' for p in phases)
    form = ('<h2>Upload</h2><form method="post" action="/team/upload" enctype="multipart/form-data">'
            + csrf_field(csrf) + f'<label>phase <select name="phase">{options}</select></label> '
            '<label>method <input name="method" maxlength="128"></label> '
            '<label>description <input name="description" maxlength="4000"></label> '
            '<input type="file" name="upload" accept=".zip" required> <button type="submit">upload</button></form>')
    rows = "".join(f'<tr data-id="{escape(s["id"])}"><td><a href="/submissions/{escape(s["id"])}">{escape(s["id"])}</a>'
                   f'</td><td>{escape(s["benchmark"])} · {escape(s["phase"])}</td><td>{escape(s["method"])}</td>'
                   f'<td class="status">{escape(s["status"])}</td><td>{escape(s["submitted_at"])}</td></tr>'
                   for s in submissions)
    table = ('<h2>Your submissions</h2><div class="scroll"><table class="detail"><thead><tr><th>id</th><th>phase</th>'
             f'<th>method</th><th>status</th><th>submitted</th></tr></thead><tbody>{rows}</tbody></table></div>')
    return frame(f"team {team}", form + table, team, csrf)


def metrics_table(title: str, part: dict[str, Any]) -> str:
    intervals = part["intervals"]
    rows = "".join(f'<tr><td><code>{escape(k)}</code></td><td>{escape(number(v))}</td><td>'
                   f'{escape(bracket(intervals.get(k)))}</td></tr>' for k, v in flatten(part["results"]).items())
    return (f'<h2>{escape(title)}</h2><div class="scroll"><table class="detail"><thead><tr><th>metric</th>'
            f'<th>value</th><th>95% interval</th></tr></thead><tbody>{rows}</tbody></table></div>')


def submission_page(view: dict[str, Any], team: str, csrf: str) -> str:
    ladder = view.get("ladder")
    facts = [("status", view["status"]), ("phase", f'{view["benchmark"]} · {view["phase"]}'),
             ("method", view["method"]), ("description", view["description"]), ("submitted", view["submitted_at"]),
             ("scored", view["scored_at"]), ("dataset_id", view["dataset_id"]), ("upload SHA-256", view["upload_sha256"]),
             ("server code", view["code_version"]), ("error", view["error"]),
             ("selected", "yes" if view["selected"] else None), ("re-score of", view["rescore_of"]),
             ("not predicted", None if view["not_predicted"] is None else ", ".join(view["not_predicted"])),
             ("warnings", "\n".join(view["warnings"]) or None)]
    if ladder is not None:
        facts += [("public score", released_text(ladder["public_score"], ladder["decimals"])), ("board", ladder["note"])]
    body = "<table class=\"detail\"><tbody>" + "".join(
        f'<tr><th>{escape(k)}</th><td class="{escape(k.split()[0])}"><pre>{escape(str(v))}</pre></td></tr>'
        for k, v in facts if v is not None) + "</tbody></table>"
    for part in (PUBLIC, PRIVATE):
        if part in view:
            body += metrics_table(f"Every metric, {part} part", view[part])
    return frame(f"submission {view['id']}", body, team, csrf)


def number(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else json.dumps(value)


def bracket(interval: dict[str, Any] | None) -> str:
    if not interval or interval.get("low") is None:
        return ""
    return f"[{interval['low']:.4f}, {interval['high']:.4f}]"


def shown(group: dict[str, Any]) -> dict[str, Any]:
    """A public group as the page shows it: each released score with its released digits, and no interval."""
    if group["part"] != PUBLIC:
        return group
    key = group["headline"]
    rows = [{**r, key: released_text(r[key], r["decimals"])} if r["kind"] == UPLOAD and r[key] is not None else r
            for r in group["rows"]]
    return {**group, "rows": rows, "bootstrap_note": "released scores: the intervals are on the private board"}


def superseded_note(group: dict[str, Any]) -> str:
    """What a superseded dataset's group says above the boards: its entries were scored on labels
    since corrected, and the group of the current data is ranked apart (its own URL)."""
    old, new = escape(group["dataset_id"]), escape(group["superseded_by"])
    return (f'<p class="meta flag-no">dataset_id <code>{old}</code> is superseded by <code>{new}</code> (the hidden '
            f'labels were corrected): its entries stay as they were scored, never ranked with the current ones; '
            f'<a href="?dataset_id={quote(group["dataset_id"])}">its board alone</a></p>')


def board_page(benchmark: str, phase: str, groups: Sequence[dict[str, Any]], part: str) -> str:
    parts = [superseded_note(g) for g in groups if g.get("superseded_by")]
    parts += group_sections([shown(g) for g in groups])
    rows = "".join(f'<tr><td>{escape(r["model"])}</td><td>{escape(r["method"])}</td>'
                   f'<td>{"tied" if r["tied_with_above"] else ""}</td><td>{escape(r["submitted_at"])}</td>'
                   f'<td><code>{escape(r["provenance"]["dataset_id"])}</code></td>'
                   f'<td><code>{escape(r["provenance"]["upload_sha256"])}</code></td>'
                   f'<td>{escape(str(r["provenance"]["code_version"]))}</td></tr>'
                   for g in groups for r in g["rows"] if r["kind"] == UPLOAD)
    parts.append('<h2>Entries</h2><p class="meta">tied: the paired 95% interval against the entry above includes 0 '
                 '(or too few units to exclude it)' + (PUBLIC_NOTE if part == PUBLIC else "") + '</p>'
                 '<div class="scroll"><table class="detail"><thead><tr><th>team</th><th>method</th><th>tie</th>'
                 '<th>submitted</th><th>dataset_id</th><th>upload SHA-256</th><th>server code</th></tr></thead>'
                 f"<tbody>{rows}</tbody></table></div>")
    return page(f"{benchmark} · phase {phase} · {part} board", parts or ["<p>no scored submission yet</p>"],
                BOARD_NOTES[part])


# What each board shows, as the results page's note says it (stages/results_page.py): the public
# board shows the Ladder's released scores alone, the private one every metric with its intervals.
BOARD_NOTES = {
    PUBLIC: " ".join((COMPARABLE, "Each team's entry is its best on the phase's public part, its score as the Ladder "
                        "released it: no exact value and no interval, so that nobody can fit the hidden labels by "
                        "resubmitting.", FLOOR, "Every metric with its 95% interval, and the paired Δ against the "
                        "baseline and the floor, are on the private board once the host reveals it.", SORT)),
    PRIVATE: " ".join((COMPARABLE, FLOOR, INTERVALS, f"{DETAILS}.", SORT)),
}
PUBLIC_NOTE = ("; each score is the public part's, as the Ladder released it: it moves only when a submission beats "
               "the team's best by more than one standard error")
