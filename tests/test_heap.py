"""scanpipe.heap: a process over its soft limit gives its free heap back to the kernel."""

from __future__ import annotations

import platform
import sys

import pytest

from scanpipe.heap import resident_mb, trim_if_over

glibc = pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"), reason="glibc only")


@glibc
def test_freed_card_buffers_go_back_to_the_kernel_only_over_the_limit() -> None:
    held = [bytearray(64 * 1024) for _ in range(800)]  # 52 MB in heap-sized blocks, touched
    for b in held:
        b[::4096] = b"\x01" * len(b[::4096])
    keep = bytearray(16)  # something allocated after them: the heap's top is not free
    del held
    before = resident_mb()
    assert before is not None
    assert not trim_if_over(before + 1000.0)  # within its share: nothing done
    assert trim_if_over(0.0)
    after = resident_mb()
    assert after is not None and after < before - 30.0, (before, after)
    assert keep == bytearray(16)
