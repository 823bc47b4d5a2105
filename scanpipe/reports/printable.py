"""Printable papers: the tally, the duplicates report and the pull list as HTML and PDF.

HTML comes from Jinja2 templates beside this module (print styles included: a browser
prints them as they are); PDF is drawn with reportlab from the same values. Every paper
carries the election, its date and when it was printed; those a board signs end with
signature lines. The CSV of the duplicates report has one row per precinct whose status
columns add up to the serials, ids beside names.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scanpipe.errors import ConfigError
from scanpipe.names import pair_status_short
from scanpipe.reports.model import DuplicatesReport, Heading, PullRow, TallyReport

SIGN_TALLY = "We certify that this tally is the result of the recount of the precincts shown."
SIGN_DUPLICATES = "We certify that the duplicate ballots listed were compared with their originals as shown."
FORMATS = (".html", ".pdf", ".csv", ".txt")


def _env() -> Any:
    from jinja2 import Environment, PackageLoader, select_autoescape

    return Environment(loader=PackageLoader("scanpipe.reports", "templates"), autoescape=select_autoescape(["html"]))


def tally_html(r: TallyReport) -> str:
    return str(_env().get_template("tally.html").render(h=r.heading, r=r, signatures=SIGN_TALLY))


def duplicates_html(r: DuplicatesReport) -> str:
    columns = [pair_status_short(c) for c in r.columns]
    return str(_env().get_template("duplicates.html").render(h=r.heading, r=r, columns=columns, signatures=SIGN_DUPLICATES))


def pull_list_html(h: Heading, rows: Sequence[PullRow]) -> str:
    return str(_env().get_template("pull_list.html").render(h=h, rows=rows, signatures=None))


def duplicates_csv(r: DuplicatesReport) -> str:
    """One row per precinct and a last ``#all`` row; the status columns add up to ``serials``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["precinct", "precinct_name", "serials", *r.columns, "new_duplicates", "examined"])
    for x in (*r.lines, r.total):
        w.writerow([x.precinct_id, x.precinct, x.serials, *x.statuses, x.new_duplicates, x.examined])
    return buf.getvalue()


def output_format(path: Path, allowed: Sequence[str]) -> str:
    suffix = path.suffix.lower()
    if suffix not in allowed:
        raise ConfigError(f"--out {path}: write one of {', '.join(allowed)} (the file's extension chooses the format)")
    return suffix


# --------------------------------------------------------------------------------------
# PDF (reportlab)


def _pdf(h: Heading, story: list[Any], signatures: str | None, *, landscape_page: bool = False) -> bytes:
    from reportlab.lib.pagesizes import landscape, letter
    from reportlab.lib.units import inch
    from reportlab.platypus import SimpleDocTemplate

    buf = io.BytesIO()
    size = landscape(letter) if landscape_page else letter
    doc = SimpleDocTemplate(buf, pagesize=size, leftMargin=0.6 * inch, rightMargin=0.6 * inch, topMargin=0.6 * inch,
                            bottomMargin=0.7 * inch, title=f"{h.title} · {h.election}", author="scanpipe")
    head = _heading(h)
    tail = _signatures(signatures) if signatures else []

    def footer(canvas: Any, document: Any) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawString(0.6 * inch, 0.4 * inch, f"{h.election} · {h.election_date} · {h.title} · printed {h.generated_at}")
        canvas.drawRightString(size[0] - 0.6 * inch, 0.4 * inch, f"page {document.page}")
        canvas.restoreState()

    doc.build(head + story + tail, onFirstPage=footer, onLaterPages=footer)
    return buf.getvalue()


def _styles() -> Any:
    from reportlab.lib.styles import getSampleStyleSheet

    return getSampleStyleSheet()


