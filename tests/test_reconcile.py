"""Reconciliation of duplicates with originals (Md. Election Law §12-108(d)).

1. End to end with the CLI on the committed pair fixtures (``fixtures/ballot_images/pairs``):
   exact statuses and ``export pairs`` rows, a two-auditor adjudication that makes a new
   duplicate, the tally following the decided intent, and the printed new duplicate rescanned.
2. Properties of the pure core (``pair_cards``, ``resolve_pair``, ``apply_pairs``) on
   hand-built typed values.
3. Bad input: each card is stored with its reason and queued, and nothing decided changes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path

import cv2
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from scanpipe.cli import cli
from scanpipe.counting import count_card
from scanpipe.reconcile.pairing import pair_cards
from scanpipe.reconcile.resolve import apply_pairs, resolve_pair
from scanpipe.synth.pairs import _turn_patch, label_patch
from scanpipe.synth.render import card_code_payload, render_card
from scanpipe.synth.scan import save_scan
from scanpipe.types import CardKind, MarkStatus, PairingLabel
from tests.helpers import read_card, tiny_election

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ballot_images" / "pairs"
EXPECTED = json.loads((FIXTURES / "deck" / "expected_pairs.json").read_text())["serials"]


def by_case(case: str) -> str:
    return next(s for s, t in EXPECTED.items() if t["case"] == case)


class Run:
    """The scanpipe CLI against one SQLite database, in one working folder."""

    def __init__(self, root: Path) -> None:
        self.root, self.db = root, f"sqlite:///{root / 'db.sqlite'}"

    def __call__(self, *args: str, code: int | tuple[int, ...] = (0, 1)) -> str:
        result = CliRunner().invoke(cli, ["--db", self.db, *args], catch_exceptions=False)
        allowed = code if isinstance(code, tuple) else (code,)
        assert result.exit_code in allowed, result.output
        return result.output

    def pairs(self) -> list[dict[str, str]]:
        self("export", "pairs", "--out", str(self.root / "pairs.csv"), code=0)
        return list(csv.DictReader(io.StringIO((self.root / "pairs.csv").read_text(encoding="utf-8"))))

    def tally(self) -> dict[tuple[str, str, str], int]:
        self("tally", "--out", str(self.root / "tally.csv"))
        rows = csv.DictReader(io.StringIO((self.root / "tally.csv").read_text()))
        return {(r["precinct"], r["contest"], r["option"]): int(r["votes"]) for r in rows}


@pytest.fixture(scope="module")
def reconciled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Path]:
    root = tmp_path_factory.mktemp("pairs")
    shutil.copytree(FIXTURES, root / "fx")
    run = Run(root)
    run("init", "--election", str(root / "fx" / "election" / "election.json"), code=0)
    run("ingest", str(root / "fx" / "deck" / "cards"), "-q", "--workers", "1")
    run("import", "duplication-log", str(root / "fx" / "deck" / "duplication_log.csv"), code=0)
    run("reconcile", "--render-dir", str(root / "new"))
    return run, root


def test_every_serial_gets_exactly_its_expected_status(reconciled: tuple[Run, Path]) -> None:
    run, _ = reconciled
    got = {r["serial"]: (r["status"], r["contests"]) for r in run.pairs()}
    assert got == {s: (t["status"], ";".join(t["contests"])) for s, t in EXPECTED.items()}


def test_export_pairs_rows_are_exact(reconciled: tuple[Run, Path]) -> None:
    run, root = reconciled
    cards = root / "fx" / "deck"

    def paths(group: list[dict]) -> str:
        return ";".join(str(cards / f) for card in group for f in card["files"])

    expected = [{"serial": s, "status": t["status"], "duplicate": paths(t["duplicates"]), "original": paths(t.get("originals", [])),
                 "contests": ";".join(t["contests"]), "counted": "duplicate" if t["status"] == "match" else "none"}
                for s, t in sorted(EXPECTED.items())]
    rows = run.pairs()
    conflict = by_case("conflict")
    for row, want in zip(rows, expected, strict=True):
        if row["serial"] == conflict:  # several cards of one kind: order is the store's (by card id)
            row["duplicate"] = ";".join(sorted(row["duplicate"].split(";")))
            want["duplicate"] = ";".join(sorted(want["duplicate"].split(";")))
        assert row == want
    assert (root / "pairs.csv").read_bytes().startswith(b"serial,status,duplicate,original,contests,counted\r\n")


def test_adjudicating_a_mismatch_makes_a_new_duplicate_that_rescans_as_decided(reconciled: tuple[Run, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    run, root = reconciled
    monkeypatch.chdir(root)
    serial = by_case("wrong_option")
    truth = EXPECTED[serial]
    (contest,) = truth["contests"]
    precinct = truth["precinct"]
    before = run.tally()
    copied = EXPECTED[serial]  # the duplicate's (wrong) reading is pending until decided
    assert all(before.get((precinct, contest, o), 0) == 0 for o in truth["intent"][contest]) or copied
    out = run("adjudicate", serial, "--contest", contest, "--votes", ",".join(truth["intent"][contest]),
              "--auditor", "Ann Lee", "--auditor", "Bo Park", "--no-accounts")
    assert "final" in out.lower() or "decision" in out.lower()
    row = next(r for r in run.pairs() if r["serial"] == serial)
    assert (row["status"], row["counted"]) == ("resolved", f"{serial}-R1")
    # the decision reconciled that serial alone: a whole reconcile finds nothing else to do
    decided_rows = run.pairs()
    assert f"{serial}-R2" not in run("reconcile")
    assert run.pairs() == decided_rows
    png = root / "new-duplicates" / f"{serial}-R1.png"
    assert png.is_file() and (root / "new-duplicates" / f"{serial}-R1.pdf").is_file()
    after = run.tally()
    for option in truth["intent"][contest]:
        assert after[(precinct, contest, option)] == before.get((precinct, contest, option), 0) + 1
    assert after[(precinct, contest, "#pending")] == before[(precinct, contest, "#pending")] - 1
    # the printed new duplicate, scanned: it pairs with the original and reads as decided
    run("ingest", str(png), "--batch", "reprints", "-q")
    out = run("reconcile", "--render-dir", str(root / "new"))
    assert f"printed new duplicate scanned: {serial}-R1" in out
    row = next(r for r in run.pairs() if r["serial"] == serial)
    assert (row["status"], row["counted"]) == ("resolved", f"{serial}-R1")
    assert str(png) not in row["duplicate"]  # never a second duplicate
    assert run.tally() == after
    assert "problem" not in run("reconcile", "--render-dir", str(root / "new"))


class _Killed(BaseException):
    """Stands for a SIGKILL: nothing after it in the process runs."""


def _killed_after_a_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Run, str, list[str]]:
    """The pair fixtures reconciled, then an `adjudicate` killed after its decision and new
    duplicate were stored and before the new duplicate's PNG and PDF were written (seen in
    bench_chaos: the CVR's Location differed). Returns the run, the serial and the command."""
    import scanpipe.reconcile.service as service
    from scanpipe.store.repository import Store

    shutil.copytree(FIXTURES, tmp_path / "fx")
    run = Run(tmp_path)
    run("init", "--election", str(tmp_path / "fx" / "election" / "election.json"), code=0)
    run("ingest", str(tmp_path / "fx" / "deck" / "cards"), "-q", "--workers", "1")
    run("reconcile")
    serial = by_case("wrong_option")
    (contest,) = EXPECTED[serial]["contests"]
    command = ["adjudicate", serial, "--contest", contest, "--votes", ",".join(EXPECTED[serial]["intent"][contest]),
               "--auditor", "Ann Lee", "--auditor", "Bo Park", "--no-accounts", "--render-dir", str(tmp_path / "new")]

    def killed(*args: object, **kwargs: object) -> None:
        raise _Killed()

    with monkeypatch.context() as patched:
        patched.setattr(service, "write_paper_files", killed)
        with pytest.raises(_Killed):
            run(*command)
    store = Store.open(run.db)
    try:  # the decision and its new duplicate were stored; its paper was not written
        assert [(nd.serial, nd.image_path) for nd in store.new_duplicates()] == [(f"{serial}-R1", None)]
    finally:
        store.close()
    assert not (tmp_path / "new").exists()
    return run, serial, command


