"""Tests of the synthetic ballot generator (scanpipe.synth)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import zxingcpp
from PIL import Image

from scanpipe.election import load_election
from scanpipe.synth.deck import _Target, apply_damage, contest_outcomes, generate_deck
from scanpipe.synth.definition import write_demo_election
from scanpipe.synth.marks import INTENT, Damage, MarkKind, damaged_targets, draw_bleed_through, draw_fold, draw_mark
from scanpipe.synth.render import box_px, render_card
from scanpipe.synth.scan import PROFILES, ScanProfile, save_multipage, save_scan
from scanpipe.types import Election, MarkIntent

DPI = 150


@pytest.fixture(scope="module")
def election_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo_election(tmp_path_factory.mktemp("el"))


@pytest.fixture(scope="module")
def election(election_path: Path) -> Election:
    return load_election(election_path)


def test_demo_election_has_our_and_vendor_styles(election: Election) -> None:
    styles = {s.id: s for s in election.ballot_styles}
    assert set(styles) == {"S1", "S2", "V1", "V2"}
    assert election.jurisdiction == "MD"
    assert [p.page for p in styles["S2"].layout.pages] == [1, 2]
    for sid in ("S1", "S2"):
        for page in styles[sid].layout.pages:
            assert len(page.fiducials_in) == 4 and page.qr_in is not None and page.reference is None
    for sid in ("V1", "V2"):
        page = styles[sid].layout.pages[0]
        assert not page.fiducials_in and page.qr_in is None
        assert page.reference is not None and page.reference.is_file() and page.reference_dpi == 150
        assert page.distinguish_in
    v1 = cv2.imread(str(styles["V1"].layout.pages[0].reference), cv2.IMREAD_GRAYSCALE)
    v2 = cv2.imread(str(styles["V2"].layout.pages[0].reference), cv2.IMREAD_GRAYSCALE)
    x, y, w, h = (int(v * 150) for v in styles["V1"].layout.pages[0].distinguish_in[0])
    differs = v1 != v2
    assert differs.any() and differs.sum() == differs[y:y + h, x:x + w].sum(), "V1/V2 differ only in the name box"


def test_card_code_and_label_decode(election: Election) -> None:
    rgb = render_card(election, "S2", 2, "P03", DPI, label="DUP-99A0042")
    found = {(r.format, r.text): r for r in zxingcpp.read_barcodes(rgb)}
    assert (zxingcpp.BarcodeFormat.QRCode, "SPB1|E=demo-2026|S=S2|P=P03|PG=2") in found
    assert (zxingcpp.BarcodeFormat.Code128, "DUP-99A0042") in found
    qr = found[(zxingcpp.BarcodeFormat.QRCode, "SPB1|E=demo-2026|S=S2|P=P03|PG=2")]
    x, y, w, h = box_px(election.style("S2").layout.pages[1].qr_in, DPI)
    tl = qr.position.top_left
    assert abs(tl.x - x) <= 4 and abs(tl.y - y) <= 4, "the symbol fills the layout's qr box"


def _interior(shape: tuple[int, int], box: tuple[float, float, float, float]) -> np.ndarray:
    m = np.zeros(shape, np.uint8)
    x, y, w, h = box
    cv2.ellipse(m, (int(round(x + w / 2)), int(round(y + h / 2))), (int(w / 2), int(h / 2)), 0, 0, 360, 1, -1)
    return m.astype(bool)


@pytest.mark.parametrize("seed", range(3))
def test_marks_follow_the_catalogue(election: Election, seed: int) -> None:
    dpi = 200
    blank = cv2.cvtColor(render_card(election, "S1", 1, "P01", dpi, card_code=False), cv2.COLOR_RGB2GRAY).astype(float)
    box = box_px(election.style("S1").layout.pages[0].targets[0].box_in, dpi)
    inside = _interior(blank.shape, box)
    outline_dist = cv2.distanceTransform((~inside).astype(np.uint8), cv2.DIST_L2, 5)
    for kind in MarkKind:
        rgb = render_card(election, "S1", 1, "P01", dpi, card_code=False)
        draw_mark(rgb, box, kind, np.random.default_rng(seed), ink="green", dpi=dpi)
        gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(float)
        added = np.clip(blank - gray, 0, 255) / 255.0  # darkness the mark added
        paper = inside & (blank > 200)  # interior pixels not under the printed outline
        cover = float((gray[paper] < 255 * 0.75).mean())  # share of them at darkness > 0.25
        changed = added > 0.01
        if kind in (MarkKind.FULL_FILL, MarkKind.PARTIAL_FILL, MarkKind.LIGHT_PENCIL):
            lo, hi = {MarkKind.FULL_FILL: (0.82, 1), MarkKind.PARTIAL_FILL: (0.42, 0.84), MarkKind.LIGHT_PENCIL: (0.8, 1)}[kind]
            assert lo <= cover <= hi, (kind, cover)
        if kind is MarkKind.FULL_FILL:
            assert float(outline_dist[changed].max()) <= 0.03 * dpi + 2, "overflow is at most 0.03 in"
        if kind is MarkKind.STRAY_LINE:
            assert changed.any() and float(outline_dist[changed].min()) >= 0.05 * dpi - 1
        if kind is MarkKind.CIRCLED:
            assert changed.any() and not changed[inside].any(), "a circled target's interior is untouched"
        if kind is MarkKind.FAINT_TRACE:
            assert 0 < added.max() <= 0.065
        if kind is MarkKind.ERASURE:
            assert 0.1 <= added[inside].max() <= 0.32
        if kind is MarkKind.SMALL_PARTIAL:
            assert 0.08 <= cover <= 0.38, cover  # 12-30 % plus anti-aliased edges
        if kind is MarkKind.HESITATION_DOT:
            assert changed.any() and not changed[~inside].any()
        if kind in (MarkKind.NONE, MarkKind.DAMAGED):
            assert not changed.any()


def _targets(election: Election, marks: dict[str, MarkKind]) -> list[_Target]:
    page = election.style("S1").layout.pages[0]
    out = [_Target(i, t.contest, t.option, t.box_in, t.write_in_area_in) for i, t in enumerate(page.targets)]
    for t in out:
        t.mark = marks.get(t.option, MarkKind.NONE)
    return out


def test_contest_outcomes(election: Election) -> None:
    targets = _targets(election, {"gov-a": MarkKind.FULL_FILL, "gov-b": MarkKind.CHECK,
                                  "council-a": MarkKind.X_MARK, "council-c": MarkKind.HESITATION_DOT,
                                  "q1-for": MarkKind.CIRCLED, "q2-against": MarkKind.LIGHT_PENCIL})
    out = contest_outcomes(election, targets)
    assert out["gov"] == {"votes": ["gov-a", "gov-b"], "outcome": "overvote"}
    assert out["council"] == {"votes": ["council-a"], "outcome": "counted"}
    assert out["q1"]["outcome"] == "pending"
    assert out["q2"] == {"votes": ["q2-against"], "outcome": "counted"}
    assert out["judge"] == {"votes": [], "outcome": "counted"}
    wi = next(t for t in targets if t.option == "gov-w")
    wi.write_in = True
    assert wi.intent is MarkIntent.AMBIGUOUS and contest_outcomes(election, targets)["gov"]["outcome"] == "pending"


def test_damage_relabels_overlapped_targets(election: Election) -> None:
    dpi = 100
    rgb = render_card(election, "S1", 1, "P01", dpi)
    targets = _targets(election, {"gov-a": MarkKind.FULL_FILL})
    always = ScanProfile("t", fold_p=1.0)
    done = apply_damage(rgb, targets, always, np.random.default_rng(3), dpi)
    assert done == ["fold"]
    damaged = {t.option for t in targets if t.damage}
    # recompute independently: a fold mask from the same draw must meet exactly those targets
    fold = draw_fold(render_card(election, "S1", 1, "P01", dpi), np.random.default_rng(3), dpi=dpi)
    boxes = {t.index: box_px(t.box_in, dpi) for t in targets}
    assert damaged == {targets[i].option for i in damaged_targets(fold, boxes, dpi=dpi)}
    for t in targets:
        assert (t.intent is MarkIntent.AMBIGUOUS) == (t.damage is not None) or INTENT[t.mark] is MarkIntent.AMBIGUOUS
    # synthetic damage near exactly one target: a crease pixel within 0.03 in of the box counts,
    # a stain only when it covers >= 10% of the box, a tear only when it reaches the oval itself
    x, y, w, h = (int(v) for v in boxes[5])
    mask = np.zeros(rgb.shape[:2], bool)
    mask[y - 2, x + 2] = True
    assert damaged_targets(Damage("fold", mask), boxes, dpi=dpi) == {5}
    assert damaged_targets(Damage("stain", mask), boxes, dpi=dpi) == set()
    mask[y:y + h, x:x + w // 3] = True
    assert damaged_targets(Damage("stain", mask), boxes, dpi=dpi) == {5}
    corner = np.zeros(rgb.shape[:2], bool)
    corner[y, x] = True  # the box's corner, outside the oval
    assert damaged_targets(Damage("tear", corner), boxes, dpi=dpi) == set()
    corner[y + h // 2, x + 1] = True  # the oval's left end
    assert damaged_targets(Damage("tear", corner), boxes, dpi=dpi) == {5}


def test_bleed_through_is_faint(election: Election) -> None:
    rgb = render_card(election, "S2", 1, "P03", 100)
    before = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(float)
    draw_bleed_through(rgb, render_card(election, "S2", 2, "P03", 100), np.random.default_rng(0), dpi=100)
    added = (before - cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(float)) / 255.0
    assert 0.0 < added.max() <= 0.08 + 1 / 255


def test_formats_read_back(tmp_path: Path) -> None:
    gray = np.full((220, 170), 255, np.uint8)
    cv2.rectangle(gray, (20, 30), (80, 90), 0, -1)
    rgb = cv2.cvtColor(gray, cv2.COLOR_GRAY2RGB)
    for fmt, img in (("png", gray), ("jpg", rgb), ("tif_g4", gray)):
        path = tmp_path / f"card.{fmt.split('_')[0]}"
        save_scan(path, img, fmt, quality=60, dpi=150)
        back = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
        assert back is not None and back.shape == gray.shape
        assert back[60, 50] < 60 and back[150, 120] > 200
        with Image.open(path) as im:
            assert round(im.info["dpi"][0]) == 150
            if fmt == "tif_g4":
                assert im.mode == "1" and im.info["compression"] == "group4"
    assert save_multipage(tmp_path / "sheet.tif", [gray, gray[::-1]], dpi=150) == "tif_g4"
    with Image.open(tmp_path / "sheet.tif") as im:
        assert im.n_frames == 2
    ok, pages = cv2.imreadmulti(str(tmp_path / "sheet.tif"))
    assert ok and len(pages) == 2
    assert save_multipage(tmp_path / "sheet.pdf", [rgb, gray], dpi=150) == "pdf"
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(tmp_path / "sheet.pdf"))
    assert len(pdf) == 2 and abs(pdf[0].get_width() - 170 * 72 / 150) < 1


def _small_deck(election_path: Path, out: Path, seed: int) -> Path:
    overrides = {0: {"dpi": 100, "style": "S2", "container": "pdf"}, 1: {"dpi": 100, "style": "V1", "format": "tif_g4"},
                 2: {"dpi": 100, "style": "S1", "blank": True, "flip180": True}, 3: {"dpi": 100}}
    return generate_deck(election_path, out, cards=4, seed=seed, profile="hardest", overrides=overrides)


def test_deck_is_deterministic_and_complete(election_path: Path, election: Election, tmp_path: Path) -> None:
    a = _small_deck(election_path, tmp_path / "a", 5)
    b = _small_deck(election_path, tmp_path / "b", 5)
    ea, eb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ea == eb
    for card in ea["cards"]:
        assert (a.parent / card["file"]).read_bytes() == (b.parent / card["file"]).read_bytes()
    assert (a.parent / ea["election"]).resolve() == election_path.resolve()
    assert [c["page"] for c in ea["cards"][:2]] == [1, 2] and ea["cards"][1]["page_of_file"] == 2
    assert ea["cards"][3]["rotated_180"] is True and all(t["mark"] == "none" for t in ea["cards"][3]["targets"])
    for card in ea["cards"]:
        page = next(p for p in election.style(card["style"]).layout.pages if p.page == card["page"])
        assert [(t["contest"], t["option"]) for t in card["targets"]] == [(t.contest, t.option) for t in page.targets]
        for cid, outcome in card["contests"].items():
            mine = [t for t in card["targets"] if t["contest"] == cid]
            votes = [t["option"] for t in mine if t["intent"] == "vote"]
            assert outcome["votes"] == votes
            if any(t["intent"] == "ambiguous" for t in mine):
                assert outcome["outcome"] == "pending"
            elif len(votes) > election.contest(cid).vote_for:
                assert outcome["outcome"] == "overvote"
            else:
                assert outcome["outcome"] == "counted"
        for t in card["targets"]:
            drawn = MarkKind(t.get("drawn", t["mark"]))
            if t["mark"] == "damaged" or t.get("write_in"):
                continue
            assert t["intent"] == INTENT[drawn].value
    c = _small_deck(election_path, tmp_path / "c", 6)
    assert json.loads(c.read_text())["cards"] != ea["cards"]


def test_profiles_exist() -> None:
    hard = PROFILES["hardest"]
    assert set(PROFILES) == {"clean", "typical", "hardest"}
    assert hard.max_rotation_deg == 3.0 and hard.max_aniso == 0.02 and 150 in hard.dpis and 300 in hard.dpis
    assert hard.jpeg_quality[0] == 50 and any(f == "tif_g4" for f, _ in hard.formats)


def test_bilevel_scan_flattens_the_middle_of_a_large_stain() -> None:
    from scanpipe.synth.marks import draw_stain

    rgb = np.full((1200, 1000, 3), 255, np.uint8)
    stain = draw_stain(rgb, np.random.default_rng(2), dpi=300, near_px=(500.0, 600.0))
    assert stain.bilevel_mask is not None and stain.mask.sum() > 0
    assert not (stain.bilevel_mask & ~stain.mask).any()  # flattening never adds damage
    assert stain.bilevel_mask.sum() < stain.mask.sum()  # ... and removes the broad middle
    ys, xs = np.nonzero(stain.mask)
    box = {0: (float(xs.mean()) - 30, float(ys.mean()) - 20, 66.0, 42.0)}  # a target in the middle
    assert damaged_targets(stain, box, dpi=300) == {0}
    assert damaged_targets(stain, box, dpi=300, bilevel=True) == set()