def _heading(h: Heading) -> list[Any]:
    from reportlab.platypus import Paragraph, Spacer

    s = _styles()
    return [Paragraph(_esc(h.title), s["Title"]),
            Paragraph(f"<b>{_esc(h.election)}</b> · election day {_esc(h.election_date)} · printed {_esc(h.generated_at)}", s["Normal"]),
            Spacer(1, 10)]


def _esc(text: object) -> str:
    from xml.sax.saxutils import escape

    return escape(str(text))


def _table(rows: Sequence[Sequence[object]], *, numbers_from: int | None = None, total_rows: Sequence[int] = (),
           widths: Sequence[float] | None = None, small: bool = False) -> Any:
    from reportlab.lib import colors
    from reportlab.platypus import Paragraph, Table, TableStyle

    style = _styles()["BodyText"].clone("cell", fontSize=7.5 if small else 9.5, leading=9 if small else 11.5)
    data = [[Paragraph(_esc(c), style) if isinstance(c, str) else str(c) for c in r] for r in rows]
    t = Table(data, colWidths=widths, repeatRows=1, hAlign="LEFT")
    commands: list[Any] = [("GRID", (0, 0), (-1, -1), 0.5, colors.grey), ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eeeeee")),
                           ("VALIGN", (0, 0), (-1, -1), "TOP"), ("FONTSIZE", (0, 0), (-1, -1), 7.5 if small else 9.5)]
    if numbers_from is not None:
        commands.append(("ALIGN", (numbers_from, 1), (-1, -1), "RIGHT"))
    for r in total_rows:
        commands += [("FONTNAME", (0, r), (-1, r), "Helvetica-Bold"), ("LINEABOVE", (0, r), (-1, r), 1.2, colors.black)]
    t.setStyle(TableStyle(commands))
    return t


def _signatures(text: str) -> list[Any]:
    from reportlab.lib.units import inch
    from reportlab.platypus import KeepTogether, Paragraph, Spacer, Table, TableStyle

    s = _styles()
    rows: list[list[str]] = []
    for _ in range(3):
        rows += [["", "", ""], ["Board member (print name)", "Signature", "Date"]]
    t = Table(rows, colWidths=[2.6 * inch, 2.6 * inch, 1.6 * inch], rowHeights=[26, 12] * 3)
    style: list[Any] = [("FONTSIZE", (0, 0), (-1, -1), 8), ("VALIGN", (0, 0), (-1, -1), "BOTTOM")]
    for r in range(0, 6, 2):
        style.append(("LINEBELOW", (0, r), (-1, r), 0.8, "black"))
    t.setStyle(TableStyle(style))
    return [Spacer(1, 24), KeepTogether([Paragraph(_esc(text), s["Normal"]), Spacer(1, 6), t])]


def tally_pdf(r: TallyReport) -> bytes:
    from reportlab.platypus import KeepTogether, Paragraph

    s = _styles()
    story: list[Any] = []
    if r.pending_total:
        story.append(Paragraph(f"{r.pending_total} card-contest(s) still await a person (\"awaiting a person\" rows); "
                               "this tally is not final until they are decided.", s["Italic"]))
    for title, contests in [*((p.precinct, p.contests) for p in r.precincts), ("All precincts", r.totals)]:
        story.append(Paragraph(_esc(title), s["Heading2"]))
        for c in contests:
            rows: list[list[object]] = [["Choice", "Votes"], *([x.option, x.votes] for x in c.lines if x.is_option)]
            total_at = len(rows)
            rows.append(["Total votes", c.votes_total])
            rows += [[x.option.capitalize(), x.votes] for x in c.lines if not x.is_option]
            story.append(KeepTogether([Paragraph(f"{_esc(c.contest)} (vote for {c.vote_for})", s["Heading4"]),
                                       _table(rows, numbers_from=1, total_rows=(total_at,), widths=[300, 80])]))
    if r.unassigned:
        story.append(Paragraph(f"Cards without a known precinct or style (awaiting a person): {r.unassigned}", s["Normal"]))
    return _pdf(r.heading, story, SIGN_TALLY)


