"""§12-108 pages: new duplicates on paper (with a print button), the board's rulings on
orphans and conflicts, and the board's sign-off of matched pairs in batches.

Every page calls the same library functions as ``scanpipe duplicates`` and ``scanpipe board``
(:mod:`scanpipe.reconcile.paper`, :mod:`scanpipe.reconcile.board`).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.reconcile import board as board_lib
from scanpipe.reconcile import paper
from scanpipe.reconcile.rulings import BOARD_VOTES, RulingKind, board_question
from scanpipe.review.accounts import usernames_with_role
from scanpipe.review.app import election, refuse, store
from scanpipe.review.index import refresh_item
from scanpipe.review.security import ADMIN, AUDITOR, BOARD, OBSERVER, allow, consume_form_token, issue_form_token
from scanpipe.rules import rule_set

SIGNOFF_BATCH = 25  # matched pairs on one sign-off page


@allow(AUDITOR, BOARD, ADMIN, OBSERVER)
def duplicates() -> Any:
    show_all = request.args.get("all") == "1"
    items = paper.paper_statuses(store()) if show_all else paper.pending_new_duplicates(store())
    tokens = {p.serial: issue_form_token(g.session.csrf, f"print|{p.serial}") for p in items}
    names = {p.id: p.name for p in election().precincts}
    return render_template("duplicates.html", items=items, tokens=tokens, names=names, show_all=show_all,
                           rules=rule_set(election().jurisdiction), can_print=g.session.user.role != OBSERVER)


@allow(AUDITOR, BOARD, ADMIN)
def duplicate_print(serial: str) -> Any:
    """The print button: the PDF to print, recorded as printed by the person who asked for it."""
    refused = consume_form_token(store(), g.session.csrf, request.form.get("form_token"), f"print|{serial}", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    nd = next((p for p in paper.paper_statuses(store()) if p.serial == serial), None)
    if nd is None:
        return refuse(404, f"there is no current new duplicate {serial}")
    pdf = paper.paper_pdf(store(), election(), serial)
    store().mark_new_duplicate_printed(serial, by=g.session.user.username)
    response = Response(pdf, mimetype="application/pdf")
    response.headers["Content-Disposition"] = f"attachment; filename={serial}.pdf"
    return response


@allow(BOARD, ADMIN)
def board_matters() -> Any:
    s = _standing_of_matters()
    rules = rule_set(election().jurisdiction)
    cases = [(p, board_question(p.base_status, p.serial, rules.missing_record_source.citation)) for p in s]
    tokens = {p.serial: issue_form_token(g.session.csrf, f"rule|{p.serial}") for p, _ in cases}
    return render_template("board_matters.html", cases=cases, tokens=tokens, members=usernames_with_role(store(), BOARD),
                           votes=BOARD_VOTES, rules=rules)


def _standing_of_matters() -> list[Any]:
    from scanpipe.workflow import standing

    return [p for p in standing(store()).pairs if p.awaits_board]


@allow(BOARD)
def board_rule() -> Any:
    form = request.form
    serial = form.get("serial", "")
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), f"rule|{serial}", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    kind = form.get("ruling", "")
    if kind not in {k.value for k in RulingKind}:
        return refuse(400, "Choose the board's ruling: counts as it is, a new duplicate, or nothing counts.")
    members = {m[len("member_"):]: v for m, v in form.items() if m.startswith("member_") and v in BOARD_VOTES}
    made = board_lib.rule_on_serial(store(), serial, ruling=RulingKind(kind), card=form.get("card") or None, members=members,
                                    actor=g.session.user.username, note=(form.get("note") or "").strip()[:2000] or None)
    refresh_item(store(), election(), serial, "pair")
    return render_template("message.html", title="Ruling recorded", status=200,
                           message=f"Ruling {made.id} on serial {serial}: {made.ruling.value.replace('_', ' ')} "
                                   f"(for: {', '.join(made.ayes)}; rule set {made.rule_set}).")


@allow(BOARD, ADMIN)
def board_pairs() -> Any:
    serials = board_lib.unexamined_pairs(store())
    batch = [store().get_pair(s) for s in serials[:SIGNOFF_BATCH]]
    token = issue_form_token(g.session.csrf, "signoff")
    names = {p.id: p.name for p in election().precincts}
    return render_template("board_pairs.html", pairs=[p for p in batch if p is not None], total=len(serials), token=token,
                           members=usernames_with_role(store(), BOARD), votes=BOARD_VOTES, names=names,
                           rules=rule_set(election().jurisdiction))


@allow(BOARD)
def board_sign_off() -> Any:
    form = request.form
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), "signoff", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    serials = form.getlist("serial")
    members = {m[len("member_"):]: v for m, v in form.items() if m.startswith("member_") and v in BOARD_VOTES}
    signoff = board_lib.sign_off_pairs(store(), serials, members=members, actor=g.session.user.username,
                                       note=(form.get("note") or "").strip()[:2000] or None)
    return redirect(url_for("board_pairs", done=signoff))


def register(app: Flask) -> None:
    app.add_url_rule("/duplicates", "duplicates", duplicates)
    app.add_url_rule("/duplicates/<serial>/print", "duplicate_print", duplicate_print, methods=["POST"])
    app.add_url_rule("/board/matters", "board_matters", board_matters)
    app.add_url_rule("/board/matters/rule", "board_rule", board_rule, methods=["POST"])
    app.add_url_rule("/board/pairs", "board_pairs", board_pairs)
    app.add_url_rule("/board/pairs/sign-off", "board_sign_off", board_sign_off, methods=["POST"])
