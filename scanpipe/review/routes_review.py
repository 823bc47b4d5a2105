"""The auditors' and the board's pages: progress, queue, card, pair, history, image, board."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, url_for

from scanpipe.errors import DecisionError
from scanpipe.names import Names, reason_label
from scanpipe.review import board as board_votes
from scanpipe.review import decide, index, views
from scanpipe.review.accounts import usernames_with_role
from scanpipe.review.app import election, refuse, store
from scanpipe.review.images import ImageChanged, ImageMissing, card_image
from scanpipe.review.security import (
    ADMIN,
    ALL_ROLES,
    AUDITOR,
    BOARD,
    allow,
    consume_form_token,
    issue_form_token,
)
from scanpipe.rules import rule_set
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
        img = card_image(store(), card_id, actor=g.session.user.username)
    except ImageMissing as e:
        return refuse(404, str(e))
    except ImageChanged as e:
        return refuse(409, str(e))
    response = Response(img.data, mimetype=img.mimetype)
    response.headers["Cache-Control"] = "private, max-age=600"
    return response


@allow(BOARD, ADMIN)
def board() -> Any:
    items, _ = index.page_of_items(store(), index.Filters(state="escalated"), size=200)
    escalated = [(i, e) for i in items for e in decide.escalations(store(), i.item) if e.contest in i.contests]
    cases = [views.board_case(store(), election(), i, e.contest, e.latest) for i, e in escalated]
    proposals = board_votes.open_proposals(store(), sorted({i.item for i, _ in escalated}))
    tokens = {(c.item, c.contest): issue_form_token(g.session.csrf, f"board-propose|{c.item}|{c.contest}")
              for c in cases if (c.item, c.contest) not in proposals}
    names = Names(election())
    texts = {p.id: names.votes([o for o in p.votes], empty="no vote in this contest") for p in proposals.values()}
    return render_template("board.html", cases=cases, proposals=proposals, tokens=tokens, ptokens=proposal_tokens(proposals.values()),
                           texts=texts, members=usernames_with_role(store(), BOARD), quorum=rule_set(election().jurisdiction).board_quorum,
                           election=election(), rules=decide.rule_set_of(election()), canonical=url_for("board"))


def proposal_tokens(proposals: Any) -> dict[int, dict[str, str]]:
    """The one-time tokens of the vote, close and withdraw forms of each open proposal."""
    return {p.id: {step: issue_form_token(g.session.csrf, f"board-{step}|{p.id}") for step in ("vote", "close", "withdraw")}
            for p in proposals}


BACK = {"board": "board", "board_matters": "board_matters", "board_pairs": "board_pairs"}  # pages a board form returns to


def _back() -> Any:
    return redirect(url_for(BACK.get(request.form.get("back", ""), "board")))


def _board_token(purpose: str) -> str | None:
    return consume_form_token(store(), g.session.csrf, request.form.get("form_token"), purpose, g.session.user.id)


def _proposal_id() -> int:
    value = request.form.get("proposal", "")
    if not value.isdigit():
        raise DecisionError("the form names no board proposal")
    return int(value)


@allow(BOARD)
def board_propose() -> Any:
    """A member proposes the board's reading of an escalated contest; that is their vote for it."""
    form = request.form
    item, contest = form.get("item", ""), form.get("contest", "")
    refused = _board_token(f"board-propose|{item}|{contest}")
    if refused is not None:
        return refuse(409, refused)
    decision = form.get("decision", "")
    if not decision.isdigit():
        return refuse(400, "the form names no escalated decision")
    votes = form.getlist("votes")
    if not votes and form.get("novote") != "1":
        return refuse(400, "No option was chosen: tick 'no vote in this contest' to record that the voter made no choice.")
    me = g.session
    board_votes.propose(store(), election(), item=item, contest=contest, decision_id=int(decision), votes=votes,
                        rule=form.get("rule") or None, note=(form.get("note") or "").strip()[:2000] or None,
                        member=me.user.username, session=me.token_sha256)
    return redirect(url_for("board"))


@allow(BOARD)
def board_vote() -> Any:
    """The logged-in member's own vote on an open proposal (no other member's vote is read
    from the form)."""
    proposal = _proposal_id()
    refused = _board_token(f"board-vote|{proposal}")
    if refused is not None:
        return refuse(409, refused)
    me = g.session
    board_votes.cast_vote(store(), proposal_id=proposal, vote=request.form.get("vote", ""), member=me.user.username,
                          session=me.token_sha256)
    return _back()


@allow(BOARD)
def board_close() -> Any:
    """A member who voted closes the vote: recorded, rejected, or refused without a quorum."""
    proposal = _proposal_id()
    refused = _board_token(f"board-close|{proposal}")
    if refused is not None:
        return refuse(409, refused)
    closed = board_votes.close_vote(store(), election(), proposal_id=proposal, member=g.session.user.username,
                                    board_members=usernames_with_role(store(), BOARD))
    prop = closed.proposal
    if closed.rejected:
        return render_template("message.html", title="Rejected", status=200,
                               message="The proposal was rejected: a majority of the members present did not vote for it. "
                                       "Nothing was recorded; a member may propose again.")
    if closed.ruling is not None:
        made = closed.ruling
        return render_template("message.html", title="Ruling recorded", status=200,
                               message=f"Ruling {made.id} on serial {made.serial}: {made.ruling.value.replace('_', ' ')} "
                                       f"(for: {', '.join(made.ayes)}; rule set {made.rule_set}).")
    if closed.signoff is not None:
        return redirect(url_for("board_pairs", done=closed.signoff))
    assert closed.decision is not None and prop.item is not None and prop.contest is not None
    what = f"Serial {prop.item}" if store().get_card(prop.item) is None else f"Card {_place(prop.item)}"
    message = views.recorded_message(election(), what, prop.contest, prop.votes, {},
                                     f"{closed.decision.message} (decision {closed.decision.decision_id})")
    return render_template("decided.html", message=message, state=closed.decision.state.value, again=url_for("board"), board=True)


@allow(BOARD)
def board_withdraw() -> Any:
    proposal = _proposal_id()
    refused = _board_token(f"board-withdraw|{proposal}")
    if refused is not None:
        return refuse(409, refused)
    board_votes.withdraw(store(), proposal_id=proposal, member=g.session.user.username)
    return _back()


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
    app.add_url_rule("/board/propose", "board_propose", board_propose, methods=["POST"])
    app.add_url_rule("/board/vote", "board_vote", board_vote, methods=["POST"])
    app.add_url_rule("/board/close", "board_close", board_close, methods=["POST"])
    app.add_url_rule("/board/withdraw", "board_withdraw", board_withdraw, methods=["POST"])
