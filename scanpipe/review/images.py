"""A card's image by card id: the path comes from the store, never from the client.

PNG and JPEG files are sent as they are; TIFF and PDF pages are decoded the way ingest
decodes them (so the stored target boxes, in that image's pixels, line up) and sent as PNG.
"""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class CardImage:
    data: bytes
    mimetype: str


def card_image(store: Store, card_id: str) -> CardImage:
    """The image of a stored card (its first page when the id names no page)."""
    if not CARD_ID.fullmatch(card_id):
        raise ImageMissing(f"{card_id[:90]!r} is not a card id")
    if card_id.startswith("nd-"):  # a new duplicate's rendered card is kept in the database
        pages = store.new_duplicate_pages(card_id[3:])
        if pages:
            return CardImage(pages[0][0], "image/png")
    path, page = _lookup(store, card_id)
    file = Path(path)
    if not file.is_file():
        raise ImageMissing(f"card {card_id}: its image file is no longer where it was ingested")
    suffix = file.suffix.lower()
    if suffix in _DIRECT and page == 1:
        return CardImage(file.read_bytes(), _DIRECT[suffix])
    return CardImage(_decoded_png(file, page), "image/png")


def _lookup(store: Store, card_id: str) -> tuple[str, int]:
    with store._read() as conn:
        if card_id.startswith("nd-"):
            t = new_duplicate_table
            path = conn.execute(select(t.c.image_path).where(t.c.serial == card_id[3:])).scalar()
            if path is None:
                raise ImageMissing(f"there is no new duplicate image for {card_id}")
            return str(path), 1
        row = conn.execute(select(card_table.c.path, card_table.c.page_index).where(card_table.c.card_id == card_id)).first()
    if row is None:
        raise ImageMissing(f"there is no card {card_id}")
    return str(row.path), int(row.page_index)


def _decoded_png(file: Path, page: int) -> bytes:
    import cv2

    from scanpipe.imaging.decode import ImageDecodeError, decode_card_bytes

    try:
        pages = decode_card_bytes(file.read_bytes(), str(file))
    except ImageDecodeError as e:
        raise ImageMissing(f"{file.name}: {e}") from e
    if page > len(pages):
        raise ImageMissing(f"{file.name} has no page {page}")
    ok, encoded = cv2.imencode(".png", pages[page - 1].image)
    if not ok:
        raise ImageMissing(f"{file.name}: page {page} could not be encoded")
    return bytes(encoded)
