"""SANE scanners through ``scanimage`` (Debian ``sane-utils``).

``scanimage --batch --batch-print`` scans page after page from the document feeder; it
writes each page to ``name.part``, renames it when complete and prints the name, so a
printed name is always a whole page. We read those names as they come (pages reach the
caller while the feeder is still running), read the bytes and delete the staging file.

When scanimage ends, its exit status is the SANE status of the failure and its standard
error says the same in words; :func:`classify_exit` maps them to the exceptions of
:mod:`scanpipe.sources.base`:

==========================================  =========================================
scanimage says                              we raise
==========================================  =========================================
``open of device X failed``                 DeviceNotFound
``Document feeder out of documents`` (7)    nothing after >= 1 page (the stack ended);
                                            FeederEmpty before the first page
``Document feeder jammed`` (6)              PaperJam
``Error during device I/O`` (9), killed     DeviceGone
``Scanner cover is open`` (8), busy (3),    DeviceProblem
cancelled at the device (2), others
==========================================  =========================================

A scanimage that has said why the scan ended (``scanimage: sane_start: ...`` on its standard
error) but has not exited ENDED_GRACE_S later is killed, and what it said stands (the SANE
test backend sometimes hangs after a feeder status); one that gives no page within
PAGE_TIMEOUT_S is killed and reported DeviceGone.

The python-sane binding is not used: scanimage is what Debian ships and what operators
can run by hand to check a device, and its process boundary keeps a misbehaving driver
from taking scanpipe down with it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from scanpipe.errors import SourceError
from scanpipe.sources.base import (
    AcquiredPage,
    AcquisitionError,
    DeviceGone,
    DeviceInfo,
    DeviceNotFound,
    DeviceProblem,
    FeederEmpty,
    PaperJam,
    ScanSettings,
    Side,
    provenance,
    stamp_png,
)

LIST_TIMEOUT_S = 60.0  # network scanners can take a while to answer discovery
STOP_TIMEOUT_S = 15.0  # after a cancel, scanimage must end within this, or it is killed
PAGE_TIMEOUT_S = 180.0  # no page within this (a hung driver): scanimage is killed, DeviceGone
ENDED_GRACE_S = 10.0  # scanimage said why it stopped but did not exit within this: it is killed, and that reason stands
_ENDED_LINE = re.compile(r"^scanimage: sane_(?:start|read): (.+)$", re.MULTILINE)
_OPTION_LINE = re.compile(r"^\s+--([A-Za-z0-9-]+)\s+(.*?)\s+\[(.*)\]\s*$")

SANE_STATUS_CANCELLED = 2
SANE_STATUS_DEVICE_BUSY = 3
SANE_STATUS_JAMMED = 6
SANE_STATUS_NO_DOCS = 7
SANE_STATUS_COVER_OPEN = 8
SANE_STATUS_IO_ERROR = 9
# scanimage's words for a status (sane_strstatus), and that status: what its exit code would be
_STATUS_WORDS = (("out of documents", SANE_STATUS_NO_DOCS), ("jammed", SANE_STATUS_JAMMED), ("cover", SANE_STATUS_COVER_OPEN),
                 ("device i/o", SANE_STATUS_IO_ERROR), ("busy", SANE_STATUS_DEVICE_BUSY), ("cancelled", SANE_STATUS_CANCELLED))


def scanimage_path() -> str:
    """The scanimage executable, or a SourceError saying how to install it."""
    found = shutil.which("scanimage")
    if found is None:
        raise SourceError("scanimage was not found: install SANE's command line tools (Debian: apt-get install sane-utils)")
    return found


def sane_devices() -> list[DeviceInfo]:
    """The SANE devices ``scanimage`` can see (none when scanimage is not installed)."""
    if shutil.which("scanimage") is None:
        return []
    done = _run([scanimage_path(), "-f", "%d\t%v\t%m\t%t%n"], timeout=LIST_TIMEOUT_S)
    return parse_device_list(done.stdout)


def parse_device_list(text: str) -> list[DeviceInfo]:
    """Lines ``name<TAB>vendor<TAB>model<TAB>type`` (``scanimage -f``) -> devices."""
    out = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0].strip():
            out.append(DeviceInfo(parts[0].strip(), parts[1].strip(), parts[2].strip(), "sane"))
    return out


def parse_options(text: str) -> dict[str, tuple[list[str], str]]:
    """``scanimage -A`` output -> option name -> (choices, current value).

    Only list-valued options (``a|b|c``) have choices; ranges give an empty list.
    """
    options: dict[str, tuple[list[str], str]] = {}
    for line in text.splitlines():
        m = _OPTION_LINE.match(line)
        if m is None:
            continue
        name, spec, current = m.groups()
        choices = spec.split("|") if "|" in spec else ([spec] if spec and ".." not in spec else [])
        options[name] = (choices, current)
    return options


def choose_source(choices: list[str], *, duplex: bool) -> str | None:
    """The feeder source to ask for: a duplex one when ``duplex``; None when the device
    has no feeder (then it scans one page per command)."""
    low = [c.lower() for c in choices]
    if duplex:
        return next((c for c, lc in zip(choices, low) if "duplex" in lc), None)
    exact = next((c for c, lc in zip(choices, low) if lc in ("automatic document feeder", "adf", "adf front", "feeder")), None)
    if exact is not None:
        return exact
    return next((c for c, lc in zip(choices, low)
                 if ("adf" in lc or "feeder" in lc) and "duplex" not in lc and "back" not in lc), None)


def choose_mode(choices: list[str], mode: str) -> str | None:
    """The device's name for ``gray`` / ``color`` (``Gray``, ``Grayscale``, ``24bit Color``...)."""
    words = ("gray", "grey") if mode == "gray" else ("color", "colour")
    exact = next((c for c in choices if c.lower() in words), None)
    return exact or next((c for c in choices if any(w in c.lower() for w in words)), None)


