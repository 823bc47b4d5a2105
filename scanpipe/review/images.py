"""A card's image by card id: the path comes from the store, never from the client.

PNG and JPEG files are sent as they are; TIFF and PDF pages are decoded the way ingest
decodes them (so the stored target boxes, in that image's pixels, line up) and sent as PNG.
A card read upside down (fed the other way round) or sideways is sent turned upright, as PNG:
its stored target boxes are in the upright card's pixels, and an auditor reads it the right
way up.

What an auditor sees is what was read: the file's SHA-256 is compared with the one stored
when the card was ingested (a rendered new duplicate: when it was rendered) before anything
is sent; a file changed since is refused (:class:`ImageChanged`) and the refusal logged.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from scanpipe.store.models import card_table, new_duplicate_table
from scanpipe.store.repository import Store

CARD_ID = re.compile(r"[0-9a-f]{64}(-p[0-9]{1,5})?|nd-[A-Z0-9]{1,16}-R[0-9]{1,3}")
_DIRECT = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


class ImageMissing(Exception):
    """No stored card has this id, or its file is gone or unreadable."""


class ImageChanged(Exception):
    """The file at the card's path is not the file that was read (its SHA-256 differs)."""


@dataclass(frozen=True, slots=True)
class CardImage:
    data: bytes
    mimetype: str


def card_image(store: Store, card_id: str, *, actor: str | None = None) -> CardImage:
    """The image of a stored card (its first page when the id names no page), once its bytes
    are checked against the stored SHA-256 (a mismatch: :class:`ImageChanged`, logged)."""
    if not CARD_ID.fullmatch(card_id):
        raise ImageMissing(f"{card_id[:90]!r} is not a card id")
    if card_id.startswith("nd-"):  # a new duplicate's rendered card is kept in the database
        pages = store.new_duplicate_pages(card_id[3:])
        if pages:
            data, _dpi = pages[0]
            check_image_bytes(store, card_id, f"the database's rendered page of {card_id}", data, _rendered_sha256(store, card_id[3:]),
                              actor=actor)
            return CardImage(data, "image/png")
    path, page, expected = _lookup(store, card_id)
    file = Path(path)
    if not file.is_file():
        raise ImageMissing(f"card {card_id}: its image file is no longer where it was ingested")
    data = file.read_bytes()
    check_image_bytes(store, card_id, path, data, expected, actor=actor)
    suffix = file.suffix.lower()
    turns = _turns_read(store, card_id)
    if suffix in _DIRECT and page == 1 and turns == (False, False):
        return CardImage(data, _DIRECT[suffix])
    return CardImage(_decoded_png(file, data, page, turns=turns), "image/png")


def _turns_read(store: Store, card_id: str) -> tuple[bool, bool]:
    """How the stored card was turned to be read (its boxes are the upright card's): a quarter
    turn clockwise (fed sideways), then a half turn (upside down)."""
    from scanpipe.types import ReadCard

    stored = store.get_card(card_id)
    result = stored.card.interpretation if stored is not None else None
    if not isinstance(result, ReadCard):
        return False, False
    return result.registration.quarter_turned, result.registration.rotated_180


def check_image_bytes(store: Store, card_id: str, path: str, data: bytes, expected: str | None, *, actor: str | None,
                      where: str = "review") -> None:
    """Raise :class:`ImageChanged` (and log ``image_mismatch``) unless ``data`` has the stored SHA-256."""
    found = hashlib.sha256(data).hexdigest()
    if expected is not None and found == expected:
        return
    store.log_event("image_mismatch", {"card": card_id, "path": path, "expected_sha256": expected, "found_sha256": found,
                                       "refused": where}, actor=actor)
    what = "no SHA-256 was stored for it" if expected is None else f"its SHA-256 is {found[:16]}.., the card read was {expected[:16]}.."
    raise ImageChanged(f"card {card_id}: the file {path} is not the image that was read ({what}); it is not shown. "
                       "Tell the administrator: the file was replaced or damaged after ingest.")


def _rendered_sha256(store: Store, serial: str) -> str | None:
    """The SHA-256 recorded when the new duplicate's first page was rendered."""
    with store._read() as conn:
        return conn.execute(select(new_duplicate_table.c.image_sha256).where(new_duplicate_table.c.serial == serial)).scalar()


def _lookup(store: Store, card_id: str) -> tuple[str, int, str | None]:
    with store._read() as conn:
        if card_id.startswith("nd-"):
            t = new_duplicate_table
            nd = conn.execute(select(t.c.image_path, t.c.image_sha256).where(t.c.serial == card_id[3:])).first()
            if nd is None or nd.image_path is None:
                raise ImageMissing(f"there is no new duplicate image for {card_id}")
            return str(nd.image_path), 1, nd.image_sha256
        row = conn.execute(select(card_table.c.path, card_table.c.page_index, card_table.c.sha256).where(card_table.c.card_id == card_id)).first()
    if row is None:
        raise ImageMissing(f"there is no card {card_id}")
    return str(row.path), int(row.page_index), str(row.sha256)


def _decoded_png(file: Path, data: bytes, page: int, *, turns: tuple[bool, bool] = (False, False)) -> bytes:
    import cv2

    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes

    try:
        pages = decode_card_bytes(data, str(file))
    except ImageDecodeError as e:
        raise ImageMissing(f"{file.name}: {e}") from e
    if page > len(pages):
        raise ImageMissing(f"{file.name} has no page {page}")
    image = pages[page - 1].image
    if turns[0]:
        image = cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    if turns[1]:
        image = cv2.rotate(image, cv2.ROTATE_180)
    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise ImageMissing(f"{file.name}: page {page} could not be encoded")
    return bytes(encoded)
