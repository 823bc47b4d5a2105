"""The auditors' and the board's pages: progress, queue, card, pair, history, image, board."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.errors import DecisionError
from scanpipe.names import Names, reason_label
from scanpipe.review import decide, index, views
from scanpipe.review.accounts import usernames_with_role
from scanpipe.review.app import election, refuse, store
from scanpipe.review.images import ImageMissing, card_image
from scanpipe.review.security import (
    ADMIN,
    ALL_ROLES,
    AUDITOR,
    BOARD,
    allow,
    consume_form_token,
    issue_form_token,
)
from scanpipe.types import CardKind

WRITE_IN_FIELD = "write_in_"  # form field prefix: write_in_<option id> = the name as read


def _blind() -> bool:
    return request.cookies.get("sp_blind") == "1"


def item_url(kind: str, item: str) -> str:
    return url_for("card", card_id=item) if kind == "card" else url_for("pair", serial=item)


@allow(*ALL_ROLES)
def dashboard() -> Any:
    return render_template("dashboard.html", progress=index.progress(store()))


@allow(AUDITOR, ADMIN)
def queue() -> Any:
    choices = index.filter_choices(store())
    f = index.Filters(*(request.args.get(k) or None for k in ("precinct", "batch", "reason", "state")))
    page = request.args.get("page", "1")
    page_no = int(page) if page.isdigit() and 0 < int(page) < 100_000 else 1
    items, total = index.page_of_items(store(), f, page=page_no)
    pages = max(1, -(-total // index.PAGE_SIZE))
    names = Names(election())
    places = store().card_places([i.item for i in items if i.kind == "card"])
    titles = {i.item: (places[i.item].label if i.item in places else i.item[:16]) if i.kind == "card" else f"serial {i.item}" for i in items}
    labels = {"precinct": {p: names.precinct(p) for p in choices["precinct"]}, "reason": {r: reason_label(r) for r in choices["reason"]},
              "batch": {b: b for b in choices["batch"]}}
    return render_template("queue.html", items=items, total=total, page=page_no, pages=pages, filters=f, choices=choices, labels=labels,
                           titles=titles, names=names, reason_label=reason_label, progress=index.progress(store()),
                           args={k: v for k, v in request.args.items() if k != "page"})


def _page(kind: str, item: str, *, message: str | None = None, message_state: str | None = None) -> Any:
    me = g.session.user.username
    build = views.pair_page if kind == "pair" else views.card_page
    try:
        page = build(store(), election(), item, blind=_blind(), me=me)
    except DecisionError:
        return _history(kind, item, message=message, message_state=message_state)
    tokens = {c.id: issue_form_token(g.session.csrf, f"{kind}|{item}|{c.id}") for c in page.contests}
    identity = issue_form_token(g.session.csrf, f"identify|{item}")
    names = Names(election())
    styles = [s.id for s in election().ballot_styles]
    precincts = [(p.id, p.name) for p in election().precincts]
    nxt = index.next_item(store(), item, me=me)
    return render_template("item.html", page=page, tokens=tokens, identity_token=identity, blind=_blind(), names=names,
                           styles=styles, precincts=precincts, kinds=[k.value for k in CardKind if k.value != "unknown"],
                           next_item=nxt, next_url=item_url(nxt.kind, nxt.item) if nxt else None, election=election(),
                           message=message, message_state=message_state, canonical=item_url(kind, item),
                           history_url=url_for("history_item", kind=kind, item=item))


def _history(kind: str, item: str, *, message: str | None = None, message_state: str | None = None) -> Any:
    try:
        view = views.history_page(store(), election(), kind, item, blind=_blind(), reveal_open=g.session.user.role in (BOARD, ADMIN))
    except DecisionError as e:
        return refuse(404, str(e))
    return render_template("history_item.html", view=view, message=message, message_state=message_state,
                           canonical=url_for("history_item", kind=kind, item=item), blind=_blind())


@allow(AUDITOR, BOARD, ADMIN)
def card(card_id: str) -> Any:
    return _page("card", card_id)


@allow(AUDITOR, BOARD, ADMIN)
def pair(serial: str) -> Any:
    return _page("pair", serial)


@allow(AUDITOR, BOARD, ADMIN)
def history() -> Any:
    return render_template("history.html", rows=views.decided_items(store(), election()))


@allow(AUDITOR, BOARD, ADMIN)
def history_item(kind: str, item: str) -> Any:
    if kind not in ("card", "pair"):
        return refuse(404, f"{kind!r} is neither a card nor a pair")
    return _history(kind, item)


def _write_ins(form: Any, votes: list[str]) -> dict[str, str]:
    return {key[len(WRITE_IN_FIELD):]: value for key, value in form.items() if key.startswith(WRITE_IN_FIELD) and value.strip()}


def _decide(kind: str, item: str) -> Any:
    form = request.form
    contest = form.get("contest", "")
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), f"{kind}|{item}|{contest}", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    votes = form.getlist("votes")
    if not votes and form.get("novote") != "1":
        return refuse(400, "No option was chosen: tick 'no vote in this contest' to record that the voter made no choice.")
    rule = form.get("rule") or None
    note = (form.get("note") or "").strip()[:2000] or None
    write_ins = _write_ins(form, votes)
    me = g.session.user.username
    outcome = decide.decide(store(), election(), kind=kind, item=item, contest=contest, votes=votes,
                            auditor=me, rule=rule, note=note, write_ins=write_ins)
    what = f"Serial {item}" if kind == "pair" else f"Card {_place(item)}"
    message = views.recorded_message(election(), what, contest, votes, write_ins, f"{outcome.message} (decision {outcome.decision_id})")
    return _after_decision(kind, item, me, message, outcome.state.value)


def _place(card_id: str) -> str:
    place = store().card_place(card_id)
    return place.label if place is not None else card_id[:12]


def _after_decision(kind: str, item: str, me: str, message: str, state: str) -> Any:
    """Move on: the same item while it has a contest left for this auditor, else the next item."""
    if decide.contests_left_for(store(), item, me):
        return _page(kind, item, message=message, message_state=state)
    nxt = index.next_item(store(), item, me=me)
    if nxt is not None:
        return _page(nxt.kind, nxt.item, message=message, message_state=state)
    return render_template("decided.html", message=message, state=state, again=item_url(kind, item))


@allow(AUDITOR)
def card_decide(card_id: str) -> Any:
    return _decide("card", card_id)


@allow(AUDITOR)
def pair_decide(serial: str) -> Any:
    return _decide("pair", serial)


@allow(AUDITOR)
def card_identify(card_id: str) -> Any:
    form = request.form
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), f"identify|{card_id}", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    kind = form.get("kind") or None
    if kind is not None and kind not in {k.value for k in CardKind}:
        return refuse(400, f"kind {kind!r} is not a card kind")
    decide.identify_card(store(), election(), card_id, style=form.get("style") or None, precinct=form.get("precinct") or None,
                         kind=CardKind(kind) if kind else None, actor=g.session.user.username)
    return redirect(url_for("card", card_id=card_id))


@allow(AUDITOR, BOARD, ADMIN)
def image(card_id: str) -> Any:
    try:
        img = card_image(store(), card_id)
    except ImageMissing as e:
        return refuse(404, str(e))
    response = Response(img.data, mimetype=img.mimetype)
    response.headers["Cache-Control"] = "private, max-age=600"
    return response


def _board_page(message: str | None = None, message_state: str | None = None) -> Any:
    items, _ = index.page_of_items(store(), index.Filters(state="escalated"), size=200)
    cases = [views.board_case(store(), election(), i, e.contest, e.latest)
             for i in items for e in decide.escalations(store(), i.item) if e.contest in i.contests]
    tokens = {(c.item, c.contest): issue_form_token(g.session.csrf, f"board|{c.item}|{c.contest}") for c in cases}
    return render_template("board.html", cases=cases, tokens=tokens, members=usernames_with_role(store(), BOARD), election=election(),
                           rules=decide.rule_set_of(election()), message=message, message_state=message_state,
                           canonical=url_for("board"))


@allow(BOARD, ADMIN)
def board() -> Any:
    return _board_page()


@allow(BOARD)
def board_decide() -> Any:
    form = request.form
    item, contest = form.get("item", ""), form.get("contest", "")
    refused = consume_form_token(store(), g.session.csrf, form.get("form_token"), f"board|{item}|{contest}", g.session.user.id)
    if refused is not None:
        return refuse(409, refused)
    decision = form.get("decision", "")
    if not decision.isdigit():
        return refuse(400, "the form names no escalated decision")
    members = {m[len("member_"):]: v for m, v in form.items() if m.startswith("member_") and v in decide.BOARD_VOTES}
    votes = form.getlist("votes")
    if not votes and form.get("novote") != "1":
        return refuse(400, "No option was chosen: tick 'no vote in this contest' to record that the voter made no choice.")
    write_ins = _write_ins(form, votes)
    outcome = decide.board_decide(store(), election(), item=item, contest=contest, decision_id=int(decision), votes=votes,
                                  members=members, board_members=usernames_with_role(store(), BOARD), rule=form.get("rule") or None,
                                  note=(form.get("note") or "").strip()[:2000] or None, actor=g.session.user.username,
                                  write_ins=write_ins)
    what = f"Serial {item}" if store().get_pair(item) is not None and store().get_card(item) is None else f"Card {_place(item)}"
    message = views.recorded_message(election(), what, contest, votes, write_ins, f"{outcome.message} (decision {outcome.decision_id})")
    return _board_page(message, outcome.state.value)


def register(app: Flask) -> None:
    app.add_url_rule("/", "dashboard", dashboard)
    app.add_url_rule("/queue", "queue", queue)
    app.add_url_rule("/card/<card_id>", "card", card)
    app.add_url_rule("/card/<card_id>/decide", "card_decide", card_decide, methods=["POST"])
    app.add_url_rule("/card/<card_id>/identify", "card_identify", card_identify, methods=["POST"])
    app.add_url_rule("/pair/<serial>", "pair", pair)
    app.add_url_rule("/pair/<serial>/decide", "pair_decide", pair_decide, methods=["POST"])
    app.add_url_rule("/history", "history", history)
    app.add_url_rule("/history/<kind>/<item>", "history_item", history_item)
    app.add_url_rule("/image/<card_id>", "image", image)
    app.add_url_rule("/board", "board", board)
    app.add_url_rule("/board/decide", "board_decide", board_decide, methods=["POST"])