@dataclass(frozen=True, slots=True)
class ScanCommand:
    argv: list[str]
    one_page: bool  # the device has no feeder: one page per command


def build_command(scanimage: str, device: str, options: dict[str, tuple[list[str], str]], settings: ScanSettings,
                  staging: Path) -> ScanCommand:
    """The scanimage command line for these settings; a SourceError when the device
    cannot do what was asked (duplex on a simplex device, an unknown mode)."""
    argv = [scanimage, "-d", device, "--format=png", f"--batch={staging / 'page%05d.png'}", "--batch-print",
            f"--resolution={settings.dpi}"]
    one_page = False
    if "source" in options:
        choices = options["source"][0]
        source = choose_source(choices, duplex=settings.duplex)
        if source is None and settings.duplex:
            raise SourceError(f"{device}: has no duplex feeder (its sources: {', '.join(choices)}); scan without --duplex")
        if source is None:
            one_page = True  # a flatbed only: scanning in batch would scan the same glass forever
        else:
            argv.append(f"--source={source}")
    elif settings.duplex:
        raise SourceError(f"{device}: offers no choice of source, so duplex cannot be asked for; scan without --duplex")
    if "mode" in options:
        mode = choose_mode(options["mode"][0], settings.mode)
        if mode is None:
            raise SourceError(f"{device}: has no {settings.mode} mode (its modes: {', '.join(options['mode'][0])})")
        argv.append(f"--mode={mode}")
    count = 1 if one_page else settings.max_pages
    if count is not None:
        argv.append(f"--batch-count={count}")
    return ScanCommand(argv, one_page)


def classify_exit(device: str, returncode: int, stderr: str, *, pages: int, stopped: bool) -> AcquisitionError | None:
    """What scanimage's end means: None for a normal end of the stack, else the error."""
    text = stderr.lower()
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if "scanimage:" in ln), None)
    if stopped and (returncode < 0 or returncode in (0, SANE_STATUS_CANCELLED)):
        return None
    if "open of device" in text:
        return DeviceNotFound(device, last)
    if returncode == SANE_STATUS_JAMMED or "jammed" in text:
        return PaperJam(device, pages_delivered=pages, detail=last)
    if returncode < 0:
        return DeviceGone(device, pages_delivered=pages, detail=f"scanimage was ended by signal {_signal_name(-returncode)}")
    if returncode == SANE_STATUS_IO_ERROR:
        return DeviceGone(device, pages_delivered=pages, detail=last)
    if returncode in (0, SANE_STATUS_NO_DOCS):
        return FeederEmpty(device, detail=last) if pages == 0 else None
    what = {SANE_STATUS_COVER_OPEN: "the scanner cover is open: close it",
            SANE_STATUS_DEVICE_BUSY: "the scanner is busy (another program may be using it)",
            SANE_STATUS_CANCELLED: "the scan was cancelled at the scanner"}.get(returncode, f"scanimage failed with status {returncode}")
    return DeviceProblem(device, what, pages_delivered=pages, detail=last)