@pytest.mark.parametrize("next_command", ["the decision again", "reconcile"])
def test_a_new_duplicate_stored_before_a_kill_gets_its_paper_from_the_next_command(
        next_command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, serial, command = _killed_after_a_decision(tmp_path, monkeypatch)
    if next_command == "reconcile":
        out = run("reconcile", "--render-dir", str(tmp_path / "new"))
    else:  # as an operator would: the same decision supersedes the stored one, the same new duplicate stands
        out = run(*command, code=1)
        assert "supersedes an earlier decision" in out
    assert (tmp_path / "new" / f"{serial}-R1.png").is_file() and (tmp_path / "new" / f"{serial}-R1.pdf").is_file(), out
    out = run("reconcile", "--render-dir", str(tmp_path / "new"))
    assert f"{serial}-R2" not in out  # the stored decision's new duplicate, not another one
    assert not (tmp_path / "new" / f"{serial}-R2.png").exists()


def test_one_serials_standing_is_its_part_of_the_whole(reconciled: tuple[Run, Path]) -> None:
    """standing(serial=S), which reads only S's cards, says for S what standing() says."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import standing

    run, _ = reconciled
    store = Store.open(run.db)
    try:
        whole = standing(store)
        for outcome in whole.pairs:
            own = standing(store, serial=outcome.serial)
            assert own.pairs == (outcome,), outcome.serial
            ids = {*outcome.duplicates, *outcome.originals}
            assert {c.card_id: c for c in own.counts if c.card_id in ids} == {c.card_id: c for c in whole.counts if c.card_id in ids}
    finally:
        store.close()


# --------------------------------------------------------------------------------------
# Properties of the pure core

ELECTION = tiny_election()
SERIALS = ("A1", "A2", "B7")
OPTIONS = {c.id: [o.id for o in c.options if not o.write_in] for c in ELECTION.contests}


@st.composite
def labelled_cards(draw: st.DrawFn) -> list:
    cards = []
    for k in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from([CardKind.DUPLICATE, CardKind.ORIGINAL]))
        serial = draw(st.sampled_from(SERIALS))
        marks = {cid: {o: MarkStatus.YES for o in draw(st.lists(st.sampled_from(opts), max_size=2, unique=True))}
                 for cid, opts in OPTIONS.items()}
        card = read_card(f"{k:02d}" + "c" * 20, ELECTION, "S1", "P01", marks, kind=kind)
        label = PairingLabel(kind, serial, serial, None)
        cards.append(replace(card, label=label))
    return cards


def counting(cards: list) -> dict[str, list]:
    counts = {c.source.card_id: count_card(ELECTION, c, {}) for c in cards}
    pairings = pair_cards(cards)
    outcomes = [resolve_pair(ELECTION, p, counts, {}) for p in pairings]
    result = apply_pairs(counts, outcomes, {}, ELECTION)
    return {"pairings": pairings, "outcomes": outcomes, "counts": result}


@settings(max_examples=60, deadline=None)
@given(labelled_cards(), st.randoms(use_true_random=False))
def test_a_serial_pairs_once_no_card_counts_twice_and_order_does_not_matter(cards: list, rnd) -> None:
    done = counting(cards)
    serials = [p.serial for p in done["pairings"]]
    assert len(serials) == len(set(serials))
    seen = [cid for p in done["pairings"] for s in (*p.duplicates, *p.originals) for cid in s.card_ids]
    assert len(seen) == len(set(seen)) == len(cards)
    kinds = {c.source.card_id: c for c in cards}
    for serial in serials:
        members = {c.source.card_id for c in cards if c.label.base_serial == serial} | {f"serial:{serial}"}
        counting_entries = [c for c in done["counts"] if c.card_id in members and c.counts]
        assert len(counting_entries) <= 1, serial
    assert not any(c.counts for c in done["counts"] if c.card_id in kinds and kinds[c.card_id].kind is CardKind.ORIGINAL)
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    again = counting(shuffled)
    assert again["outcomes"] == done["outcomes"]
    assert sorted(again["counts"], key=lambda c: c.card_id) == sorted(done["counts"], key=lambda c: c.card_id)


def test_equal_cards_match_and_a_differing_contest_is_listed() -> None:
    dup = read_card("d" * 30, ELECTION, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}}, kind=CardKind.DUPLICATE)
    org = read_card("o" * 30, ELECTION, "S1", "P01", {"gov": {"gov-b": MarkStatus.YES}}, kind=CardKind.ORIGINAL)
    same = read_card("s" * 30, ELECTION, "S1", "P01", {"gov": {"gov-a": MarkStatus.YES}}, kind=CardKind.ORIGINAL)
    label = {CardKind.DUPLICATE: PairingLabel(CardKind.DUPLICATE, "X1", "X1", None), CardKind.ORIGINAL: PairingLabel(CardKind.ORIGINAL, "X1", "X1", None)}
    dup, org, same = (replace(c, label=label[c.kind]) for c in (dup, org, same))
    assert [o.status.value for o in counting([dup, org])["outcomes"]] == ["mismatch"]
    assert counting([dup, org])["outcomes"][0].listed == ("gov",)
    assert [o.status.value for o in counting([dup, same])["outcomes"]] == ["match"]


# --------------------------------------------------------------------------------------
# Bad input: stored with a reason, queued, and nothing already decided changes

def _card_with_labels(election_json: Path, labels: list[str], out: Path, *, election_id: str | None = None) -> Path:
    from scanpipe.election import load_election

    election = load_election(election_json)
    dpi = 150
    payload = card_code_payload(election_id or election.id, "S1", "P01", 1)
    rgb = render_card(election, "S1", 1, "P01", dpi, code_payload=payload)
    for k, text in enumerate(labels):
        turned, mask = _turn_patch(label_patch(text, dpi), 0.0)
        y, x = int((6.6 + 1.2 * k) * dpi), int(1.0 * dpi)
        rgb[y:y + mask.shape[0], x:x + mask.shape[1]][mask] = turned[mask]
    save_scan(out, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY), "png", dpi=dpi)
    return out


def test_bad_labels_are_stored_with_their_reason_and_nothing_decided_changes(reconciled: tuple[Run, Path], tmp_path: Path) -> None:
    run, root = reconciled
    before_pairs = {r["serial"]: r for r in run.pairs()}
    before_tally = run.tally()
    election_json = root / "fx" / "election" / "election.json"
    match = by_case("match")
    bad = tmp_path / "bad"
    bad.mkdir()
    _card_with_labels(election_json, ["XYZ-12"], bad / "not-a-label.png")
    _card_with_labels(election_json, ["DUP-Q1", "ORG-Q2"], bad / "two-labels.png")
    _card_with_labels(election_json, [f"ORG-{match}"], bad / "other-election.png", election_id="another-2026")
    run("ingest", str(bad), "--batch", "bad", "-q")
    run("reconcile", "--render-dir", str(root / "new"))
    queue = json.loads(run("queue", "--json"))
    reasons = {item["reason"] for item in queue}
    assert {"label_unreadable", "label_conflict", "wrong_election"} <= reasons, queue
    assert run.pairs() == list(before_pairs.values())
    after = run.tally()
    assert {k: v for k, v in after.items() if k[2] != "#pending" and not k[0].startswith("#")} == \
        {k: v for k, v in before_tally.items() if k[2] != "#pending" and not k[0].startswith("#")}


def test_a_stated_serial_wins_over_the_label_in_one_serials_standing(tmp_path: Path) -> None:
    """A card labelled A0042 that a person stated is B0007 belongs to B0007 in the whole
    standing and in each serial's own, so deciding A0042 never sees it."""
    from scanpipe.store.repository import Store
    from scanpipe.workflow import standing
    from tests.test_review_support import add_mismatched_pair, build_world

    world = build_world(tmp_path)
    add_mismatched_pair(world)  # A0042: duplicate gov-a, original gov-b
    stray = read_card("9" * 64, world.election, "S1", "P01", {"gov": {"gov-b": MarkStatus.YES}}, kind=CardKind.ORIGINAL)
    world.store.save_cards([replace(stray, label=PairingLabel(CardKind.ORIGINAL, "A0042", "A0042", None))])
    world.store.set_identification("9" * 64, serial="B0007")
    store: Store = world.store
    whole = {p.serial: p for p in standing(store).pairs}
    assert sorted(whole) == ["A0042", "B0007"] and whole["B0007"].originals == ("9" * 64,)
    for serial in ("A0042", "B0007"):
        assert standing(store, serial=serial).pairs == (whole[serial],)
