"""The recount case page: scope, progress per precinct, what is left, costs so far, the report.

Readable by every role, observers included (Md. Election Law §12-106(a)(2): the public may be
present). The report is built on request from the library (the same value as
``scanpipe recount report``); once the board certified, the frozen files are served as well.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, render_template

from scanpipe.audit import append_event
from scanpipe.errors import ConfigError
from scanpipe.review.app import refuse, store
from scanpipe.review.security import ALL_ROLES, allow
from scanpipe.store.models import utcnow

MIMETYPES = {"report.html": "text/html; charset=utf-8", "report.pdf": "application/pdf", "report.json": "application/json",
             "results.json": "application/json"}


@allow(*ALL_ROLES)
def case() -> Any:
    from scanpipe.recount.render import left_text
    from scanpipe.recount.service import build, costs_of, load_case, snapshot, status_of
    from scanpipe.store.recount import RecountStore

    try:
        loaded = load_case(store())
    except ConfigError as e:
        return render_template("case.html", case=None, message=str(e))
    snap = snapshot(store(), loaded)
    built = build(store(), loaded=(loaded, snap))
    return render_template("case.html", case=status_of(loaded, snap), costs=costs_of(loaded, snap), left=left_text(built.report),
                           report=built.report, certification=RecountStore(store()).certification(loaded.record.id), files=list(MIMETYPES))


def _send(name: str, data: bytes, what: str) -> Any:
    with store()._write() as conn:
        append_event(conn, "export", {"what": what, "file": name}, g.session.user.username, utcnow())
    response = Response(data, mimetype=MIMETYPES[name])
    if name != "report.html":
        response.headers["Content-Disposition"] = f"attachment; filename={name}"
    else:  # the report's own inline style needs to apply; it runs no script
        response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"
    return response


@allow(*ALL_ROLES)
def case_report(name: str) -> Any:
    from scanpipe.recount.service import build, render_files

    if name not in MIMETYPES:
        return refuse(404, f"The report has no file {name!r}: {', '.join(MIMETYPES)}.")
    try:
        files = render_files(build(store()))
    except ConfigError as e:
        return refuse(404, str(e))
    return _send(name, files[name], "recount report (built now)")


@allow(*ALL_ROLES)
def case_certified(name: str) -> Any:
    from scanpipe.recount.service import load_case
    from scanpipe.store.recount import RecountStore

    if name not in MIMETYPES:
        return refuse(404, f"The report has no file {name!r}: {', '.join(MIMETYPES)}.")
    try:
        data = RecountStore(store()).certified_file(load_case(store()).record.id, name)
    except ConfigError as e:
        return refuse(404, str(e))
    if data is None:
        return refuse(404, "The board has not certified this recount yet.")
    return _send(name, data, "recount report (as certified)")


def register(app: Flask) -> None:
    app.add_url_rule("/case", "case", case)
    app.add_url_rule("/case/report/<name>", "case_report", case_report)
    app.add_url_rule("/case/certified/<name>", "case_certified", case_certified)
