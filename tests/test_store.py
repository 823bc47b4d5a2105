"""The store on SQLite and PostgreSQL: round trips, idempotent ingest, schema, election,
batches, identify, decisions, the log."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import event, func, select

from scanpipe.election import load_election as parse_election_file
from scanpipe.errors import ConfigError, DecisionError, StorageError
from scanpipe.store import DecisionState, ItemKind, Store, StoredCard
from scanpipe.store.models import Base, target_score_table
from scanpipe.store.repository import alembic_config
from scanpipe.types import (
    CardCode,
    CardKind,
    CardSource,
    CodeSymbology,
    ContestOutcome,
    ContestReading,
    DamageCause,
    DecodedCode,
    InterpretedCard,
    MachinePrintedCard,
    MachineRecord,
    MarkStatus,
    PairingLabel,
    ReadCard,
    Reason,
    Registration,
    TargetReading,
    TargetScore,
    UnreadableCard,
)

# --------------------------------------------------------------------------------------
# tiny cards built by hand


def source(seed: str, *, batch: str = "b1", page: int = 1, pages: int = 1) -> CardSource:
    sha = hashlib.sha256(seed.encode()).hexdigest()
    card_id = sha if page == 1 else f"{sha}-p{page}"
    return CardSource(card_id=card_id, sha256=sha, path=f"/scans/{seed}.png", page_index=page,
                      page_count=pages, batch=batch)


def target(contest: str, option: str, score: float, status: MarkStatus) -> TargetReading:
    s = TargetScore(contest=contest, option=option, score=score, fill_score=score * 0.9, stroke_score=1 / 3,
                    ring_score=0.1 + 0.2, damage_score=0.0 if score < 0.5 else 0.25, write_in_score=0.0,
                    box_px=(101.25, 202.5, 44.0, 28.000000000000004), shift_px=(-0.5, 1.75),
                    dot_in=0.0325 if score < 0.5 else 0.125,  # a lone dot's extent: stored and read back
                    damage_cause=None if score < 0.5 else DamageCause.FOLD)  # what the damage measured, or None: both kept
    return TargetReading(score=s, status=status, why=f"score {score:.3f} vs thresholds 0.080/0.600")


def read_card(seed: str, *, n_targets: int = 4, batch: str = "b1", votes: tuple[str, ...] = ("gov-a",)) -> InterpretedCard:
    opts = [f"gov-{chr(97 + i)}" for i in range(n_targets)]
    targets = tuple(target("gov", o, 0.9 if o in votes else 0.01 * i, MarkStatus.YES if o in votes else MarkStatus.NO)
                    for i, o in enumerate(opts))
    reading = ContestReading(contest="gov", votes=votes, outcome=ContestOutcome.COUNTED, undervotes=1 - len(votes))
    q1 = ContestReading(contest="q1", votes=(), outcome=ContestOutcome.PENDING, undervotes=0, unknown_options=("q1-for",))
    reg = Registration(homography=(1.0, 0.01, 12.5, -0.02, 1.0, 7.25, 0.0, 0.0, 1.0), method="fiducials",
                       rotated_180=True, dpi=200.0, anchors_found=4, residual_px=0.7071067811865476)
    interp = ReadCard(style="S1", page=1, precinct="P01", registration=reg, targets=targets, contests=(reading, q1),
                      reasons=(Reason.MARGINAL_MARK,), style_source="code")
    codes = (DecodedCode(CodeSymbology.QR, "SPB1|E=demo|S=S1|P=P01|PG=1", ((1.0, 2.0), (3.0, 2.0), (3.0, 4.0), (1.0, 4.0))),)
    return InterpretedCard(source=source(seed, batch=batch), kind=CardKind.DUPLICATE,
                           label=PairingLabel(CardKind.DUPLICATE, "A0042-R1", "A0042", 1),
                           card_code=CardCode("demo", "S1", "P01", 1), interpretation=interp, codes=codes, seconds=0.125)


def machine_card(seed: str) -> InterpretedCard:
    record = MachineRecord(election="demo", style="S1", precinct=None,
                           selections=(("gov", ("gov-b",)), ("q1", ())))
    contests = (ContestReading("gov", ("gov-b",), ContestOutcome.COUNTED, 0),
                ContestReading("q1", (), ContestOutcome.COUNTED, 1))
    interp = MachinePrintedCard(record=record, contests=contests, reasons=(Reason.NO_PRECINCT,), printed_text="GOV: Ben")
    return InterpretedCard(source=source(seed, page=2, pages=2), kind=CardKind.BALLOT, label=None, card_code=None,
                           interpretation=interp)


def unreadable_card(seed: str) -> InterpretedCard:
    interp = UnreadableCard(reason=Reason.NO_FIDUCIALS, detail="found 1 of 4 fiducials; looked in the corners")
    return InterpretedCard(source=source(seed), kind=CardKind.UNKNOWN, label=None, card_code=None, interpretation=interp)


def must_get(store: Store, card_id: str) -> StoredCard:
    stored = store.get_card(card_id)
    assert stored is not None
    return stored


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    s = Store.open(db_url)
    s.migrate()
    yield s
    s.close()


# --------------------------------------------------------------------------------------
# cards


def test_cards_are_loaded_by_their_ids_with_or_without_their_targets(store: Store) -> None:
    cards = [read_card("c1"), machine_card("c2"), unreadable_card("c3")]
    for card in cards:
        store.save_card(card)
    ids = [c.source.card_id for c in cards]
    whole = store.get_cards([ids[0], ids[2], "not-stored", ids[0]])
    assert {k: v.card for k, v in whole.items()} == {ids[0]: cards[0], ids[2]: cards[2]}
    light = store.get_cards(ids, targets=False)
    assert set(light) == set(ids) and light[ids[2]].card == cards[2]
    read = light[ids[0]].card.interpretation
    assert isinstance(read, ReadCard) and read.targets == () and read.style == cards[0].interpretation.style  # type: ignore[union-attr]
    assert store.get_cards([]) == {}


@pytest.mark.parametrize("make", [read_card, machine_card, unreadable_card])
def test_save_then_load_gives_an_equal_card(store: Store, make) -> None:
    card = make("c1")
    assert store.save_card(card, thresholds_source="calibration/v1.json") is True
    stored = store.get_card(card.source.card_id)
    assert stored is not None
    assert stored.card == card
    assert stored.interpretation_seq == 0 and stored.thresholds_source == "calibration/v1.json"
    assert not stored.batch_voided and stored.ingested_at.tzinfo is not None
    assert [s.card for s in store.iter_cards()] == [card]
    found = store.find_card_by_path(card.source.path, page=card.source.page_index)
    assert found is not None and found.card == card


def test_saving_the_same_card_again_changes_nothing(store: Store) -> None:
    card = read_card("c1")
    assert store.save_card(card)
    other = dataclasses.replace(card, kind=CardKind.ORIGINAL)  # same id, different reading
    assert store.save_card(other) is False
    assert must_get(store, card.source.card_id).card == card
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(target_score_table)).scalar_one() == 4


def test_save_cards_counts_only_new_cards_and_ids_are_known(store: Store) -> None:
    first = [read_card(f"c{i}") for i in range(5)]
    assert store.save_cards(first) == 5
    mixed = first[3:] + [read_card(f"c{i}") for i in range(5, 8)] + [read_card("c7")]
    assert store.save_cards(mixed) == 3
    assert store.count_cards() == 8
    ids = [c.source.card_id for c in first[:2]]
    assert store.known_card_ids(ids + ["f" * 64]) == set(ids)
    assert store.known_sha256([first[0].source.sha256, "0" * 64]) == {first[0].source.sha256}
    assert store.get_card("nope") is None and store.find_card_by_path("/nope.png") is None
    assert store.known_sha256_all() == {c.source.sha256 for c in first + mixed}
    assert store.batch_card_counts() == {"b1": 8}


def test_iter_cards_returns_all_in_id_order_with_a_few_queries_per_chunk(store: Store) -> None:
    cards = [read_card(f"c{i}") if i % 3 else unreadable_card(f"c{i}") for i in range(25)]
    store.save_cards(cards)
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    got = [s.card for s in store.iter_cards(chunk=7)]
    assert got == sorted(cards, key=lambda c: c.source.card_id)
    assert len(statements) <= 4 * 4  # 4 chunks x (begin, cards, scores, readings)


def test_replace_interpretation_replaces_scores_and_bumps_the_sequence(store: Store) -> None:
    card = read_card("c1", n_targets=4)
    store.save_card(card)
    again = read_card("c1", n_targets=2, votes=("gov-b",))
    assert isinstance(again.interpretation, ReadCard)
    again = dataclasses.replace(again, interpretation=dataclasses.replace(again.interpretation, style_source="hint", reasons=()))
    assert store.replace_interpretation(again, thresholds_source="v2") == 1
    stored = must_get(store, card.source.card_id)
    assert stored.card == again and stored.interpretation_seq == 1 and stored.thresholds_source == "v2"
    assert stored.interpreted_at >= stored.ingested_at
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(target_score_table)).scalar_one() == 2
    [ev] = store.events("card_reinterpreted")
    assert {k: v for k, v in ev.detail.items() if k != "rows"} == {"card": card.source.card_id, "interpretation_seq": 1}
    assert list(ev.detail["rows"]["card"]) == [card.source.card_id]  # the log records the card's new digest
    with pytest.raises(DecisionError, match="there is no card x"):
        store.replace_interpretation(dataclasses.replace(card, source=dataclasses.replace(card.source, card_id="x")))


# --------------------------------------------------------------------------------------
# schema


def test_migrate_twice_is_a_no_op_and_models_match_the_schema(store: Store) -> None:
    store.migrate()
    assert store.schema_revision() == Store.head_revision()
    store.require_schema()
    assert [e.detail for e in store.events("schema_migrated")] == [{"from": None, "to": Store.head_revision()}]
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_the_schema_head_constant_is_alembics_newest_revision() -> None:
    from alembic.script import ScriptDirectory

    assert Store.head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()


def test_downgrade_to_nothing_and_up_again(store: Store) -> None:
    migrate_to(store, "base")
    assert store.schema_revision() is None
    with pytest.raises(StorageError, match="is not initialized: run 'scanpipe init --election FILE'"):
        store.require_schema()
    store.migrate()
    assert store.save_card(read_card("c1"))


def test_a_database_at_the_first_revision_is_upgraded_keeping_its_cards(store: Store) -> None:
    migrate_to(store, "base")
    migrate_to(store, "0001")
    card = unreadable_card("c1")
    store.save_card(card)
    with pytest.raises(StorageError, match="is at schema 0001, this scanpipe needs"):
        store.require_schema()
    store.migrate()
    store.require_schema()
    assert must_get(store, card.source.card_id).card == card
    store.set_identification(card.source.card_id, style="S1")
    assert store.identifications() == {card.source.card_id: ("S1", None)}


def migrate_to(store: Store, revision: str) -> None:
    cfg = alembic_config()
    with store.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        if revision == "base":
            command.downgrade(cfg, "base")
        else:
            command.upgrade(cfg, revision)


def test_a_missing_folder_is_a_storage_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "x.db"
    with pytest.raises(StorageError) as e:
        Store.open(f"sqlite:///{path}")
    assert str(e.value) == f"cannot create database {path}: folder {path.parent} does not exist"


def test_a_server_that_does_not_answer_is_a_storage_error_without_the_password() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StorageError) as e:
        Store.open(f"postgresql+psycopg://scan:secret@127.0.0.1:{port}/x")
    message = str(e.value)
    assert message.startswith(f"database postgresql+psycopg://scan:***@127.0.0.1:{port}/x: ")
    assert "secret" not in message


def test_unsupported_and_malformed_urls_are_storage_errors() -> None:
    with pytest.raises(StorageError, match="scanpipe supports SQLite and PostgreSQL"):
        Store("mysql://u@h/x")
    with pytest.raises(StorageError, match="not a database URL"):
        Store("not a url")


# --------------------------------------------------------------------------------------
# election


def _tiny_png() -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (17, 22), 255).save(buf, "PNG")
    return buf.getvalue()


def write_election(folder: Path, *, title: str = "Governor") -> Path:
    (folder / "layouts").mkdir(parents=True, exist_ok=True)
    (folder / "layouts" / "blank-S1.png").write_bytes(_tiny_png())  # init checks it is an image; bytes are kept as they are
    definition = {
        "id": "demo-2026", "name": "Demo", "date": "2026-11-03", "jurisdiction": "MD",
        "precincts": [{"id": "P01", "name": "Precinct 1"}],
        "contests": [{"id": "gov", "title": title, "kind": "candidate", "vote_for": 1,
                      "options": [{"id": "gov-a", "name": "Ada"}, {"id": "gov-b", "name": "Ben"}]}],
        "ballot_styles": [{"id": "S1", "precincts": ["P01"], "contests": ["gov"], "layout": "layouts/S1.json"}],
    }
    layout = {"style": "S1", "pages": [{
        "page": 1, "size": [8.5, 11.0], "reference": "blank-S1.png", "reference_dpi": 200,
        "fiducials": [[0.35, 0.35, 0.25, 0.25], [7.9, 0.35, 0.25, 0.25], [0.35, 10.4, 0.25, 0.25], [7.9, 10.4, 0.25, 0.25]],
        "targets": [{"contest": "gov", "option": "gov-a", "box": [0.9, 2.1, 0.22, 0.14]},
                    {"contest": "gov", "option": "gov-b", "box": [0.9, 2.4, 0.22, 0.14]}]}]}
    (folder / "election.json").write_text(json.dumps(definition))
    (folder / "layouts" / "S1.json").write_text(json.dumps(layout))
    return folder / "election.json"


def load(store: Store, path: Path, references: dict[tuple[str, int], bytes] | None = None) -> bool:
    from scanpipe.election import read_definition

    definition, layouts = read_definition(path)
    return store.load_election(definition, layouts, parse_election_file(path), references=references)


def test_reference_bytes_read_by_the_caller_are_stored(store: Store, tmp_path: Path) -> None:
    path = write_election(tmp_path / "def")
    assert load(store, path, references={("S1", 1): b"already read"})
    assert store.layout_references() == {("S1", 1): b"already read"}


def test_load_election_is_idempotent_keeps_history_and_rebuilds(store: Store, tmp_path: Path) -> None:
    path = write_election(tmp_path / "def")
    assert load(store, path) is True
    assert load(store, path) is False
    assert store.current_election() == parse_election_file(path)
    write_election(tmp_path / "def", title="Governor and Lt. Governor")
    assert load(store, path) is True
    history = store.elections()
    assert [e.current for e in history] == [False, True]
    assert history[1].definition["contests"][0]["title"] == "Governor and Lt. Governor"
    assert history[1].layouts["layouts/S1.json"]["style"] == "S1"
    assert [e.detail["election"] for e in store.events("election_loaded")] == ["demo-2026", "demo-2026"]


def test_the_election_rebuilds_without_the_original_files(store: Store, tmp_path: Path) -> None:
    path = write_election(tmp_path / "def")
    original = (tmp_path / "def" / "layouts" / "blank-S1.png").read_bytes()
    load(store, path)
    for f in sorted((tmp_path / "def").rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    election = store.current_election(reference_dir=tmp_path / "refs")
    page = election.style("S1").layout.pages[0]
    assert page.reference is not None
    assert page.reference.read_bytes() == original and page.reference.parent == tmp_path / "refs"
    assert store.reference_scans() == {("S1", 1): original}
    assert election.contest("gov").title == "Governor"


def test_no_election_is_a_storage_error(store: Store) -> None:
    with pytest.raises(StorageError, match="holds no election: run 'scanpipe init --election FILE'"):
        store.current_election()


# --------------------------------------------------------------------------------------
# batches


def test_batch_hints_are_remembered_and_not_contradicted(store: Store) -> None:
    b = store.ensure_batch("b1", style="S1", kind=CardKind.DUPLICATE)
    assert (b.style, b.precinct, b.kind, b.voided) == ("S1", None, CardKind.DUPLICATE, False)
    b = store.ensure_batch("b1", precinct="P01")
    assert (b.style, b.precinct, b.kind) == ("S1", "P01", CardKind.DUPLICATE)
    with pytest.raises(ConfigError, match=r"batch 'b1' was ingested with --style S1; it cannot also be --style S2"):
        store.ensure_batch("b1", style="S2")
    assert [x.name for x in store.list_batches()] == ["b1"]


def test_voiding_a_batch_marks_its_cards_and_is_logged(store: Store) -> None:
    store.ensure_batch("b1")
    store.save_cards([read_card("c1", batch="b1"), read_card("c2", batch="b2")])
    voided = store.void_batch("b1", "stack fed twice", actor="ann")
    assert voided.voided and voided.void_reason == "stack fed twice"
    assert store.void_batch("b1", "again").void_reason == "stack fed twice"
    assert {s.card.source.batch: s.batch_voided for s in store.iter_cards()} == {"b1": True, "b2": False}
    [ev] = store.events("batch_voided")
    assert (ev.actor, {k: v for k, v in ev.detail.items() if k != "rows"}) == ("ann", {"batch": "b1", "reason": "stack fed twice", "cards": 1})
    assert list(ev.detail["rows"]["batch"]) == ["b1"]  # the void's digest is in the log
    with pytest.raises(ConfigError, match="batch 'b1' was voided"):
        store.ensure_batch("b1")
    with pytest.raises(ConfigError, match="there is no batch named 'zz'"):
        store.void_batch("zz", "x")


# --------------------------------------------------------------------------------------
# decisions, skipped files, events


def test_decisions_are_appended_and_move_on(store: Store) -> None:
    first = store.add_decision("A0042", ItemKind.PAIR, "gov", ["gov-a"], ["ann"], state=DecisionState.FIRST_HALF, rule="MD-1")
    assert (first.votes, first.auditors, first.state) == (("gov-a",), ("ann",), DecisionState.FIRST_HALF)
    final = store.set_decision_state(first.id, DecisionState.FINAL)
    assert final.state == DecisionState.FINAL and final.created_at == first.created_at
    with store.transaction() as tx:  # re-deciding: the plan supersedes the earlier one, all at once
        [earlier] = tx.decisions(item="A0042")
        tx.set_decision_state(earlier.id, "superseded")
        later = tx.add_decision(item="A0042", item_kind="pair", contest="gov", votes=[], auditors=["bob", "cy"],
                                state="final", note="no choice", supersedes=earlier.id)
        tx.log_event("decision", {"item": "A0042"}, actor="bob,cy")
    store.add_decision("c9", ItemKind.CARD, "q1", ["q1-for"], ["ann"], state=DecisionState.FINAL)
    assert [(d.id, d.state, d.supersedes) for d in store.decisions("A0042")] == [
        (first.id, DecisionState.SUPERSEDED, None), (later.id, DecisionState.FINAL, first.id)]
    assert len(store.decisions()) == 3 and len(store.events("decision")) == 1
    with pytest.raises(DecisionError, match="was superseded"):
        store.set_decision_state(first.id, DecisionState.FINAL)
    with pytest.raises(DecisionError, match="is not a decision on c9 contest gov"):
        store.add_decision("c9", ItemKind.CARD, "gov", [], ["ann"], state=DecisionState.FINAL, supersedes=later.id)
    with pytest.raises(DecisionError, match="needs at least one named auditor"):
        store.add_decision("c9", ItemKind.CARD, "gov", [], [], state=DecisionState.FINAL)


def test_a_failed_transaction_writes_nothing(store: Store) -> None:
    with pytest.raises(DecisionError), store.transaction() as tx:
        tx.add_decision("A1", ItemKind.PAIR, "gov", ["gov-a"], ["ann"], state=DecisionState.FINAL)
        tx.set_decision_state(999, DecisionState.FINAL)
    assert store.decisions() == []


def test_identifications_merge_what_people_state(store: Store) -> None:
    card = unreadable_card("c1")
    store.save_card(card)
    store.set_identification(card.source.card_id, style="S1", kind=CardKind.BALLOT)
    store.set_identification(card.source.card_id, precinct="P01")
    assert store.identifications() == {card.source.card_id: ("S1", "P01")}
    with pytest.raises(DecisionError, match="there is no card nope"):
        store.set_identification("nope", style="S1")


def test_skipped_files_are_noted_once_and_events_kept_in_order(store: Store) -> None:
    store.record_skipped("/scans/readme.txt", "b1", "not a card file (.txt)")
    store.record_skipped("/scans/readme.txt", "b1", "not a card file (.txt)")
    assert [(s.path, s.batch) for s in store.skipped_files()] == [("/scans/readme.txt", "b1")]
    a = store.log_event("ingest_started", {"paths": ["/scans"]}, actor="ann")
    b = store.log_event("ingest_finished", {"cards": 3})
    assert a < b
    events = store.events()
    assert [(e.action, e.detail) for e in events][-2:] == [("ingest_started", {"paths": ["/scans"]}), ("ingest_finished", {"cards": 3})]
    assert events[-1].prev_hash == events[-2].hash and all(e.hash for e in events)  # every event is chained
