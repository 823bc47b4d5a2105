"""`scanpipe calibrate`: thresholds from a labelled deck, a layout from a blank scan or a vendor PDF."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from scanpipe.classify import load_thresholds
from scanpipe.election import load_election
from scanpipe.synth.render import render_card

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "ballot_images"
ELECTION = FIX / "election" / "election.json"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanpipe.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def truth_boxes(style: str) -> dict[tuple[str, str], list[float]]:
    page = json.loads((FIX / "election" / "layouts" / f"{style}.json").read_text())["pages"][0]
    return {(t["contest"], t["option"]): t["box"] for t in page["targets"]}


def found_boxes(layout: Path) -> dict[tuple[str, str], list[float]]:
    return {(t["contest"], t["option"]): t["box"] for t in json.loads(layout.read_text())["pages"][0]["targets"]}


def assert_same_boxes(found: dict[tuple[str, str], list[float]], truth: dict[tuple[str, str], list[float]], tol: float) -> None:
    assert set(found) == set(truth)
    for key, box in truth.items():
        assert max(abs(a - b) for a, b in zip(found[key], box)) < tol, (key, found[key], box)


def test_thresholds_are_derived_from_a_labelled_deck_with_their_provenance(tmp_path: Path) -> None:
    out = tmp_path / "thresholds.json"
    r = run("calibrate", "thresholds", "--deck", str(FIX / "deck" / "expected.json"), "--out", str(out), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert 0 < data["marginal"] < data["definite"] < 1
    assert data["provenance"]["targets"] > 100 and "expected.json" in data["provenance"]["deck"]
    assert "clear unknown 0.00%" in r.stdout
    reviewed = load_thresholds()  # the page rules reviewed by hand are carried, not derived
    assert (data["hesitation_dot_in"], data["voter_reach"]) == (reviewed.hesitation_dot_in, reviewed.voter_reach)


def test_a_layout_is_proposed_from_a_blank_scan_by_the_names_printed_beside_the_targets(tmp_path: Path) -> None:
    Image.fromarray(render_card(load_election(ELECTION), "S1", 1, "P01", 200)).convert("L").save(tmp_path / "blank.png", dpi=(200, 200))
    out = tmp_path / "layouts" / "S1.json"
    r = run("calibrate", "layout", "--blank", str(tmp_path / "blank.png"), "--election", str(ELECTION), "--style", "S1", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert_same_boxes(found_boxes(out), truth_boxes("S1"), 0.02)
    page = json.loads(out.read_text())["pages"][0]
    assert len(page["fiducials"]) == 4 and len(page["qr"]) == 4 and page["reference"] == "../blank.png" and page["reference_dpi"] == 200.0
    assert any(line.split()[:4] == ["Question", "2", "Against", "1"] and "name" in line for line in r.stdout.splitlines())
    write_in = next(t for t in page["targets"] if t["option"] == "gov-w")
    truth_area = json.loads((FIX / "election" / "layouts" / "S1.json").read_text())["pages"][0]["targets"]
    area = next(t["write_in_area"] for t in truth_area if t["option"] == "gov-w")
    assert abs(write_in["write_in_area"][0] - area[0]) < 0.05 and abs(write_in["write_in_area"][1] + write_in["write_in_area"][3] - area[1] - area[3]) < 0.08

    partial = tmp_path / "gov.json"  # one contest asked for: the rest is found but left out, and said so
    r = run("calibrate", "layout", "--blank", str(tmp_path / "blank.png"), "--election", str(ELECTION), "--style", "S1",
            "--contests", "gov", "--out", str(partial))
    assert r.returncode == 1 and "11 target(s) and 0 option(s) left unassigned" in r.stderr
    assert set(found_boxes(partial)) == {k for k in truth_boxes("S1") if k[0] == "gov"}


def test_without_reading_names_the_targets_follow_the_contests_in_the_order_given(tmp_path: Path) -> None:
    Image.fromarray(render_card(load_election(ELECTION), "S1", 1, "P01", 200)).convert("L").save(tmp_path / "blank.png", dpi=(200, 200))
    out = tmp_path / "S1.json"
    r = run("calibrate", "layout", "--blank", str(tmp_path / "blank.png"), "--election", str(ELECTION), "--style", "S1",
            "--contests", "gov,council,q1,q2,judge", "--no-ocr", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "names were not read" in r.stdout and " order " in r.stdout
    assert_same_boxes(found_boxes(out), truth_boxes("S1"), 0.02)


@pytest.mark.slow
def test_a_layout_from_the_vendors_pdf_reads_a_marked_card_end_to_end(tmp_path: Path) -> None:
    shutil.copytree(FIX / "election", tmp_path / "e")
    election = load_election(ELECTION)
    blank = render_card(election, "V1", 1, "P01", 200)
    Image.fromarray(blank).save(tmp_path / "sample-ballots.pdf", resolution=200.0)  # what the vendor sends
    marked = {"gov-b", "council-a", "council-e", "q1-against", "judge-yes"}
    card = blank.copy()
    for (_, option), (x, y, w, h) in truth_boxes("V1").items():
        if option in marked:
            cv2.ellipse(card, (int((x + w / 2) * 200), int((y + h / 2) * 200)), (int(w * 100) - 2, int(h * 100) - 2), 0, 0, 360, (25, 25, 25), -1)
    Image.fromarray(card).convert("L").save(tmp_path / "card.png", dpi=(200, 200))

    r = run("calibrate", "layout", "--blank", str(tmp_path / "sample-ballots.pdf"), "--dpi", "150", "--election", "election.json",
            "--style", "V1", "--out", "layouts/V1.json", "--overlay", str(tmp_path / "V1-check.png"), cwd=tmp_path / "e")
    assert r.returncode == 0, r.stdout + r.stderr
    layout = tmp_path / "e" / "layouts" / "V1.json"
    page = json.loads(layout.read_text())["pages"][0]
    assert page["reference"] == "V1-p1.png" and page["reference_dpi"] == 150.0 and page["size"] == [8.5, 11.0]
    reference = cv2.imread(str(tmp_path / "e" / "layouts" / "V1-p1.png"), cv2.IMREAD_GRAYSCALE)
    assert abs(reference.shape[0] - 1650) <= 1 and abs(reference.shape[1] - 1275) <= 1
    assert cv2.imread(str(tmp_path / "V1-check.png")).shape == (*reference.shape, 3)
    assert_same_boxes(found_boxes(layout), truth_boxes("V1"), 0.03)

    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert run("--db", db, "init", "--election", str(tmp_path / "e" / "election.json")).returncode == 0
    r = run("--db", db, "ingest", str(tmp_path / "card.png"))
    assert r.returncode == 0, r.stderr
    assert run("--db", db, "export", "cvr", "--out", str(tmp_path / "cvr.json")).returncode == 0
    (cvr,) = json.loads((tmp_path / "cvr.json").read_text())["CVR"]
    read = {sel["ContestSelectionId"] for c in cvr["CVRSnapshot"][0]["CVRContest"] for sel in c["CVRContestSelection"]
            if sel["SelectionPosition"][0]["HasIndication"] == "yes"}
    assert read == marked


def vector_pdf(width_in: float, height_in: float, texts: list[tuple[float, float, float, str]],
               ovals: list[tuple[float, float, float, float]], rules: list[tuple[float, float, float]]) -> bytes:
    """A one-page vector PDF like a vendor's sample ballot: Helvetica text (x, baseline y, size in
    points, text), stroked ovals (x, y, w, h) and rules (x, y, length), all in inches from the top left."""
    h_pt, k = height_in * 72, 0.5523
    ops = []
    for x, y, size, text in texts:
        ops.append(f"BT /F1 {size} Tf {x * 72:.2f} {h_pt - y * 72:.2f} Td ({text}) Tj ET")
    for x, y, w, h in ovals:  # an ellipse inside the box, its 1-point stroke inside too
        rx, ry, cx, cy = w * 36 - 0.5, h * 36 - 0.5, (x + w / 2) * 72, h_pt - (y + h / 2) * 72
        ops.append(f"1 w {cx + rx:.2f} {cy:.2f} m {cx + rx:.2f} {cy + k * ry:.2f} {cx + k * rx:.2f} {cy + ry:.2f} {cx:.2f} {cy + ry:.2f} c "
                   f"{cx - k * rx:.2f} {cy + ry:.2f} {cx - rx:.2f} {cy + k * ry:.2f} {cx - rx:.2f} {cy:.2f} c "
                   f"{cx - rx:.2f} {cy - k * ry:.2f} {cx - k * rx:.2f} {cy - ry:.2f} {cx:.2f} {cy - ry:.2f} c "
                   f"{cx + k * rx:.2f} {cy - ry:.2f} {cx + rx:.2f} {cy - k * ry:.2f} {cx + rx:.2f} {cy:.2f} c S")
    for x, y, length in rules:
        ops.append(f"1 w {x * 72:.2f} {h_pt - y * 72:.2f} m {(x + length) * 72:.2f} {h_pt - y * 72:.2f} l S")
    stream = "\n".join(ops).encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width_in * 72:.0f} {h_pt:.0f}] /Contents 4 0 R "
               f"/Resources << /Font << /F1 5 0 R >> >> >>".encode(),
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_vector_pdf_is_read_from_its_own_text_without_ocr(tmp_path: Path) -> None:
    election = {
        "id": "v", "name": "Vector", "date": "2026-11-03", "jurisdiction": "MD", "precincts": [{"id": "P1", "name": "One"}],
        "contests": [
            {"id": "sheriff", "title": "County Sheriff", "kind": "candidate", "vote_for": 1,
             "options": [{"id": "s-ann", "name": "Ann Archer"}, {"id": "s-bo", "name": "Bo Bright"},
                         {"id": "s-w", "name": "Write-in", "write_in": True}]},
            {"id": "q7", "title": "Question 7", "kind": "question", "vote_for": 1,
             "options": [{"id": "q7-yes", "name": "Yes"}, {"id": "q7-no", "name": "No"}]},
        ],
        "ballot_styles": [{"id": "A", "precincts": ["P1"], "contests": ["sheriff", "q7"], "layout": "layouts/A.json"}],
    }
    (tmp_path / "election.json").write_text(json.dumps(election))
    ovals = {"s-bo": (0.5, 1.5, 0.2, 0.12), "s-ann": (0.5, 1.2, 0.2, 0.12), "s-w": (0.5, 1.8, 0.2, 0.12),
             "q7-yes": (3.0, 1.2, 0.2, 0.12), "q7-no": (3.0, 1.5, 0.2, 0.12)}
    texts = [(0.5, 0.9, 12, "COUNTY SHERIFF"), (0.8, 1.3, 10, "Ann Archer"), (0.8, 1.6, 10, "Bo Bright"), (0.8, 2.05, 6, "(write-in)"),
             (3.0, 0.9, 12, "QUESTION 7"), (3.3, 1.3, 10, "Yes"), (3.3, 1.6, 10, "No")]
    (tmp_path / "sample.pdf").write_bytes(vector_pdf(5.5, 3.0, texts, list(ovals.values()), [(0.8, 1.9, 1.6)]))
    out = tmp_path / "layouts" / "A.json"
    r = run("calibrate", "layout", "--blank", str(tmp_path / "sample.pdf"), "--election", str(tmp_path / "election.json"),
            "--style", "A", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "page 1: 5 targets found (5 ovals), 1 write-in rule(s); names from the PDF's text" in r.stdout
    page = json.loads(out.read_text())["pages"][0]
    assert page["size"] == [5.5, 3.0] and page["reference"] == "A-p1.png"
    assert {t["option"]: t["box"] for t in page["targets"]} == {o: pytest.approx(list(b), abs=0.015) for o, b in ovals.items()}
    (area,) = [t["write_in_area"] for t in page["targets"] if "write_in_area" in t]
    assert area[0] == pytest.approx(0.8, abs=0.02) and area[1] + area[3] == pytest.approx(1.9, abs=0.02)


def test_bad_arguments_are_refused_with_the_reason(tmp_path: Path) -> None:
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((400, 300), 255, np.uint8))
    r = run("calibrate", "layout", "--blank", str(blank), "--election", str(ELECTION), "--style", "S9", "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "no ballot style 'S9' (styles: S1, S2, V1, V2)" in r.stderr
    r = run("calibrate", "layout", "--blank", str(blank), "--election", str(ELECTION), "--style", "S1", "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "does not say its resolution; give --dpi" in r.stderr
    r = run("calibrate", "layout", "--blank", str(blank), "--dpi", "20", "--election", str(ELECTION), "--style", "S1", "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "would be 15.0 in wide; give the scan's real --dpi" in r.stderr
    r = run("calibrate", "layout", "--blank", str(blank), "--pdf-page", "2", "--dpi", "100", "--election", str(ELECTION), "--style", "S1",
            "--out", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "is not a PDF" in r.stderr
    assert not (tmp_path / "x.json").exists()