def duplicates_pdf(r: DuplicatesReport) -> bytes:
    from reportlab.platypus import Paragraph

    s = _styles()
    heads = ["Precinct", "Serials", *(pair_status_short(c) for c in r.columns), "New duplicates", "Examined by the board"]
    rows: list[list[object]] = [list(heads), *([x.precinct, x.serials, *x.statuses, x.new_duplicates, x.examined] for x in (*r.lines, r.total))]
    story: list[Any] = [Paragraph(f"<b>{_esc('FINAL' if r.final else 'NOT FINAL: ' + r.why_not_final)}</b>", s["Normal"]),
                        Paragraph(_esc(r.rule_set_line), s["Italic"]),
                        Paragraph("By precinct", s["Heading2"]), _table(rows, numbers_from=1, total_rows=(len(rows) - 1,), small=True),
                        Paragraph("Each serial has exactly one status, so the status columns add up to the serials. "
                                  "'New duplicates' counts the resolved serials now counted through a new duplicate.", s["Italic"])]
    if r.pending_paper:
        story += [Paragraph(_esc(f"New duplicates not yet stored with their original ({r.pending_paper_law})"), s["Heading2"]),
                  _table([["New duplicate", "Precinct", "Stands", "Next"], *[list(x) for x in r.pending_paper]], small=True)]
    if r.awaiting_board:
        story.append(Paragraph(_esc(f"Serials awaiting the board ({r.awaiting_board_law}): {', '.join(r.awaiting_board)}"), s["Normal"]))
    if r.log_size:
        story += [Paragraph(f"Canvass duplication log ({r.log_size} serials)", s["Heading2"]),
                  Paragraph(_esc(f"Expected by the log but not scanned ({len(r.log_missing)}): {', '.join(r.log_missing) or 'none'}"), s["Normal"]),
                  Paragraph(_esc(f"Scanned but not in the log ({len(r.log_unknown)}): {', '.join(r.log_unknown) or 'none'}"), s["Normal"])]
    story.append(Paragraph(f"Every serial ({len(r.serials)})", s["Heading2"]))
    serials: list[list[object]] = [["Serial", "Precinct", "Found", "Now", "Contests for a person", "Duplicate", "Original", "Counts", "Examined"]]
    serials += [[x.serial, x.precinct, x.found, x.now, x.contests or "-", "; ".join(c.label for c in x.duplicates) or "-",
                 "; ".join(c.label for c in x.originals) or "-", x.counted, x.examined or "-"] for x in r.serials]
    story.append(_table(serials, small=True))
    return _pdf(r.heading, story, SIGN_DUPLICATES, landscape_page=True)


def pull_list_pdf(h: Heading, rows: Sequence[PullRow]) -> bytes:
    from reportlab.platypus import Paragraph

    s = _styles()
    data: list[list[object]] = [["Pulled", "Batch", "Position", "File", "Serial", "Card", "Why", "Precinct"]]
    data += [["[  ]", x.place.batch, x.place.seq, x.place.file + (f" p{x.place.page}" if x.place.page_count > 1 else ""),
              x.serial or "-", x.role, x.reason_text, x.precinct] for x in rows]
    story = [Paragraph(f"{len(rows)} card(s) a person must see, in the order the paper is kept (batch, then position).", s["Normal"]),
             _table(data, small=True, widths=[38, 70, 46, 110, 80, 55, 180, 130])]
    return _pdf(h, story, None, landscape_page=True)


def write_paper(path: Path, *, html: str | None = None, pdf: bytes | None = None, text: str | None = None) -> None:
    """Write one paper whole (to a temporary name first): nothing half-written is left."""
    tmp = path.with_name(path.name + ".partial")
    if pdf is not None:
        tmp.write_bytes(pdf)
    else:
        tmp.write_text(html if html is not None else text or "", encoding="utf-8", newline="")
    tmp.replace(path)
