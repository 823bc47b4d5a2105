"""No one person is two: accounts need a second administrator, auditors at the command line
are accounts proving themselves, logins are throttled per account and address, ``next``
stays on this site, and the images auditors see are the images that were read."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scanpipe.cli import cli
from scanpipe.cli_review import register
from scanpipe.decisions import Attestation
from scanpipe.errors import ConfigError, DecisionError
from scanpipe.review import accounts
from scanpipe.review.accounts import POLICY, add_user, approve_user, login, unlock_user
from scanpipe.store.models import utcnow
from scanpipe.workflow import adjudicate_card
from tests.test_review_support import (
    MARGINAL,
    PASSWORDS,
    ReviewWorld,
    build_world,
    csrf_of,
    decide,
)
from tests.test_review_support import login as web_login

if "user" not in cli.commands:
    register(cli)


@pytest.fixture
def world(tmp_path: Path) -> ReviewWorld:
    return build_world(tmp_path)


def _url(world: ReviewWorld) -> str:
    return f"sqlite:///{world.folder / 'review.db'}"


def _adjudicate(world: ReviewWorld, *args: str, stdin: str = "") -> Result:
    return CliRunner().invoke(cli, ["--db", _url(world), "adjudicate", MARGINAL, "--contest", "gov", "--votes", "gov-a",
                                    "--password-stdin", *args], input=stdin)


def _refusal(r: Result) -> str:
    return f"{r.output} {r.exception}"


# --------------------------------------------------------------------------------------
# an administrator alone cannot make the two auditors of the two-person rule


def test_one_admin_alone_cannot_make_two_auditors_who_confirm_each_other(world: ReviewWorld) -> None:
    for name in ("xavier", "yvonne"):
        pending = add_user(world.store, name, "auditor", f"{name}-password", actor="root")
        assert pending.state == "awaiting approval"
        with pytest.raises(ConfigError, match="root added .*; a second administrator must approve it"):
            approve_user(world.store, name, approver="root")
    add_user(world.store, "zed", "admin", "zed-password", actor="root")
    with pytest.raises(ConfigError, match="'zed' is not an active administrator"):  # nor can a pending admin approve anything
        approve_user(world.store, "xavier", approver="zed")
    with pytest.raises(ConfigError, match="awaits a second administrator's approval"):
        login(world.store, "xavier", "xavier-password", "t", idle=timedelta(minutes=5), absolute=timedelta(hours=1))
    with pytest.raises(DecisionError, match="the account 'xavier' awaits a second administrator's approval"):
        adjudicate_card(world.store, MARGINAL, contest="gov", votes=["gov-a"], auditors=["xavier"],
                        attestation=Attestation("review:xavier", accounts=True))
    assert world.store.decisions() == []
    with pytest.raises(ConfigError, match="adding an account needs an administrator"):
        add_user(world.store, "mallory", "auditor", "mallory-password", actor="alice")  # not an admin
    approve_user(world.store, "xavier", approver="ruth")
    assert adjudicate_card(world.store, MARGINAL, contest="gov", votes=["gov-a"], auditors=["xavier"],
                           attestation=Attestation("review:xavier", accounts=True)).state.value == "first_half"


def test_the_users_page_adds_an_account_that_another_admin_approves(world: ReviewWorld) -> None:
    root = web_login(world.app, "root")
    token = csrf_of(root.get("/users").text)
    assert root.post("/users/add", data={"csrf": token, "username": "nina", "role": "auditor", "password": "nina-password"}).status_code == 302
    page = root.get("/users").text
    assert "awaiting approval" in page and "/users/nina/approve" not in page  # root added it: no button for root
    refused = root.post("/users/nina/approve", data={"csrf": token})
    assert refused.status_code == 400 and "a second administrator must approve it" in refused.text
    ruth = web_login(world.app, "ruth")
    assert "/users/nina/approve" in ruth.get("/users").text
    assert ruth.post("/users/nina/approve", data={"csrf": csrf_of(ruth.get("/users").text)}).status_code == 302
    assert [u.state for u in accounts.list_users(world.store) if u.username == "nina"] == ["active"]
    assert [(e.actor, e.detail["user"]) for e in world.store.events("user_approved")][-1] == ("ruth", "nina")


# --------------------------------------------------------------------------------------
# adjudicate names auditors by account


def test_adjudicate_refuses_unknown_disabled_and_unproven_auditors(world: ReviewWorld) -> None:
    unknown = _adjudicate(world, "--auditor", "ann", stdin="whatever-password\n")
    assert unknown.exit_code != 0 and "ann: wrong user name or password" in _refusal(unknown)
    wrong = _adjudicate(world, "--auditor", "alice", stdin="not-her-password\n")
    assert wrong.exit_code != 0 and "alice: wrong user name or password" in _refusal(wrong)
    accounts.disable_user(world.store, "bob")
    disabled = _adjudicate(world, "--auditor", "bob", stdin=PASSWORDS["bob"] + "\n")
    assert disabled.exit_code != 0 and "bob: wrong user name or password, or the account is disabled" in _refusal(disabled)
    board = _adjudicate(world, "--auditor", "carol", stdin=PASSWORDS["carol"] + "\n")
    assert board.exit_code != 0 and "the account 'carol' is a board account; only auditor accounts decide here" in _refusal(board)
    free = _adjudicate(world, "--auditor", "Ann Lee", "--no-accounts")
    assert free.exit_code != 0 and "this database has review accounts: name auditors by account" in _refusal(free)
    assert world.store.decisions() == []
    assert [e.detail["user"] for e in world.store.events("login_failed")] == ["ann", "alice", "bob"]


def test_one_operator_cannot_record_both_halves(world: ReviewWorld) -> None:
    first = _adjudicate(world, "--auditor", "alice", stdin=PASSWORDS["alice"] + "\n")
    assert first.exit_code == 1 and "awaiting a second, different auditor" in first.output, _refusal(first)
    second = _adjudicate(world, "--auditor", "bob", stdin=PASSWORDS["bob"] + "\n")
    assert second.exit_code != 0 and "the first half of this decision was recorded from cli:" in _refusal(second)
    assert [d.state.value for d in world.store.decisions()] == ["first_half"]
    status, text = decide(web_login(world.app, "bob"), MARGINAL, "gov", ["gov-a"])  # bob's own login: another operator
    assert status == 200 and "final: confirmed by bob after alice" in text


def test_a_first_half_in_the_review_is_confirmed_at_the_command_line_by_another_account(world: ReviewWorld) -> None:
    decide(web_login(world.app, "alice"), MARGINAL, "gov", ["gov-a"])
    r = _adjudicate(world, "--auditor", "bob", stdin=PASSWORDS["bob"] + "\n")
    assert r.exit_code == 1 and "final: confirmed by bob after alice" in r.output, _refusal(r)  # 1: other cards still queued
    [final] = [e.detail for e in world.store.events("decision") if e.detail["state"] == "final"]
    assert final["accounts"] is True and final["operator"].startswith("cli:") and final["auditors"] == ["alice", "bob"]


def test_two_accounts_attest_jointly_each_with_their_password(world: ReviewWorld) -> None:
    one = _adjudicate(world, "--auditor", "alice", "--auditor", "bob", stdin=PASSWORDS["alice"] + "\n")
    assert one.exit_code != 0 and "one password line per --auditor (2)" in _refusal(one)
    r = _adjudicate(world, "--auditor", "alice", "--auditor", "bob", stdin=f"{PASSWORDS['alice']}\n{PASSWORDS['bob']}\n")
    assert r.exit_code == 1 and "final" in r.output, _refusal(r)  # 1: other cards still queued
    [logged] = world.store.events("decision")
    assert logged.detail["joint"] is True and [e.detail["user"] for e in world.store.events("authenticated")] == ["alice", "bob"]


def test_overriding_a_contest_nothing_queued_needs_a_reason_and_is_logged(world: ReviewWorld) -> None:
    from tests.test_review_support import CLEAN

    base = ["--db", _url(world), "adjudicate", CLEAN, "--contest", "gov", "--votes", "gov-a", "--password-stdin",
            "--auditor", "alice", "--auditor", "bob"]
    stdin = f"{PASSWORDS['alice']}\n{PASSWORDS['bob']}\n"
    refused = CliRunner().invoke(cli, base, input=stdin)
    assert refused.exit_code != 0 and "Governor ('gov') is not queued for a person (the machine's reading stands)" in _refusal(refused)
    assert world.store.decisions() == []
    ok = CliRunner().invoke(cli, [*base, "--override", "--reason", "the scan shows a mark the machine missed"], input=stdin)
    assert ok.exit_code == 1 and "final" in ok.output, _refusal(ok)  # 1: other cards still queued
    [logged] = world.store.events("decision")
    assert logged.detail["override"] == "the scan shows a mark the machine missed"


# --------------------------------------------------------------------------------------
# login throttling per account and address, with backoff and unlock


class Clock:
    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now


def _try(world: ReviewWorld, user: str, password: str, remote: str) -> str:
    try:
        opened = login(world.store, user, password, remote, idle=timedelta(minutes=5), absolute=timedelta(hours=1))
    except accounts.Throttled:
        return "throttled"
    return "ok" if opened else "failed"


def test_failed_logins_throttle_one_account_from_one_address_with_growing_waits(world: ReviewWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(accounts, "utcnow", clock)
    proxy = "10.0.0.1"  # the TLS proxy a whole room of auditors comes through
    for _ in range(POLICY.free_failures):
        assert _try(world, "bob", "guess", proxy) == "failed"
    assert _try(world, "bob", PASSWORDS["bob"], proxy) == "throttled"  # the password is not even checked
    for _ in range(30):  # someone guessing other names from the same address
        assert _try(world, "mallory", "guess", proxy) in ("failed", "throttled")
    assert _try(world, "alice", PASSWORDS["alice"], proxy) == "ok"  # the room is not locked out
    assert _try(world, "bob", PASSWORDS["bob"], "10.0.0.2") == "ok"  # bob from elsewhere is not locked out
    clock.now += POLICY.first_wait + timedelta(seconds=1)
    assert _try(world, "bob", "guess again", proxy) == "failed"  # the wait is over; this failure doubles it
    clock.now += POLICY.first_wait + timedelta(seconds=1)
    assert _try(world, "bob", PASSWORDS["bob"], proxy) == "throttled"
    clock.now += POLICY.first_wait
    assert _try(world, "bob", PASSWORDS["bob"], proxy) == "ok"
    assert POLICY.wait_after(POLICY.free_failures + 40) == POLICY.max_wait


def test_an_admin_unlocks_an_account_on_the_users_page_and_at_the_command_line(world: ReviewWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(accounts, "utcnow", clock)
    for remote in ("127.0.0.1", "10.9.9.9"):
        for _ in range(POLICY.free_failures + 2):
            _try(world, "bob", "guess", remote)
    assert [(x.username, x.remote) for x in accounts.lockouts(world.store)] == [("bob", "10.9.9.9"), ("bob", "127.0.0.1")]
    root = web_login(world.app, "root")
    page = root.get("/users").text
    assert 'name="remote" value="127.0.0.1"' in page
    assert root.post("/users/bob/unlock", data={"csrf": csrf_of(page), "remote": "127.0.0.1"}).status_code == 302
    assert _try(world, "bob", PASSWORDS["bob"], "127.0.0.1") == "ok"
    assert _try(world, "bob", PASSWORDS["bob"], "10.9.9.9") == "throttled"
    r = CliRunner().invoke(cli, ["--db", _url(world), "user", "unlock", "bob"])
    assert r.exit_code == 0 and "user bob unlocked" in r.output
    assert _try(world, "bob", PASSWORDS["bob"], "10.9.9.9") == "ok"
    assert [(e.actor, e.detail["remote"]) for e in world.store.events("login_unlocked")] == [("root", "127.0.0.1"), ("cli", None)]
    with pytest.raises(ConfigError, match="there is no user 'nobody'"):
        unlock_user(world.store, "nobody")


def test_a_trusted_proxy_names_the_client_and_nobody_else_does(world: ReviewWorld) -> None:
    from scanpipe.review import ReviewConfig, create_app

    app = create_app(world.store, ReviewConfig(trusted_proxies=frozenset({"127.0.0.1"})))
    client = app.test_client()
    token = csrf_of(client.get("/login").text)
    client.post("/login", data={"csrf": token, "username": "bob", "password": "x"}, headers={"X-Forwarded-For": "6.6.6.6, 192.0.2.7"})
    untrusted = world.app.test_client()
    token2 = csrf_of(untrusted.get("/login").text)
    untrusted.post("/login", data={"csrf": token2, "username": "bob", "password": "x"}, headers={"X-Forwarded-For": "192.0.2.8"})
    assert [e.detail["remote"] for e in world.store.events("login_failed")] == ["192.0.2.7", "127.0.0.1"]


# --------------------------------------------------------------------------------------
# open redirect


@pytest.mark.parametrize("target", ["/\t/evil.example", "//evil.example", "/\\evil.example", "/\n/evil.example",
                                    "https://evil.example/", " /evil", "/\x00/evil.example", "/\r\n/evil.example", "/#//evil"])
def test_login_never_redirects_off_site(world: ReviewWorld, target: str) -> None:
    client = world.app.test_client()
    page = client.get("/login", query_string={"next": target})
    r = client.post("/login", data={"csrf": csrf_of(page.text), "username": "alice", "password": PASSWORDS["alice"], "next": target})
    assert r.status_code == 302
    assert r.headers["Location"] in ("/", "http://localhost/"), r.headers["Location"]


def test_login_follows_a_path_of_this_site(world: ReviewWorld) -> None:
    client = world.app.test_client()
    page = client.get("/login?next=%2Fqueue%3Fprecinct%3DP01")
    assert 'value="/queue?precinct=P01"' in page.text
    r = client.post("/login", data={"csrf": csrf_of(page.text), "username": "alice", "password": PASSWORDS["alice"],
                                    "next": "/queue?precinct=P01"})
    assert r.headers["Location"].endswith("/queue?precinct=P01")


# --------------------------------------------------------------------------------------
# the images auditors see


def test_a_card_image_swapped_after_ingest_is_refused_and_logged(world: ReviewWorld) -> None:
    alice = web_login(world.app, "alice")
    assert alice.get(f"/image/{MARGINAL}").status_code == 200
    image = world.folder / "card.png"
    original = image.read_bytes()
    image.write_bytes(original[:-12] + b"another card")  # same name, other bytes
    r = alice.get(f"/image/{MARGINAL}")
    assert r.status_code == 409 and "is not the image that was read" in r.text and b"another card" not in r.data
    [logged] = world.store.events("image_mismatch")
    assert logged.actor == "alice" and logged.detail["card"] == MARGINAL and logged.detail["refused"] == "review"


def test_export_refuses_image_files_that_changed_and_writes_nothing(world: ReviewWorld, tmp_path: Path) -> None:
    out = tmp_path / "cvr.json"
    ok = CliRunner().invoke(cli, ["--db", _url(world), "export", "cvr", "--out", str(out)])
    assert ok.exit_code == 0, _refusal(ok)
    assert json.loads(out.read_text())["CVR"]
    out.unlink()
    (world.folder / "card.png").write_bytes(b"\x89PNG not the card")
    r = CliRunner().invoke(cli, ["--db", _url(world), "export", "cvr", "--out", str(out)])
    assert r.exit_code != 0 and "image file(s) are not the images that were read" in _refusal(r) and str(world.folder / "card.png") in _refusal(r)
    assert not out.exists()
    assert [e.detail["refused"] for e in world.store.events("image_mismatch")] == [f"export cvr {out}"]


# --------------------------------------------------------------------------------------
# the board at the command line: each member present types their own password


def test_a_board_ruling_at_the_command_line_needs_each_members_password(world: ReviewWorld) -> None:
    from dataclasses import replace

    from scanpipe.reconcile.service import reconcile
    from scanpipe.types import CardKind, MarkStatus, PairingLabel
    from tests.helpers import read_card
    from tests.test_review_support import UNREADABLE

    card = read_card("7" * 64, world.election, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}}, kind=CardKind.DUPLICATE)
    world.store.save_cards([replace(card, label=PairingLabel(CardKind.DUPLICATE, "B0007", "B0007", None),
                                    source=replace(card.source, path=str(world.folder / "card.png"), sha256=UNREADABLE))])
    reconcile(world.store)
    args = ["--db", _url(world), "board", "rule", "B0007", "--ruling", "counts-as-is", "--member", "carol=for", "--member", "dave=for",
            "--by", "carol", "--password-stdin"]
    forged = CliRunner().invoke(cli, args, input=f"{PASSWORDS['carol']}\nnot-daves-password\n")
    assert forged.exit_code != 0 and "dave: wrong user name or password" in _refusal(forged)
    assert world.store.board_rulings() == {}
    ok = CliRunner().invoke(cli, args, input=f"{PASSWORDS['carol']}\n{PASSWORDS['dave']}\n")
    assert ok.exit_code == 0 and "for: carol, dave" in ok.output, _refusal(ok)
    assert dict(world.store.board_rulings()["B0007"].members) == {"carol": "for", "dave": "for"}
