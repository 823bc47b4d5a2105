"""Workers die with their parent (issue 9 item 12): after ``kill -9`` of ``ingest``,
no pool process (nor the fork server, nor the resource tracker) is left running.

Every wait here is for an event (a process appearing, a process ending) with a generous
guard against a hang, never a sleep that hopes something happened meanwhile.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "ballot_images"
GUARD_S = 120.0  # only against a hang: each wait ends as soon as its event happens

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the lifelines are Linux's (pidfd, prctl)")


def wait_until(what: str, done: object) -> None:
    deadline = time.monotonic() + GUARD_S
    while not done():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"waited {GUARD_S:g} s for {what}")
        time.sleep(0.05)


def gone(procs: list[psutil.Process]) -> bool:
    def ended(p: psutil.Process) -> bool:
        try:
            return not p.is_running() or p.status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    return all(ended(p) for p in procs)


CHILD = textwrap.dedent("""
    import os, sys, time
    from scanpipe import lifeline
    {how}
    print("armed", flush=True)
    time.sleep(600)
""")
COORDINATOR = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=sys.stdout)
    print(child.pid, flush=True)
    time.sleep(600)
""")


@pytest.mark.parametrize("how", [
    "lifeline.die_with(os.getppid())",  # the watch on a pidfd
    "lifeline.die_with_parent()",  # the kernel's parent-death signal alone
    "lifeline._pidfd = lambda pid: None\nlifeline.POLL_SECONDS = 0.05\nlifeline.die_with(os.getppid())",  # the polling fallback
])
def test_a_process_with_a_lifeline_ends_when_its_parent_is_killed(how: str) -> None:
    coordinator = subprocess.Popen([sys.executable, "-c", COORDINATOR, CHILD.format(how=how)], stdout=subprocess.PIPE, text=True,
                                   cwd=ROOT)
    assert coordinator.stdout is not None
    child = psutil.Process(int(coordinator.stdout.readline()))
    assert coordinator.stdout.readline().strip() == "armed"
    os.kill(coordinator.pid, signal.SIGKILL)
    coordinator.wait()
    try:
        wait_until("the child to end after its parent was killed", lambda: gone([child]))
    finally:
        if child.is_running():
            child.kill()


def _many_cards(folder: Path, copies: int) -> None:
    """Copies of the deck's cards, each made distinct bytes (a tEXt chunk): many card ids."""
    folder.mkdir()
    for k in range(copies):
        for card in sorted((FIX / "deck" / "cards").glob("*.png")):
            data = card.read_bytes()
            body = b"Comment\x00copy " + str(k).encode()
            chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
            (folder / f"{k:03d}-{card.name}").write_bytes(data[:-12] + chunk + data[-12:])


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["local", "dask"])
def test_kill_9_of_ingest_leaves_no_worker_behind(tmp_path: Path, executor: str) -> None:
    if executor == "dask":
        pytest.importorskip("distributed")
    _many_cards(tmp_path / "cards", 20)
    db = f"sqlite:///{tmp_path / 'scan.db'}"
    cli = [sys.executable, "-m", "scanpipe.cli", "--db", db]
    subprocess.run([*cli, "init", "--election", str(FIX / "election" / "election.json")], check=True, capture_output=True)
    ingest = subprocess.Popen([*cli, "ingest", str(tmp_path / "cards"), "-q", "--workers", "2", "--executor", executor],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree: list[psutil.Process] = []
    try:
        coordinator = psutil.Process(ingest.pid)

        def workers_reading() -> bool:  # two workers exist and the first results were stored
            tree[:] = coordinator.children(recursive=True)
            workers = [p for p in tree if any("forkserver" in a or "spawn" in a for a in _cmdline(p))]
            return len(workers) >= 3 - (executor == "dask") and _cards_stored(tmp_path / "scan.db") > 0

        wait_until("two workers to be reading cards", workers_reading)
        assert ingest.poll() is None, "ingest finished before it could be killed: give it more cards"
        os.kill(ingest.pid, signal.SIGKILL)
        ingest.wait()
        wait_until(f"every process of the killed ingest to end: {[p.pid for p in tree]}", lambda: gone(tree))
    finally:
        for p in [*tree, psutil.Process(ingest.pid) if ingest.poll() is None else None]:
            try:
                if p is not None:
                    p.kill()
            except psutil.NoSuchProcess:
                pass


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return list(p.cmdline())
    except psutil.Error:  # ended meanwhile
        return []


def _cards_stored(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2) as conn:
            return int(conn.execute("select count(*) from card").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_the_fork_server_preload_stays_single_threaded() -> None:
    """What the fork server imports before forking workers (scanpipe.pipeline's preload) must
    start no thread (numpy and OpenCV do): forking a threaded process can leave a worker
    holding a lock no thread will release."""
    code = ("import os, sys; import scanpipe._forkserver_lifeline, scanpipe.cli; "
            "print(len(os.listdir('/proc/self/task')), 'numpy' in sys.modules, 'cv2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "False", "False"], out
