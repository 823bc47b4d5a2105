#!/usr/bin/env python
"""Speed benchmark of ``scanpipe ingest`` against the floor of merely decoding the images.

On a set of at least 400 single-page cards of mixed formats (PNG, JPEG, TIFF G4), generated
with a fresh seed into a temporary folder (or given with ``--dir`` and ``--election``, or as
``--deck DIR``: any folder of cards with an ``election.json``, layouts and a truth file, as
``bench_accuracy.py --deck`` takes; the cards the truth lists are ingested, nothing else in
the folder):

(a) ``cv2.imread(path)`` with default flags over every file, in this process;
(b) the wall time of ``scanpipe ingest DIR --workers 1`` as a subprocess (start-up
    included) into a fresh SQLite database;

each the median of ``--runs`` runs (a and b interleaved), and the ratio (b)/(a) (target <= 1.3 for our cards, <= 2 for
vendor cards: the deck's layouts say which); the same ratio by
CPU seconds is printed too (on a busy machine wall times swing with the other load). Then
cards per second with ``--workers 2``, and a cProfile of one in-process ingest showing where
the time goes. Generated sets hold our styles only (fiducials and card code); every 10th
sheet carries a Code 128 pairing sticker. Prints the exact command lines and the environment.

    python scripts/bench_ingest.py                    # 400 fresh cards, 3 runs
    python scripts/bench_ingest.py --cards 40 --runs 1 --profile-cards 20   # quick check
    python scripts/bench_ingest.py --deck fixtures/realballots/cedar --runs 1   # a deck drawn elsewhere
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

CARD_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")


# --------------------------------------------------------------------------------------
# Shared with bench_scale.py and bench_memory.py (imported from this folder)


LABEL_EVERY = 10


def make_cards(root: Path, *, sheets: int, seed: int, profile: str = "typical", jobs: int | None = None,
               vendor: bool = False) -> tuple[Path, Path]:
    """Generate the demo election and ``sheets`` sheets saved one page per file.

    Our styles only unless ``vendor`` (vendor cards are registered against reference scans,
    a different, slower path). Returns ``(election.json, folder of card files)``. A two-page
    style gives two files.
    """
    from scanpipe.synth.deck import generate_deck
    from scanpipe.synth.definition import write_demo_election

    election = write_demo_election(root / "def", seed=seed)
    # one file per page; every LABEL_EVERY-th sheet carries a Code 128 pairing sticker
    overrides: dict[int, dict[str, object]] = {i: {"container": "file"} for i in range(sheets)}
    for i in range(0, sheets, LABEL_EVERY):
        overrides[i].update(label=f"DUP-B{i:05d}", kind="duplicate")
    generate_deck(election, root / "deck", cards=sheets, seed=seed, profile=profile, include_vendor_styles=vendor,
                  jobs=jobs or min(4, os.cpu_count() or 1), overrides=overrides)
    return election, root / "deck" / "cards"


def card_files(folder: Path) -> list[Path]:
    return sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in CARD_SUFFIXES)


def scanpipe_cmd(db: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "scanpipe.cli", "--db", db, *args]


def run_checked(cmd: Sequence[str], ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(cmd), capture_output=True, text=True, check=False)
    if done.returncode not in ok:
        sys.exit(f"command failed ({done.returncode}): {shlex.join(cmd)}\n{done.stdout}\n{done.stderr}")
    return done


def timed_ingest(election: Path, folder: Path, work: Path, tag: str, *extra: str) -> float:
    """Wall seconds of one ``scanpipe ingest`` subprocess into a fresh, initialised SQLite db.

    Its CPU seconds (user + system of the ingest process; pool workers are not reliably
    included) go to :data:`LAST_CPU`.
    """
    db_path = work / f"{tag}.db"
    for f in work.glob(f"{tag}.db*"):
        f.unlink()
    db = f"sqlite:///{db_path}"
    run_checked(scanpipe_cmd(db, "init", "--election", str(election)))
    cmd = scanpipe_cmd(db, "ingest", str(folder), "-q", *extra)
    before = _children_cpu()
    started = time.perf_counter()
    run_checked(cmd, ok=(0, 1))
    elapsed = time.perf_counter() - started
    LAST_CPU.append(_children_cpu() - before)
    return elapsed


LAST_CPU: list[float] = []  # CPU seconds of each timed_ingest, in call order


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def environment() -> list[str]:
    import cv2
    import numpy

    import scanpipe

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return [
        f"command: {shlex.join([sys.executable, *sys.argv])}",
        f"machine: {platform.platform()}; {platform.processor() or platform.machine()}; cores {cores} (usable {usable}); load average {load}",
        f"python {platform.python_version()}, scanpipe {scanpipe.__version__}, numpy {numpy.__version__}, opencv {cv2.__version__}",
    ]


def compile_bytecode() -> str:
    """Compile scanpipe's modules to bytecode, as a regular (non-editable) pip install does.

    An editable install never writes ``.pyc`` files where ``PYTHONDONTWRITEBYTECODE`` is set
    (it is on these machines), and every timed process would then compile each module from
    source (about 0.08 s a process, workers included)."""
    import compileall

    import scanpipe

    package = Path(scanpipe.__file__).parent
    ok = compileall.compile_dir(str(package), quiet=1)
    setting = os.environ.get("PYTHONDONTWRITEBYTECODE")
    return (f"bytecode: scanpipe's modules compiled ({'ok' if ok else 'with errors'}); "
            f"PYTHONDONTWRITEBYTECODE={'set' if setting else 'unset'} here")


def formats(files: Sequence[Path]) -> str:
    counts = Counter(f.suffix.lower() for f in files)
    return ", ".join(f"{n} {ext}" for ext, n in sorted(counts.items()))


def median_of(runs: int, fn, *args) -> tuple[float, list[float]]:
    times = [fn(*args) for _ in range(runs)]
    return statistics.median(times), times


def fmt_times(times: Sequence[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


# --------------------------------------------------------------------------------------


IMREAD_CPU: list[float] = []  # CPU seconds of each imread_all, in call order


def imread_all(files: Sequence[Path]) -> float:
    import cv2

    started, cpu = time.perf_counter(), time.process_time()
    failed = [f for f in files if cv2.imread(str(f)) is None]
    elapsed = time.perf_counter() - started
    IMREAD_CPU.append(time.process_time() - cpu)
    if failed:
        print(f"    note: cv2.imread could not read {len(failed)} file(s), e.g. {failed[0]}")
    return elapsed


def profile_ingest(election: Path, files: Sequence[Path], work: Path, top: int) -> str:
    """cProfile one in-process ingest (workers 1) of ``files``; the top functions as text."""
    from scanpipe.store.repository import Store
    from scanpipe.types import CardHints
    from scanpipe.workflow import ingest_paths, init_election

    db = work / "profile.db"
    for f in work.glob("profile.db*"):
        f.unlink()
    store = Store.open(f"sqlite:///{db}")
    try:
        store.migrate()
        init_election(store, election)
        profiler = cProfile.Profile()
        profiler.enable()
        ingest_paths(store, [str(f) for f in files], batch="profile", hints=CardHints(), workers=1)
        profiler.disable()
    finally:
        store.close()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


def deck_cards(deck_dir: Path, work: Path) -> tuple[Path, Path, list[Path]]:
    """``(election.json, folder, files)`` of a ``--deck``: the folder holds exactly the cards
    its truth lists (the truth's own folder when nothing else there is a card, else a folder
    of links to them made in ``work``: a deck's layouts carry reference scans, not cards)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from deck_truth import DeckError, load_deck

    try:
        deck = load_deck(deck_dir)
    except DeckError as exc:
        sys.exit(f"error: {exc}")
    files = deck.files
    common = Path(os.path.commonpath([str(f.parent) for f in files]))
    ingestible = (*CARD_SUFFIXES, ".pdf")
    if sorted(f for f in common.rglob("*") if f.is_file() and f.suffix.lower() in ingestible) == files:
        return deck.election_path, common, files
    staged = work / "deck-cards"
    links = []
    for f in files:
        link = staged / f.relative_to(deck.root)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(f)
        links.append(link)
    print(f"{deck.describe()}: its {len(files)} card files linked into {staged}")
    return deck.election_path, staged, links


def card_set(ap: argparse.ArgumentParser, args: argparse.Namespace, name: str) -> tuple[Path, Path, Path, list[Path]]:
    """The benchmark's cards: ``--deck``, ``--dir`` with ``--election``, or ``--cards`` sheets
    generated with ``--seed`` (fresh when not given) into a temporary folder. Prints the environment."""
    work = Path(tempfile.mkdtemp(prefix=f"scanpipe-bench-{name}-"))
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    for line in environment():
        print(line)
    print(compile_bytecode())
    if getattr(args, "deck", None):
        election, folder, files = deck_cards(args.deck, work)
        print(f"cards: {len(files)} files ({formats(files)}) from the deck {args.deck}")
        return work, election, folder, files
    if args.dir:
        if not args.election:
            ap.error("--dir needs --election")
        election, folder = args.election.resolve(), args.dir.resolve()
    else:
        t = time.perf_counter()
        election, folder = make_cards(work, sheets=args.cards, seed=seed)
        print(f"generated {args.cards} held-out sheets (seed {seed}, profile typical) in {time.perf_counter() - t:.1f} s into {folder}")
    files = card_files(folder)
    print(f"cards: {len(files)} files ({formats(files)})")
    if len(files) < 400:
        print(f"note: {len(files)} < 400 cards: a quick check, not the benchmark")
    return work, election, folder, files


FIDUCIAL_TARGET, VENDOR_TARGET = 1.3, 2.0


def ratio_target(election: Path) -> float:
    """The speed target of the deck's kind of card: 1.3x the decode for our own cards (with
    fiducials), 2x for vendor cards (no fiducials, no QR: issue 8)."""
    from scanpipe.election import load_election

    pages = [p for s in load_election(election).ballot_styles for p in s.layout.pages]
    return FIDUCIAL_TARGET if any(p.fiducials_in for p in pages) else VENDOR_TARGET


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, help="existing folder of card files (with --election); default: generate")
    ap.add_argument("--election", type=Path, help="election.json for --dir")
    ap.add_argument("--deck", type=Path, help="a deck folder (cards, election.json, layouts, expected.json or truth.json)")
    ap.add_argument("--cards", type=int, default=400, help="sheets to generate (default 400)")
    ap.add_argument("--seed", type=int, default=None, help="generation seed (default: fresh, printed)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile-cards", type=int, default=100, help="cards in the profiled in-process ingest (0: skip)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--cold", action="store_true",
                    help="every ingest learns the election's blanks anew (no cache of the learning between runs)")
    args = ap.parse_args(argv)

    work, election, folder, files = card_set(ap, args, "ingest")
    if args.cold:
        os.environ["SCANPIPE_CACHE_DIR"] = "off"
        print("learned blanks: not cached (--cold): every ingest learns the election's blanks anew")
    else:
        os.environ.setdefault("SCANPIPE_CACHE_DIR", str(work / "learned-cache"))
        print(f"learned blanks: cached in {os.environ['SCANPIPE_CACHE_DIR']} (the first ingest learns the election's "
              "blanks, later ones load them, as a board's every ingest after its first does; --cold: never cached)")

    imread_all(files[: min(len(files), 50)])  # warm the page cache for both sides
    IMREAD_CPU.clear()
    LAST_CPU.clear()
    imread_runs, ingest_runs = [], []
    for _ in range(args.runs):  # interleaved, so drifting load on the machine hits both alike
        imread_runs.append(imread_all(files))
        ingest_runs.append(timed_ingest(election, folder, work, "w1", "--workers", "1"))
    imread_s, ingest_s = statistics.median(imread_runs), statistics.median(ingest_runs)
    imread_cpu, ingest_cpu = statistics.median(IMREAD_CPU), statistics.median(LAST_CPU)
    print(f"(a) cv2.imread over {len(files)} files, in-process: wall median {imread_s:.2f} s  [{fmt_times(imread_runs)}]; "
          f"CPU {imread_cpu:.2f} s")
    cmd1 = scanpipe_cmd("sqlite:///<fresh>.db", "ingest", str(folder), "-q", "--workers", "1")
    print(f"(b) {shlex.join(cmd1)}")
    print(f"    wall median {ingest_s:.2f} s  [{fmt_times(ingest_runs)}]; {len(files) / ingest_s:.1f} cards/s; CPU {ingest_cpu:.2f} s")
    print(f"ratio ingest/imread = {ingest_s / imread_s:.2f}  (target <= {ratio_target(election)}: "
          f"{'cards with our fiducials' if ratio_target(election) == FIDUCIAL_TARGET else 'vendor cards (no fiducials, no QR), issue 8'})")
    print(f"    the same by CPU seconds (less sensitive to other load on the machine): {ingest_cpu / imread_cpu:.2f}")
    LAST_CPU.clear()
    two_s, two_runs = median_of(args.runs, timed_ingest, election, folder, work, "w2", "--workers", "2")
    print(f"(c) {shlex.join(scanpipe_cmd('sqlite:///<fresh>.db', 'ingest', str(folder), '-q', '--workers', '2'))}")
    print(f"    wall median {two_s:.2f} s  [{fmt_times(two_runs)}]; {len(files) / two_s:.1f} cards/s; "
          f"speedup over --workers 1: {ingest_s / two_s:.2f}")
    if args.profile_cards:
        subset = files[: args.profile_cards]
        print(f"\nprofile of one in-process ingest of {len(subset)} cards (workers 1):")
        print(profile_ingest(election, subset, work, args.top))
    if args.keep:
        print(f"kept {work}")
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
