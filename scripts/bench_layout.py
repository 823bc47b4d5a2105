"""How well `calibrate layout` proposes layouts, against hand-checked ones.

For every ballot style of an election whose layouts were checked by a person (the truth),
the proposal is made again from that style's blank (the layout's ``reference``) and, when
given, from another source of the same style (the vendor's PDF page, or a scan when the
truth was drawn on the PDF), and compared with the truth:

* **printed**: the targets of the truth layout (every printed target of the style);
* **found**: printed targets the detector found (a found target within
  :data:`NEAR_IN` of a printed one's centre; for another source, after mapping its page
  onto the reference with a similarity transform fitted on the assignments, RANSAC; a lone
  target fixes the shift only, so it counts as right by construction);
* **extra**: found targets that are no printed target;
* **right**: options placed on their own printed target (found, inferred or by order);
  **wrong**: options placed on another target or elsewhere; **none**: options not placed;
* **check**: assignments the tool marked for a person to check;
* time per page: wall clock and CPU seconds of the whole proposal (targets, text, assignment);
  a PDF's names come from its text layer as in `calibrate layout` (``--ocr-pdf``: by OCR).

    python scripts/bench_layout.py --election ../realset/fixtures/realballots/calhoun2010primary/election.json \\
        --pdf-dir ../shared/realballots/calhoun2010primary/blankpdfs
    python scripts/bench_layout.py --election .../cedar2008primary/election.json \\
        --other STYLE=../shared/realballots/cedar2008primary/blankpdfs/SampleBallots.pdf#3 ...

A figure is only as good as the truth: the layouts must have been checked by eye.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scanpipe.imaging.decode import decode_card_bytes
from scanpipe.imaging.page_text import pdf_text_lines
from scanpipe.layout_assign import REVIEW_BELOW, How, PageScan, Proposal
from scanpipe.layout_from_blank import BlankPage, contests_of_style, propose_layout

NEAR_IN = 0.06


@dataclass
class Score:
    printed: int = 0
    found: int = 0
    extra: int = 0
    right: int = 0
    wrong: int = 0
    none: int = 0
    check: int = 0
    pages: int = 0
    wall: float = 0.0
    cpu: float = 0.0

    def add(self, other: Score) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self, name: str) -> str:
        per = f"{self.wall / self.pages:6.1f} {self.cpu / self.pages:5.1f}" if self.pages else ""
        return (f"{name:34s} {self.printed:7d} {self.found:6d} {self.extra:6d} {self.right:6d} {self.wrong:6d} {self.none:5d} "
                f"{self.check:6d} {per}")


HEADER = f"{'style / source':34s} {'printed':>7s} {'found':>6s} {'extra':>6s} {'right':>6s} {'wrong':>6s} {'none':>5s} {'check':>6s} {'s/page':>6s} {'cpu':>5s}"


def centre(box: tuple[float, ...]) -> np.ndarray:
    return np.array([box[0] + box[2] / 2.0, box[1] + box[3] / 2.0])


def compare(truth_page: dict[str, Any], scan: PageScan, proposal: Proposal, page: int, *, transform: np.ndarray | None) -> Score:
    """Score one page; ``transform`` maps proposal pixels to truth pixels (None: the same frame)."""
    dpi = float(truth_page.get("reference_dpi") or scan.dpi)
    truth = {(t["contest"], t["option"]): centre(t["box"]) * dpi for t in truth_page["targets"]}

    def to_truth(box: tuple[int, int, int, int]) -> np.ndarray:
        c = centre(box) * (dpi / scan.dpi if transform is None else 1.0)
        return c if transform is None else transform[:, :2] @ c + transform[:, 2]

    near = NEAR_IN * dpi
    score = Score(printed=len(truth))
    free = dict(truth)
    for target in scan.targets:
        c = to_truth(target.box_px)
        hit = min(free.items(), key=lambda kv: float(np.linalg.norm(kv[1] - c)), default=None)
        if hit is not None and np.linalg.norm(hit[1] - c) <= near:
            score.found += 1
            del free[hit[0]]
        else:
            score.extra += 1
    placed = set()
    for a in proposal.assignments:
        if a.page != page:
            continue
        key = (a.contest, a.option)
        ok = key in truth and np.linalg.norm(truth[key] - to_truth(a.box_px)) <= near
        score.right += ok
        score.wrong += not ok
        score.check += a.confidence < REVIEW_BELOW or a.how in (How.ORDER, How.INFERRED)
        placed.add(key)
    score.none = len(set(truth) - placed)
    return score


def fit_transform(truth_page: dict[str, Any], scan: PageScan, proposal: Proposal, page: int) -> np.ndarray | None:
    """Similarity transform from the PDF page's pixels to the scan's, fitted on the assignments (RANSAC)."""
    dpi = float(truth_page.get("reference_dpi") or 200.0)
    truth = {(t["contest"], t["option"]): centre(t["box"]) * dpi for t in truth_page["targets"]}
    pairs = [(centre(a.box_px), truth[(a.contest, a.option)]) for a in proposal.assignments if a.page == page and (a.contest, a.option) in truth]
    if not pairs:
        return None
    src = np.array([p[0] for p in pairs], np.float32)
    dst = np.array([p[1] for p in pairs], np.float32)
    if len(pairs) == 1:  # one target: the scale of the two resolutions, and the shift
        scale = dpi / scan.dpi
        return np.array([[scale, 0.0, dst[0, 0] - scale * src[0, 0]], [0.0, scale, dst[0, 1] - scale * src[0, 1]]])
    m, _ = cv2.estimateAffinePartial2D(src, dst, method=cv2.RANSAC, ransacReprojThreshold=NEAR_IN * dpi)
    return m


def load_scan(path: Path, dpi: float | None) -> tuple[np.ndarray, float]:
    (page, *_) = decode_card_bytes(path.read_bytes(), str(path))
    return page.image, float(dpi or page.dpi or 200.0)


def load_other(spec: str, dpi: float, *, pdf_text: bool) -> BlankPage:
    """A PDF page rendered at ``dpi`` (``FILE.pdf#PAGE``) with its text layer (as
    `calibrate layout` reads it, unless ``pdf_text`` is off), or an image at its own resolution."""
    path, _, number = spec.partition("#")
    if not path.lower().endswith(".pdf"):
        gray, own = load_scan(Path(path), None)
        return BlankPage(1, gray, own)
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        page = pdf[int(number or 1) - 1]
        gray = np.ascontiguousarray(page.render(scale=dpi / 72.0, grayscale=True).to_numpy())
        gray = gray[:, :, 0].copy() if gray.ndim == 3 else gray
        return BlankPage(1, gray, dpi, texts=pdf_text_lines(page, dpi) if pdf_text else None)
    finally:
        pdf.close()


def timed(blank: BlankPage, contests: Any) -> tuple[Proposal, tuple[PageScan, ...], float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    proposal, scans = propose_layout([blank], contests)
    return proposal, scans, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--election", type=Path, required=True, help="election.json whose layouts were checked by eye")
    ap.add_argument("--other", action="append", default=[], help="STYLE=FILE.pdf[#PAGE] or STYLE=SCAN: another blank of a style")
    ap.add_argument("--pdf-dir", type=Path, default=None, help="a folder of <style>.pdf files")
    ap.add_argument("--dpi", type=float, default=200.0, help="PDF render resolution")
    ap.add_argument("--styles", default=None, help="only these styles (comma-separated)")
    ap.add_argument("--no-reference", action="store_true", help="only the other sources")
    ap.add_argument("--ocr-pdf", action="store_true", help="read a PDF's names by OCR, not from its text layer")
    args = ap.parse_args()

    definition = json.loads(args.election.read_text())
    others = dict(spec.split("=", 1) for spec in args.other)
    wanted = set(args.styles.split(",")) if args.styles else None
    totals = {"reference": Score(), "other": Score()}
    print(HEADER)
    for style in definition["ballot_styles"]:
        sid = style["id"]
        if wanted and sid not in wanted:
            continue
        layout_path = args.election.parent / style["layout"]
        truth = json.loads(layout_path.read_text())
        truth_page = truth["pages"][0]
        contests = contests_of_style(definition, sid)
        if not args.no_reference and truth_page.get("reference"):
            gray, dpi = load_scan(layout_path.parent / truth_page["reference"], truth_page.get("reference_dpi"))
            proposal, scans, wall, cpu = timed(BlankPage(1, gray, dpi), contests)
            score = compare(truth_page, scans[0], proposal, 1, transform=None)
            score.pages, score.wall, score.cpu = 1, wall, cpu
            totals["reference"].add(score)
            print(score.row(f"{sid} {Path(truth_page['reference']).name}"), flush=True)
        spec = others.get(sid) or (str(args.pdf_dir / f"{sid}.pdf") if args.pdf_dir and (args.pdf_dir / f"{sid}.pdf").is_file() else None)
        if spec:
            proposal, scans, wall, cpu = timed(load_other(spec, args.dpi, pdf_text=not args.ocr_pdf), contests)
            m = fit_transform(truth_page, scans[0], proposal, 1)
            score = compare(truth_page, scans[0], proposal, 1, transform=m) if m is not None else Score(printed=len(truth_page["targets"]), none=len(truth_page["targets"]))
            score.pages, score.wall, score.cpu = 1, wall, cpu
            totals["other"].add(score)
            print(score.row(f"{sid} {Path(spec).name}"), flush=True)
    print()
    for source, score in totals.items():
        if score.pages:
            print(score.row(f"all {score.pages} {source} pages"))


if __name__ == "__main__":
    main()
