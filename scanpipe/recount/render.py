"""The report's files from its value: ``report.html`` (Jinja2, an inline SVG chart) and
``report.pdf`` (ReportLab: text, tables and a vector chart, no screenshot).

Both read only the report value (:func:`scanpipe.recount.report.build_report`), so the HTML,
the PDF and ``report.json`` always say the same thing.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from scanpipe.recount.report import PAIR_COLUMNS, change_per_precinct
from scanpipe.rules import rule_set

BAR_COLOURS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b7791f", "#97266d", "#285e61")


def left_text(report: Mapping[str, Any]) -> str:
    """What keeps a recount from being complete, in words."""
    prog = report["progress"]
    parts = [f"{p['precinct_name']}: {p['pending']} card(s) awaiting a person" for p in prog["precincts"] if p["pending"]]
    parts += [f"{p['precinct_name']}: no card counted yet" for p in prog["precincts"] if p["counted"] == 0 and not p["pending"]]
    if prog["cards_of_no_known_precinct"]:
        parts.append(f"{prog['cards_of_no_known_precinct']} card(s) of no known precinct to identify")
    if prog["new_duplicates_to_print_and_scan"]:
        parts.append(f"new duplicate(s) to print and scan: {', '.join(prog['new_duplicates_to_print_and_scan'])}")
    return "; ".join(parts) or "nothing"


# --------------------------------------------------------------------------------------
# HTML


@cache
def _env() -> Any:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=select_autoescape(["html"]))


def render_html(report: Mapping[str, Any]) -> str:
    c = report["case"]
    per: dict[str, list[dict[str, Any]]] = {}
    for row in report["precincts"]:
        per.setdefault(row["precinct_name"], []).append(row)
    names = {p["petitioner"]: p["petitioner_name"] for p in c["petitions"]}
    return str(_env().get_template("report.html").render(
        r=report, c=c, per_precinct=list(per.items()), chart=svg_chart(report), pair_columns=PAIR_COLUMNS, left_text=left_text(report),
        rule_names=dict(rule_set(c["jurisdiction"]).intent_choices()), petitioner_names=names))


def svg_chart(report: Mapping[str, Any]) -> str:
    """Horizontal bars: per precinct, each candidate's change (recount − certified)."""
    groups = change_per_precinct(report)
    options = [name for name, _ in groups[0][1]] if groups else []
    biggest = max([abs(n) for _, changes in groups for _, n in changes] + [1])
    row_h, label_w, half = 14, 190, 220
    height = sum(len(ch) * row_h + 10 for _, ch in groups) + 40
    width = label_w + 2 * half + 80
    mid = label_w + half
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" id="chart" '
           f'aria-label="Change of each candidate per precinct">',
           f'<line x1="{mid}" y1="0" x2="{mid}" y2="{height - 30}" stroke="#333"/>']
    y = 5
    for precinct, changes in groups:
        out.append(f'<text x="0" y="{y + 11}" font-size="12">{escape(precinct)}</text>')
        for i, (option, n) in enumerate(changes):
            w = abs(n) / biggest * half
            x = mid if n >= 0 else mid - w
            colour = BAR_COLOURS[i % len(BAR_COLOURS)]
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{max(w, 0.5):.1f}" height="{row_h - 3}" fill="{colour}">'
                       f'<title>{escape(precinct)}: {escape(option)} {n:+,}</title></rect>')
            tx = mid + w + 4 if n >= 0 else mid - w - 4
            anchor = "start" if n >= 0 else "end"
            out.append(f'<text x="{tx:.1f}" y="{y + 10}" font-size="10" text-anchor="{anchor}">{n:+,}</text>')
            y += row_h
        y += 10
    for i, option in enumerate(options):
        out.append(f'<rect x="{label_w + i * 150}" y="{height - 22}" width="10" height="10" fill="{BAR_COLOURS[i % len(BAR_COLOURS)]}"/>'
                   f'<text x="{label_w + i * 150 + 14}" y="{height - 13}" font-size="11">{escape(option)}</text>')
    out.append("</svg>")
    return "\n".join(out)