class SaneSource:
    """A SANE scanner's document feeder, driven by scanimage."""

    def __init__(self, device: str, settings: ScanSettings | None = None) -> None:
        self.name = device
        self.settings = settings or ScanSettings()
        self._staging: Path | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._stopped = False
        self.one_page = False

    @staticmethod
    def devices() -> list[DeviceInfo]:
        return sane_devices()

    def __enter__(self) -> Self:
        scanimage = scanimage_path()
        done = _run([scanimage, "-d", self.name, "-A"], timeout=LIST_TIMEOUT_S)
        if done.returncode != 0:
            known = tuple(d.name for d in sane_devices())
            raise DeviceNotFound(self.name, _last_line(done.stderr), known=known)
        self._staging = Path(tempfile.mkdtemp(prefix="scanpipe-sane-"))
        command = build_command(scanimage, self.name, parse_options(done.stdout), self.settings, self._staging)
        self._argv, self.one_page = command.argv, command.one_page
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._end_process()
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    @property
    def pid(self) -> int | None:
        """The running scanimage process (tests use it to simulate a device that vanishes)."""
        return self._proc.pid if self._proc is not None else None

    def stop(self) -> None:
        """Ask scanimage to cancel the page in progress and end (SIGTERM: sane_cancel); kill it
        when it has not ended within STOP_TIMEOUT_S (a driver can hang in its cancel: seen
        with the SANE test backend, deadlocked in malloc inside its signal handler)."""
        self._stopped = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            killer = threading.Timer(STOP_TIMEOUT_S, _kill_if_running, args=(proc,))
            killer.daemon = True
            killer.start()

    def pages(self) -> Iterator[AcquiredPage]:
        assert self._staging is not None, "use the source as a context manager"
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self._proc = subprocess.Popen(self._argv, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                      env=os.environ.copy())
        assert self._proc.stdout is not None
        seq = 0
        watchdog = _Watchdog(self._proc, PAGE_TIMEOUT_S)
        ended = _EndedWatch(self._proc, self._stderr.fileno(), ENDED_GRACE_S)
        try:
            for line in self._proc.stdout:
                watchdog.reset()
                path = Path(line.strip())
                if not line.strip():
                    continue
                data = path.read_bytes()
                path.unlink()
                seq += 1
                side: Side = "back" if self.settings.duplex and seq % 2 == 0 else "front"
                yield AcquiredPage(seq, stamp_png(data, provenance(self.name, seq, side)), ".png", side)
                watchdog.reset()  # the time the caller spent on the page is not the scanner's
        finally:
            watchdog.cancel()
            ended.cancel()
        returncode = self._proc.wait()
        if ended.fired is not None:  # it said why it stopped, then hung (seen: the SANE test backend in its cancel)
            returncode = ended.fired
        self._stderr.seek(0)
        stderr = self._stderr.read()
        if ended.fired is None and watchdog.fired:
            said = _last_line(stderr)
            raise DeviceGone(self.name, pages_delivered=seq,
                             detail=f"no page within {PAGE_TIMEOUT_S:.0f} s; scanimage was stopped"
                                    + (f"; its last words: {said}" if said else ""))
        error = classify_exit(self.name, returncode, stderr, pages=seq, stopped=self._stopped)
        if error is not None:
            raise error

    def _end_process(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        self._proc = None


def _kill_if_running(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()


class _Watchdog:
    """Kills ``proc`` when ``reset`` is not called within ``seconds`` (a scanner that hangs)."""

    def __init__(self, proc: subprocess.Popen[str], seconds: float) -> None:
        self._proc, self._seconds = proc, seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.fired = False
        self.reset()

    def _fire(self) -> None:
        if self._proc.poll() is None:
            self.fired = True
            self._proc.kill()

    def reset(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def cancel(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None


class _EndedWatch:
    """Kills ``proc`` when its standard error (the file ``fd``) has said why the scan ended
    (``scanimage: sane_start: ...`` or ``sane_read: ...``) but it has not exited ENDED_GRACE_S
    later; ``fired`` is then the status those words name, as its exit code would have been."""

    def __init__(self, proc: subprocess.Popen[str], fd: int, grace: float, poll: float = 0.25) -> None:
        self._proc, self._fd, self._grace, self._poll = proc, fd, grace, poll
        self._done = threading.Event()
        self.fired: int | None = None
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        said_at: float | None = None
        while not self._done.wait(self._poll) and self._proc.poll() is None:
            try:
                text = os.pread(self._fd, 1 << 16, 0).decode("utf-8", "replace")
            except OSError:
                return
            words = [m.lower() for m in _ENDED_LINE.findall(text)]
            if not words:
                continue
            said_at = said_at if said_at is not None else time.monotonic()
            if time.monotonic() - said_at >= self._grace and self._proc.poll() is None:
                status = next((code for key, code in _STATUS_WORDS if key in words[-1]), None)
                if status is None:
                    return  # words we do not know: the page watchdog decides
                self.fired = status
                self._proc.kill()
                return

    def cancel(self) -> None:
        self._done.set()
        self._thread.join(timeout=5)


def _run(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise SourceError(f"{' '.join(argv)}: no answer within {timeout:.0f} s") from e


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _last_line(text: str) -> str | None:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else None
