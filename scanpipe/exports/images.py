"""Before an export names image files: every file must still be the one that was read.

A CVR names each card's image by path and SHA-256. If the file at that path was replaced
after ingest, whoever follows the path would see another ballot than the one counted, so the
export checks every file's SHA-256 against the stored one first and refuses (logging each
mismatch) when any differs. A file that is gone is listed, not refused: the CVR still says
which bytes were read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from scanpipe.errors import ScanpipeError
from scanpipe.store.repository import Store

_BLOCK = 1 << 20


class ImagesChanged(ScanpipeError):
    """Image files changed since they were read: nothing was exported."""


@dataclass
class ImageCheck:
    files: int = 0
    missing: list[str] = field(default_factory=list)
    changed: list[tuple[str, str, str]] = field(default_factory=list)  # (path, stored, found)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def check_image_files(store: Store, *, what: str) -> ImageCheck:
    """Hash every stored card's file (once per file) and every rendered new duplicate; log
    and raise :class:`ImagesChanged` naming the files whose bytes changed."""
    check = ImageCheck()
    expected = dict(store.card_files())
    expected.update({nd.image_path: nd.image_sha256 for nd in store.new_duplicates(current_only=False)
                     if nd.image_path and nd.image_sha256})
    for path, sha in sorted(expected.items()):
        file = Path(path)
        check.files += 1
        try:
            found = file_sha256(file)
        except FileNotFoundError:
            check.missing.append(path)
            continue
        except OSError as e:
            raise ScanpipeError(f"{path}: cannot be read to check it is the image that was read ({e.strerror or e})") from e
        if found != sha:
            check.changed.append((path, sha, found))
    for path, sha, found in check.changed:
        store.log_event("image_mismatch", {"path": path, "expected_sha256": sha, "found_sha256": found, "refused": what})
    if check.changed:
        names = "\n".join(f"  {p}: SHA-256 {f[:16]}.., the image read was {s[:16]}.." for p, s, f in check.changed[:20])
        more = f"\n  ... and {len(check.changed) - 20} more" if len(check.changed) > 20 else ""
        raise ImagesChanged(f"{what}: {len(check.changed)} image file(s) are not the images that were read (replaced or "
                            f"damaged after ingest); nothing was written:\n{names}{more}")
    return check
