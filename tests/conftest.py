"""Shared pytest fixtures.

Sections:
  1. PostgreSQL: a throwaway server for the session (``postgres_url``), a fresh database per
     test (``pg_database_url``), and ``db_url`` giving each repository test both backends.
  2. Optional extras a test needs (``ocr_engine``).

Anything a test needs from the machine is skipped when missing locally, and fails under CI
(env ``CI`` set): CI must never silently skip what it is there to run.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from glob import glob
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from scanpipe.types import Election

# What the reader learns from an election's blanks is cached between runs (scanpipe.learned_cache):
# the tests (and the CLI subprocesses they start) keep theirs in a folder of their own, never
# the user's cache.
if "SCANPIPE_CACHE_DIR" not in os.environ:
    os.environ["SCANPIPE_CACHE_DIR"] = _TEST_CACHE = tempfile.mkdtemp(prefix="scanpipe-test-cache-")
    atexit.register(shutil.rmtree, _TEST_CACHE, ignore_errors=True)
# ... and so are the notes of the file an in-process ingest is reading (scanpipe.pipeline.ReadingMarks)
if "XDG_STATE_HOME" not in os.environ:
    os.environ["XDG_STATE_HOME"] = _TEST_STATE = tempfile.mkdtemp(prefix="scanpipe-test-state-")
    atexit.register(shutil.rmtree, _TEST_STATE, ignore_errors=True)

# ======================================================================================
# 1. PostgreSQL
#
# Debian's postgresql puts initdb/pg_ctl in a versioned folder off PATH. As root the server
# must run as the postgres user (runuser); as a normal user it runs as that user. The
# socket and data live in a temp dir; the server listens on 127.0.0.1 on a free port.
# Without the binaries the PostgreSQL tests are skipped, except under CI (env CI set),
# where they fail: CI must never silently skip the real-server tests.


def _pg_bindir() -> Path | None:
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").is_file():
            return candidate
    found = sorted(glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str]) -> None:
    done = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """SQLAlchemy URL of the maintenance database of a throwaway PostgreSQL server."""
    bindir = _pg_bindir()
    if bindir is None:
        message = "PostgreSQL binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"
        if os.environ.get("CI"):
            pytest.fail(f"{message} (CI is set: the PostgreSQL tests must run)")
        pytest.skip(message)
    folder = Path(tempfile.mkdtemp(prefix="scanpipe-pg-"))  # /tmp: reachable by the postgres user
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    port = _free_port()
    _run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
    options = f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
    _run([str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"])
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_database_factory(postgres_url: str) -> Iterator[Callable[[], str]]:
    """Makes fresh, empty databases on the throwaway server; all dropped after the test."""
    import psycopg

    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    made: list[str] = []

    def make() -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return postgres_url.rsplit("/", 1)[0] + f"/{name}"

    yield make
    with psycopg.connect(plain, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_database_url(pg_database_factory: Callable[[], str]) -> str:
    """A fresh, empty database on the throwaway server; dropped after the test."""
    return pg_database_factory()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database URL: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'scanpipe.db'}"
    return str(request.getfixturevalue("pg_database_url"))


# ======================================================================================
# 2. Optional extras


def require(what: str, install: str) -> None:
    """Skip (locally) or fail (under CI) a test whose requirement is missing."""
    message = f"{what} is not installed: {install}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: these tests must run)")
    pytest.skip(message)


@pytest.fixture(scope="session")
def ocr_engine() -> None:
    """The OCR extra (rapidocr with onnxruntime): without it machine-printed records are
    queued ``text_unread``, so tests of the OCR itself cannot run."""
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except ImportError as e:
        require(f"the OCR extra ({e})", "pip install --no-deps 'rapidocr-onnxruntime>=1.4' && pip install 'scanpipe[ocr]'")


# ======================================================================================
# 3. The vendor-like synthetic election (scanpipe.synth.vendor), written once a session:
#    its blanks and layouts, read by several modules and never changed by them.


@pytest.fixture(scope="session")
def vendor_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scanpipe.synth.vendor import write_vendor_election

    return write_vendor_election(tmp_path_factory.mktemp("vendor") / "election").parent


@pytest.fixture(scope="session")
def vendor_election(vendor_dir: Path) -> Election:
    from scanpipe.election import load_election

    return load_election(vendor_dir / "election.json")