# --------------------------------------------------------------------------------------
# PDF


@cache
def _font() -> tuple[str, str]:
    """DejaVu Sans when the system has it (§, −, ×, ≤ and every name's letters), else Helvetica."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for folder in (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/dejavu")):
        regular, bold = folder / "DejaVuSans.ttf", folder / "DejaVuSans-Bold.ttf"
        if regular.is_file() and bold.is_file():
            pdfmetrics.registerFont(TTFont("DejaVuSans", str(regular)))
            pdfmetrics.registerFont(TTFont("DejaVuSans-Bold", str(bold)))
            return "DejaVuSans", "DejaVuSans-Bold"
    return "Helvetica", "Helvetica-Bold"


def _plain(text: str) -> str:
    if _font()[0] != "Helvetica":
        return text
    return text.replace("−", "-").replace("≤", "<=").replace("≥", ">=").replace("…", "...").replace("—", "-")


def render_pdf(report: Mapping[str, Any]) -> bytes:
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.lib.units import inch
    from reportlab.platypus import (
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    regular, bold = _font()
    body = ParagraphStyle("body", fontName=regular, fontSize=9, leading=12)
    small = ParagraphStyle("small", parent=body, fontSize=7.5, leading=9.5, textColor=colors.HexColor("#333333"))
    number = ParagraphStyle("number", parent=small, alignment=2)
    h1 = ParagraphStyle("h1", parent=body, fontName=bold, fontSize=16, leading=20, spaceAfter=4)
    h2 = ParagraphStyle("h2", parent=body, fontName=bold, fontSize=12, leading=15, spaceBefore=10, spaceAfter=4)
    banner = ParagraphStyle("banner", parent=body, fontName=bold, borderColor=colors.HexColor("#aa1100"), borderWidth=1, borderPadding=4,
                            spaceBefore=6, spaceAfter=6)

    def p(text: str, style: ParagraphStyle = body) -> Paragraph:
        return Paragraph(escape(_plain(text)), style)

    def table(rows: list[list[Any]], widths: list[float] | None = None) -> Table:
        t = Table([[p(x, number if x[:1] in "+-" and x[1:2].isdigit() else small) if isinstance(x, str) else p(f"{x:,}", number)
                    for x in row] for row in rows], colWidths=widths, repeatRows=1)
        t.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.4, colors.grey), ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                               ("VALIGN", (0, 0), (-1, -1), "TOP")]))
        return t

    r, c = report, report["case"]
    story: list[Any] = [p(f"Recount of {c['contest_title']}", h1),
                        p(f"{c['election_name']} ({c['election_date']}) · case {c['id']} · rule set {r['rule_set']} ({r['rules']['statutes']})")]
    cert = r["certification"]
    if cert and cert["stale"]:
        story.append(p(f"STALE: certified on {cert['certified_at']} by {', '.join(cert['members'])}; the data changed afterwards. "
                       "This report is not the certified one.", banner))
    elif cert:
        story.append(p(f"Certified on {cert['certified_at']} by {', '.join(cert['members'])}; the data is unchanged since.", banner))
    if not r["complete"]:
        story.append(p(f"PRELIMINARY: the recount is not complete ({left_text(r)}).", banner))
    if c["terminated"]:
        t = c["terminated"]
        story.append(p(f"Terminated on {t['at']} at the request of {t['requested_by']} ({t['reason']}). Recounted to the end: "
                       f"{', '.join(t['finished_names']) or 'none'}; keeping their certified figures: {', '.join(t['kept_certified_names']) or 'none'}.", banner))
    story.append(p("The case", h2))
    for pet in c["petitions"]:
        story.append(p(f"{pet['kind'].capitalize()} by {pet['petitioner_name']}, filed {pet['filed_on']} (certified {pet['certified_on']}, "
                       f"last day to file {pet['deadline']}): {', '.join(pet['precinct_names'])}."))
        for line in pet["arithmetic"]:
            story.append(p(line, small))
    cr = r["contest_result"]
    story += [p("Result", h2),
              p(f"The outcome {'CHANGED' if r['outcome_changed'] else 'did not change'}. Certified winner(s): "
                f"{', '.join(cr['certified_winners']) or 'none outright'}; after the recount: {', '.join(cr['winners_after_recount']) or 'none outright'}"
                + (f" (tied: {', '.join(cr['tied_after_recount'])})" if cr["tied_after_recount"] else "") + "."),
              table([["Whole contest", "Certified", "After the recount", "Change"]]
                    + [[o["option_name"], o["certified"], o["after_recount"], f"{o['change']:+,}"] for o in cr["options"]]),
              Spacer(1, 6),
              table([["Scope totals", "Certified", "Recount", "Change"]]
                    + [[t["option_name"], t["certified"], t["recount"], f"{t['change']:+,}"] for t in r["totals"]]),
              p("Change per precinct", h2), *_pdf_charts(r, regular)]
    story.append(p("Per precinct", h2))
    rows = [["Precinct", "Option", "Certified", "Recount", "Change"]]
    rows += [[x["precinct_name"] + ("" if x["recounted"] else " (certified kept)"), x["option_name"], x["certified"], x["recount"],
              f"{x['change']:+,}"] for x in r["precincts"]]
    story.append(table(rows, [1.9 * inch, 1.7 * inch, 0.9 * inch, 0.9 * inch, 0.8 * inch]))
    d = r["duplicates"]
    story += [p("Duplicates reconciled (Md. Election Law §12-108(d))", h2),
              table([["Precinct"] + [k.replace("_", " ") for k in PAIR_COLUMNS]]
                    + [[row["precinct_name"]] + [row[k] for k in PAIR_COLUMNS] for row in d["per_precinct"]]
                    + [["All"] + [d["totals"][k] for k in PAIR_COLUMNS]]),
              p("New duplicates: " + (", ".join(f"{nd['serial']} (replaces {nd['replaces']}, decided by {' and '.join(nd['decided_by'])}"
                                                 f"; paper: {nd['paper']})" for nd in d["new_duplicates"]) or "none") + "."),
              p("Orphans: " + (", ".join(f"{o['serial']} ({o['kind'].replace('_', ' ')}{_ruled(o)})" for o in d["orphans"]) or "none")
                + ". Conflicts: " + (", ".join(f"{o['serial']}{_ruled(o)}" for o in d["conflicts"]) or "none") + "."),
              p("Decided by: " + (", ".join(f"{k} ({n})" for k, n in d["decided_by"].items()) or "nobody") + ".")]
    dec = r["decisions"]
    story += [p("Decisions of people", h2),
              p(f"{dec['final']} final decision(s); {dec['awaiting_second_auditor']} awaiting a second auditor; {dec['escalated_open']} escalated "
                "and not yet ruled. Per rule: " + (", ".join(f"{k} {n}" for k, n in dec["per_rule"].items()) or "none") + ". By person: "
                + (", ".join(f"{k} ({n})" for k, n in dec["by_person"].items()) or "none") + ".")]
    story += [p(f"Board ruling on {b['item']}, {b['contest']}: {', '.join(b['votes'])}; "
                + ", ".join(f"{m} {v}" for m, v in b["members"].items()) + f" ({b['at']}).", small) for b in dec["board_rulings"]]
    costs = r["costs"]
    story += [p("Costs", h2), p(costs["why"] + (f" Charge: ${costs['charge']}." if costs.get("charge") else "") + (f" {costs['note']}." if costs.get("note") else ""))]
    for pet in costs["petitions"]:
        story.append(p(f"{pet['kind'].capitalize()}: {pet['payer']} pays", body))
        story.append(table([["Test", "Result", "Arithmetic"]] + [[t["rule"].replace("_", " ") + f" ({t['source']})", str(t["result"]), t["arithmetic"]]
                                                                 for t in pet["tests"]], [1.6 * inch, 0.7 * inch, 4.6 * inch]))
    rules = r["rules"]
    story += [p(f"Rule set {rules['version']}", h2)]
    story += [p(f"{name.replace('_', ' ')}: {f['value']} {f['unit']} ({f['source']})", small) for name, f in rules["figures"].items()]
    story += [p(f"{ch['question']}: {ch['choice']} (otherwise: {ch['otherwise']}; {ch['source']})", small) for ch in rules["choices"]]
    story += [Spacer(1, 8), p(f"Made by {r['software_version']} at {r['generated_at']}. Data SHA-256: {r['data_sha256']} ({r['data_hashed']}).", small)]
    buf = io.BytesIO()
    doc = SimpleDocTemplate(buf, pagesize=letter, leftMargin=0.7 * inch, rightMargin=0.7 * inch, topMargin=0.7 * inch, bottomMargin=0.7 * inch,
                            title=_plain(f"Recount of {c['contest_title']}"), author=r["software_version"], invariant=1)
    doc.build(story)
    return buf.getvalue()


def _ruled(matter: Mapping[str, Any]) -> str:
    r = matter.get("board_ruling")
    if not r:
        return ""
    return f"; the board ruled {r['ruling'].replace('_', ' ')}: " + ", ".join(f"{m} {v}" for m, v in r["members"].items())


def _pdf_charts(report: Mapping[str, Any], font: str, *, max_bars: int = 44) -> list[Any]:
    """The chart of the change per precinct, in as many drawings as fit a page each."""
    groups = change_per_precinct(report)
    biggest = max([abs(n) for _, ch in groups for _, n in ch] + [1])
    chunks: list[list[tuple[str, list[tuple[str, int]]]]] = [[]]
    for g in groups:
        if chunks[-1] and sum(len(ch) for _, ch in chunks[-1]) + len(g[1]) > max_bars:
            chunks.append([])
        chunks[-1].append(g)
    return [_pdf_chart(chunk, biggest, font) for chunk in chunks if chunk]


def _pdf_chart(groups: list[tuple[str, list[tuple[str, int]]]], biggest: int, font: str) -> Any:
    from reportlab.graphics.shapes import Drawing, Line, Rect, String
    from reportlab.lib import colors

    row_h, label_w, half = 11, 150, 130
    height = sum(len(ch) * row_h + 6 for _, ch in groups) + 24
    d = Drawing(label_w + 2 * half + 60, height)
    mid = label_w + half
    y = height - 4
    for precinct, changes in groups:
        d.add(String(0, y - 9, _plain(precinct)[:32], fontName=font, fontSize=8))
        for i, (_option, n) in enumerate(changes):
            w = abs(n) / biggest * half
            x = mid if n >= 0 else mid - w
            d.add(Rect(x, y - row_h + 2, max(w, 0.5), row_h - 3, fillColor=colors.HexColor(BAR_COLOURS[i % len(BAR_COLOURS)]), strokeColor=None))
            d.add(String(mid + w + 3 if n >= 0 else mid - w - 3, y - 8, f"{n:+,}", fontName=font, fontSize=7, textAnchor="start" if n >= 0 else "end"))
            y -= row_h
        y -= 6
    d.add(Line(mid, 18, mid, height, strokeColor=colors.black, strokeWidth=0.6))
    options = [name for name, _ in groups[0][1]] if groups else []
    for i, option in enumerate(options):
        d.add(Rect(label_w + i * 110, 4, 7, 7, fillColor=colors.HexColor(BAR_COLOURS[i % len(BAR_COLOURS)]), strokeColor=None))
        d.add(String(label_w + i * 110 + 10, 5, _plain(option)[:20], fontName=font, fontSize=7))
    return d
