"""TWAIN scanners (Windows) through ``pytwain``, behind the same interface as SANE.

An optional extra: ``pip install scanpipe[twain]``. The device name is ``twain:<product
name>`` as ``scanpipe devices`` lists it. The acquisition follows pytwain's documented
sequence (``SourceManager`` -> ``open_source(name)`` -> capabilities ->
``request_acquire(show_ui=False, modal_ui=False)`` -> ``xfer_image_natively()`` until no
transfer is pending); each DIB is turned into a BMP with ``twain.dib_to_bm_file`` and
re-encoded as PNG.

This module cannot be exercised on Linux CI: there ``devices()`` returns [] and opening
raises DeviceNotFound saying TWAIN needs Windows. Its mapping of pytwain's errors is
tested with stand-in exception classes only.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from types import ModuleType, TracebackType
from typing import Any, Self

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

PREFIX = "twain:"
INSTALL_HINT = "TWAIN needs Windows and the twain extra: pip install scanpipe[twain]"


def load_twain() -> ModuleType | None:
    """pytwain's ``twain`` module, or None off Windows or when it is not installed."""
    if sys.platform != "win32":
        return None
    try:
        import twain  # type: ignore[import-not-found]
    except ImportError:
        return None
    return twain


def twain_devices() -> list[DeviceInfo]:
    twain = load_twain()
    if twain is None:
        return []
    with twain.SourceManager(None) as sm:
        return [DeviceInfo(PREFIX + name, "", name, "twain") for name in sm.source_list]


def map_twain_error(device: str, error: Exception, exceptions: Any, *, pages: int) -> AcquisitionError:
    """A pytwain exception (from module ``exceptions``) as one of ours."""
    if isinstance(error, exceptions.PaperJam | exceptions.PaperDoubleFeedError):
        return PaperJam(device, pages_delivered=pages, detail=type(error).__name__)
    if isinstance(error, exceptions.CheckDeviceOnlineError | exceptions.GeneralFailure):
        return DeviceGone(device, pages_delivered=pages, detail=type(error).__name__)
    if isinstance(error, exceptions.NoDataSourceError):
        return DeviceNotFound(device, "no TWAIN data source of that name")
    if isinstance(error, exceptions.DSTransferCancelled):
        return DeviceProblem(device, "the scan was cancelled at the scanner", pages_delivered=pages)
    return DeviceProblem(device, "the TWAIN driver reported an error", pages_delivered=pages,
                         detail=f"{type(error).__name__}: {error}")


class TwainSource:
    """A TWAIN data source's document feeder."""

    def __init__(self, device: str, settings: ScanSettings | None = None) -> None:
        assert device.startswith(PREFIX)
        self.name = device
        self.product = device[len(PREFIX):]
        self.settings = settings or ScanSettings()
        self._twain: ModuleType | None = None
        self._sm: Any = None
        self._src: Any = None
        self._stopped = False

    @staticmethod
    def devices() -> list[DeviceInfo]:
        return twain_devices()

    def __enter__(self) -> Self:
        twain = load_twain()
        if twain is None:
            raise DeviceNotFound(self.name, INSTALL_HINT)
        self._twain = twain
        self._sm = twain.SourceManager(None)
        try:
            self._src = self._sm.open_source(self.product)
            if self._src is None:
                raise DeviceNotFound(self.name, "no TWAIN data source of that name")
            self._negotiate()
        except twain.exceptions.TwainError as e:
            self._close()
            raise map_twain_error(self.name, e, twain.exceptions, pages=0) from e
        return self

    def _negotiate(self) -> None:
        t, src, s = self._twain, self._src, self.settings
        assert t is not None
        src.set_capability(t.ICAP_XFERMECH, t.TWTY_UINT16, t.TWSX_NATIVE)
        src.set_capability(t.ICAP_PIXELTYPE, t.TWTY_UINT16, t.TWPT_GRAY if s.mode == "gray" else t.TWPT_RGB)
        src.set_capability(t.ICAP_UNITS, t.TWTY_UINT16, t.TWUN_INCHES)
        src.set_capability(t.ICAP_XRESOLUTION, t.TWTY_FIX32, float(s.dpi))
        src.set_capability(t.ICAP_YRESOLUTION, t.TWTY_FIX32, float(s.dpi))
        src.set_capability(t.CAP_FEEDERENABLED, t.TWTY_BOOL, True)
        src.set_capability(t.CAP_AUTOFEED, t.TWTY_BOOL, True)
        src.set_capability(t.CAP_XFERCOUNT, t.TWTY_INT16, s.max_pages if s.max_pages is not None else -1)
        if s.duplex:
            try:
                src.set_capability(t.CAP_DUPLEXENABLED, t.TWTY_BOOL, True)
            except (t.exceptions.CapUnsupported, t.exceptions.BadCapability) as e:
                raise SourceError(f"{self.name}: this TWAIN source cannot scan duplex; scan without --duplex") from e
        _, loaded = src.get_capability_current(t.CAP_FEEDERLOADED)
        if not loaded:
            raise FeederEmpty(self.name)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()

    def _close(self) -> None:
        if self._src is not None:
            self._src.close()  # ends pending transfers and disables the source
            self._src = None
        if self._sm is not None:
            self._sm.close()
            self._sm = None

    def stop(self) -> None:
        self._stopped = True

    def pages(self) -> Iterator[AcquiredPage]:
        t, src = self._twain, self._src
        assert t is not None and src is not None, "use the source as a context manager"
        seq = 0
        try:
            src.request_acquire(show_ui=False, modal_ui=False)
            more = 1
            while more and not self._stopped:
                handle, more = src.xfer_image_natively()
                try:
                    bmp = t.dib_to_bm_file(handle)
                finally:
                    t.windows.GlobalFree(handle)
                seq += 1
                side: Side = "back" if self.settings.duplex and seq % 2 == 0 else "front"
                yield AcquiredPage(seq, stamp_png(bmp_to_png(bmp), provenance(self.name, seq, side)), ".png", side)
        except t.exceptions.TwainError as e:
            raise map_twain_error(self.name, e, t.exceptions, pages=seq) from e


def bmp_to_png(bmp: bytes) -> bytes:
    """A Windows bitmap (what TWAIN's native transfer gives) re-encoded losslessly as PNG."""
    from PIL import Image

    with Image.open(io.BytesIO(bmp), formats=["BMP"]) as img:
        out = io.BytesIO()
        img.save(out, format="PNG")
    return out.getvalue()
