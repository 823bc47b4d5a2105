"""§12-108 pages: new duplicates on paper (with a print button), the board's rulings on
orphans and conflicts, and the board's sign-off of matched pairs in batches.

Every page calls the same library functions as ``scanpipe duplicates`` and ``scanpipe board``
(:mod:`scanpipe.reconcile.paper`, :mod:`scanpipe.reconcile.board`). A ruling or a sign-off is
proposed by one member and voted on by each member from their own login
(:mod:`scanpipe.review.board`); no form field names another member's vote.
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.reconcile import board as board_lib
from scanpipe.reconcile import paper
from scanpipe.reconcile.rulings import board_question
from scanpipe.review import board as board_votes
from scanpipe.review.accounts import usernames_with_role
from scanpipe.review.app import election, refuse, store
from scanpipe.review.routes_review import proposal_tokens
from scanpipe.review.security import (
    ADMIN,
    AUDITOR,
    BOARD,
    OBSERVER,
    allow,
    consume_form_token,
    issue_form_token,
)
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
    proposals = board_votes.open_proposals(store(), [p.serial for p, _ in cases], matter="ruling")
    tokens = {p.serial: issue_form_token(g.session.csrf, f"rule|{p.serial}") for p, _ in cases}
    texts = {x.id: _ruling_text(x.payload) for x in proposals.values()}
    return render_template("board_matters.html", cases=cases, tokens=tokens, members=usernames_with_role(store(), BOARD),
                           rules=rules, proposals={k[0]: v for k, v in proposals.items()},
                           ptokens=proposal_tokens(proposals.values()), texts=texts)


def _ruling_text(payload: dict[str, Any]) -> str:
    text = {"counts_as_is": "a duplicate counts as it is", "new_duplicate": "a new duplicate over every contest of the style",
            "nothing": "nothing counts for this serial"}.get(str(payload.get("ruling")), str(payload.get("ruling")))
    return text + (f" (card {str(payload['card'])[:16]})" if payload.get("card") else "")


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
    if serial not in {p.serial for p in _standing_of_matters()}:
        return refuse(400, f"serial {serial} is not an orphan or a conflict awaiting the board")
    me = g.session
    board_votes.propose_ruling(store(), serial=serial, ruling=form.get("ruling", ""), card=form.get("card") or None,
                               note=(form.get("note") or "").strip()[:2000] or None, member=me.user.username, session=me.token_sha256)
    return redirect(url_for("board_matters"))


@allow(BOARD, ADMIN)
def board_pairs() -> Any:
    serials = board_lib.unexamined_pairs(store())
    batch = [store().get_pair(s) for s in serials[:SIGNOFF_BATCH]]
    token = issue_form_token(g.session.csrf, "signoff")
    names = {p.id: p.name for p in election().precincts}
    proposal = board_votes.open_sign_off(store())
    proposed = [store().get_pair(s) for s in proposal.payload["serials"]] if proposal is not None else []
    return render_template("board_pairs.html", pairs=[p for p in batch if p is not None], total=len(serials), token=token,
                           members=usernames_with_role(store(), BOARD), names=names, rules=rule_set(election().jurisdiction),
                           proposal=proposal, proposed=[p for p in proposed if p is not None],
                           ptokens=proposal_tokens([proposal] if proposal is not None else []))


@allow(BOARD)
def board_sign_off() -> Any:
    form = request.form
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), "signoff", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    unexamined = set(board_lib.unexamined_pairs(store()))
    serials = [s for s in form.getlist("serial") if s in unexamined]
    me = g.session
    board_votes.propose_sign_off(store(), serials=serials, note=(form.get("note") or "").strip()[:2000] or None,
                                 member=me.user.username, session=me.token_sha256)
    return redirect(url_for("board_pairs"))


def register(app: Flask) -> None:
    app.add_url_rule("/duplicates", "duplicates", duplicates)
    app.add_url_rule("/duplicates/<serial>/print", "duplicate_print", duplicate_print, methods=["POST"])
    app.add_url_rule("/board/matters", "board_matters", board_matters)
    app.add_url_rule("/board/matters/rule", "board_rule", board_rule, methods=["POST"])
    app.add_url_rule("/board/pairs", "board_pairs", board_pairs)
    app.add_url_rule("/board/pairs/sign-off", "board_sign_off", board_sign_off, methods=["POST"])
