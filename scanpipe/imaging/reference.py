"""What the reader learns from a layout's blank reference scan, once per election.

A :class:`PageModel` holds, for one (style, page), the blank scan itself and what every card
of that page is compared with:

* ``coarse``: the blank's ink (darkness ``1 - gray / paper``, area-reduced, lightly blurred)
  at :data:`COARSE_DPI`, for the dense alignment of :mod:`scanpipe.imaging.align`; its ink at
  :data:`FRAME_DPI` (:meth:`PageModel.frame_ink`, ``frame_shape``) is what the style groups of
  :mod:`scanpipe.imaging.style` learn from (computed when they are built, not kept: a county's
  blanks are sent to every worker);
* ``marks_in``: the vendor's timing marks (solid dashes standing in a row along an edge),
  found on the blank, never declared by the layout; ``mark_size_in`` their median size;
* ``patches_px``: well-textured points spread over the print (about 60), where the precise
  registration measures the card's local offset.

A :class:`ReferenceIndex` holds the models of an election and is built explicitly
(:func:`scanpipe.interpret.load_references`) and carried on the interpretation context: nothing is cached
in module state, so how a card reads never depends on the cards read before it. (Between runs,
what was learned is kept on disk keyed by everything it depends on: :mod:`scanpipe.learned_cache`.)

Pure: arrays in, frozen values out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:
    from scanpipe.imaging.decode import DecodedPage
    from scanpipe.imaging.style import StyleGroup

COARSE_DPI = 25.0  # first, global alignment
FRAME_DPI = 100.0  # style comparison (small print such as a precinct name survives)
REDUCE_WHOLE = 0.05  # a whole reduction factor this close (relative) to the wanted one is used instead
REDUCED_STEP = 3  # the blank kept area-reduced by this too (coarse local refinement)
PAPER_PCT = 92  # paper level of a whole page: this percentile of its pixels ...
PAPER_EDGE_SHARE = 0.1  # ... of its middle: this share of each side left out
WARP_TILE_PX = 128  # a card warped into a blank's frame: an affine map per tile of this side ...
WARP_TILE_TOLERANCE_PX = 0.02  # ... where it misses the homography by at most this at a tile's corner
BLUR_SIGMA = 0.8  # px at the reduced resolutions: evens out dither and JPEG noise
# Timing marks: solid, compact dashes or squares, at least MARK_ROW_MIN of them evenly
# spaced along one straight line.
MARK_SIDE_IN = (0.025, 0.5)
MARK_SOLIDITY = 0.8
MARK_ROW_MIN = 6
MARK_ROW_TOL_IN = 0.04  # how far a mark's centre may sit off its row's line
# Patch refinement points: the page is cut into about PATCH_COUNT squares (never under
# PATCH_MIN_CELL_IN a side); the most textured patch of each square, where the blank has print.
PATCH_COUNT = 60
PATCH_MIN_CELL_IN = 0.4
PATCH_IN = 0.3
PATCH_MIN_ENERGY = 12.0


@dataclass(frozen=True, eq=False)
class PageModel:
    """One layout page's blank scan and what is learned from it (read-only arrays)."""

    style: str
    page: int
    dpi: float  # of ``image``
    image: np.ndarray  # the blank, gray uint8, full resolution
    coarse: np.ndarray  # float32 ink at COARSE_DPI
    frame_shape: tuple[int, int]  # of the blank's ink at FRAME_DPI (:meth:`frame_ink`)
    marks_in: np.ndarray  # (n, 2) timing-mark centres, inches
    mark_size_in: tuple[float, float] | None  # median (w, h) of the timing marks
    patches_px: tuple[tuple[int, int], ...]  # refinement points, pixels of ``image``
    image_reduced: np.ndarray  # ``image`` area-reduced by REDUCED_STEP (coarse local refinement)
    size_in: tuple[float, float]  # the reference's extent in inches (w, h)
    source: tuple[bytes, str] | None = field(default=None, repr=False)  # the reference file's bytes and name, if known
    memo: dict[tuple[object, ...], object] = field(default_factory=dict, repr=False)  # see :meth:`patch_templates`

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled (to every worker of an ingest) as the reference file's bytes and what was
        found on it, not as its decoded pixels: a county's blanks decode in a fraction of the
        time their pixels take to pickle and send. The page model rebuilt is the same to the
        last bit (the same bytes, the same decoder); the memo is not sent."""
        if self.source is None:
            return (_page_model, (self.style, self.page, self.dpi, self.image, self.coarse, self.frame_shape, self.marks_in,
                                  self.mark_size_in, self.patches_px, self.image_reduced, self.size_in))
        return (_page_model_from_source, (self.style, self.page, self.dpi, self.source,
                                          LearnedPoints(self.marks_in, self.mark_size_in, self.patches_px)))

    def patch_templates(self, step: int, half: int) -> tuple[np.ndarray | None, ...]:
        """Per refinement point, the blank's patch of side ``2 * half`` (float32, pixels of the
        blank reduced by ``step``: 1 or :data:`REDUCED_STEP`), None where it is flat or cut by
        the edge. The same for every card: made the first time one needs them."""
        key = ("templates", step, half)
        found = self.memo.get(key)
        if found is None:
            image = self.image if step == 1 else self.image_reduced
            found = tuple(_template(image, x, y, half, step) for x, y in self.patches_px)
            self.memo[key] = found
        return found  # type: ignore[return-value]  # the memo holds what this method put there

    @property
    def key(self) -> tuple[str, int]:
        return self.style, self.page

    def frame_ink(self) -> np.ndarray:
        """The blank's float32 ink at FRAME_DPI (``frame_shape``), computed anew."""
        return ink_at(self.image, self.dpi, FRAME_DPI)

    @property
    def has_timing_marks(self) -> bool:
        return self.mark_size_in is not None and len(self.marks_in) >= MARK_ROW_MIN


@dataclass(frozen=True, eq=False)
class ReferenceIndex:
    """What the reader learned from an election's blanks: the page models by (style, page)
    and the style groups (:mod:`scanpipe.imaging.style`) that tell them apart."""

    models: dict[tuple[str, int], PageModel] = field(default_factory=dict)
    groups: tuple[StyleGroup, ...] = ()

    def get(self, style: str, page: int) -> PageModel | None:
        return self.models.get((style, page))

    def __len__(self) -> int:
        return len(self.models)

    def __iter__(self) -> Iterator[PageModel]:
        return iter(self.models.values())


@dataclass(frozen=True)
class LearnedPoints:
    """The part of a :class:`PageModel` found by searching the blank (its timing marks and
    refinement points), as a cache of what was learned before hands it back."""

    marks_in: np.ndarray
    mark_size_in: tuple[float, float] | None
    patches_px: tuple[tuple[int, int], ...]


def learn_page(style: str, page: int, image: np.ndarray, dpi: float, known: LearnedPoints | None = None,
               source: tuple[bytes, str] | None = None) -> PageModel:
    """Everything the reader uses of one blank scan; ``known``: its timing marks and
    refinement points as found before on this very image (the rest is recomputed);
    ``source``: the file's bytes (and name) ``image`` was decoded from, if any."""
    assert image.ndim == 2 and image.dtype == np.uint8, "a reference is a gray uint8 image"
    from scanpipe.imaging.page import without_bed  # (page.py imports this module for its paper level)

    image = without_bed(image).copy()  # a blank scanned on a dark bed is learned from its page alone, as cards are read
    coarse = ink_at(image, dpi, COARSE_DPI)
    frame_shape = reduce_to(image, dpi, FRAME_DPI).shape[:2]
    if known is None:
        marks, size = find_timing_marks(image, dpi)
        patches = textured_points(image, dpi)
    else:
        marks, size, patches = known.marks_in.copy(), known.mark_size_in, known.patches_px
    h, w = image.shape
    r = REDUCED_STEP
    reduced = cv2.resize(image[: h // r * r, : w // r * r], (w // r, h // r), interpolation=cv2.INTER_AREA)
    for a in (image, coarse, marks, reduced):
        a.setflags(write=False)
    return PageModel(style, page, float(dpi), image, coarse, (int(frame_shape[0]), int(frame_shape[1])), marks, size, patches,
                     reduced, (w / dpi, h / dpi), source)


def _page_model(*fields: object) -> PageModel:
    return PageModel(*fields)  # type: ignore[arg-type]  # the fields of __reduce__, in order


def _page_model_from_source(style: str, page: int, dpi: float, source: tuple[bytes, str], known: LearnedPoints) -> PageModel:
    from scanpipe.imaging.decode import decode_card_bytes

    return learn_page(style, page, reference_page(decode_card_bytes(source[0], source[1]), page).image, dpi, known, source)


def reference_page(pages: Sequence[DecodedPage], page: int) -> DecodedPage:
    """A layout page's blank among its reference file's pages: the file's page of that number
    where the file holds several (one PDF or TIFF of a two-sided style's blank, named by both
    layout pages), else its first."""
    return pages[page - 1] if len(pages) > 1 and len(pages) >= page else pages[0]


DPI_SIZE_OFF = 0.2  # a reference_dpi making the blank this much (relative) larger or smaller than its page both ways ...
DPI_AXES_AGREE = 0.05  # ... where the page's two sides give one resolution within this: that resolution


def reference_dpi(blank: DecodedPage, layout_dpi: float, size_in: tuple[float, float] | None = None) -> float:
    """The blank's resolution: a PDF's page is drawn at one the decoder knows; a scan's tag may
    lie, so there the layout's ``reference_dpi`` holds, unless it makes the blank another
    size than the layout's page both ways (:data:`DPI_SIZE_OFF`: 300 written for a 200 dpi
    scan) while the page's width and height give one resolution: then that one (a scanner's
    margin or a cut edge moves it by a few percent; a wrong resolution misplaced every box)."""
    if blank.format == "pdf" and blank.dpi:
        return float(blank.dpi)
    if size_in is not None and min(size_in) > 0:
        h, w = blank.image.shape[:2]
        across, down = w / size_in[0], h / size_in[1]
        if (abs(across / down - 1.0) <= DPI_AXES_AGREE
                and min(abs(layout_dpi / across - 1.0), abs(layout_dpi / down - 1.0)) > DPI_SIZE_OFF):
            return round((across + down) / 2, 1)
    return float(layout_dpi)


def dpi_contradicted(blank: DecodedPage, layout_dpi: float, size_in: tuple[float, float], dpi: float) -> str | None:
    """What a person reads where :func:`reference_dpi` did not take the layout's figure for a
    scan (``dpi``, what it took instead), else None."""
    if blank.format == "pdf" or dpi == float(layout_dpi):
        return None
    h, w = blank.image.shape[:2]
    return (f"\"reference_dpi\": {layout_dpi:g} makes this {w} x {h} px blank {w / layout_dpi:.2f} x {h / layout_dpi:.2f} in, "
            f"the page is {size_in[0]:g} x {size_in[1]:g} in: read at {dpi:g} dpi, as its size says")


def _template(image: np.ndarray, x: int, y: int, half: int, step: int) -> np.ndarray | None:
    """The blank's patch around blank pixel (x, y) (``image``: the blank reduced by ``step``);
    None where it is flat or cut by the edge."""
    cx, cy = int(round((x + 0.5) / step - 0.5)), int(round((y + 0.5) / step - 0.5))
    patch = image[cy - half: cy + half, cx - half: cx + half]
    if patch.shape != (2 * half, 2 * half):
        return None
    patch = patch.astype(np.float32)
    if float(patch.std()) < 4.0:
        return None
    patch.setflags(write=False)
    return patch


# --------------------------------------------------------------------------------------
# Ink images


def reduce_to(gray: np.ndarray, dpi: float, target_dpi: float) -> np.ndarray:
    """``gray`` area-reduced from ``dpi`` to about ``target_dpi`` (never enlarged): by a whole
    factor where one is within REDUCE_WHOLE of the wanted one (OpenCV's fast path: whole
    pixels averaged), else exactly. Callers map coordinates by the result's own shape."""
    factor = dpi / target_dpi
    if factor <= 1.0:
        return gray
    h, w = gray.shape[:2]
    k = int(round(factor))
    if k >= 2 and abs(factor / k - 1.0) <= REDUCE_WHOLE and h >= 2 * k and w >= 2 * k:
        return cv2.resize(gray[: h // k * k, : w // k * k], (w // k, h // k), interpolation=cv2.INTER_AREA)
    size = (max(1, int(round(w / factor))), max(1, int(round(h / factor))))
    return cv2.resize(gray, size, interpolation=cv2.INTER_AREA)


def warp_in_tiles(image: np.ndarray, frame_to_image: np.ndarray, size: tuple[int, int], border_value: float = 0.0,
                  tolerance_px: float = WARP_TILE_TOLERANCE_PX, tile_px: int = WARP_TILE_PX) -> np.ndarray:
    """``cv2.warpPerspective(image, frame_to_image, size, INTER_LINEAR | WARP_INVERSE_MAP)``,
    computed as an affine warp per ``tile_px`` square of the output: a scan's homography is
    so nearly affine that within a tile the two differ by far less than the 1/32 px to which
    OpenCV rounds its sample positions anyway, at under half the cost. Each tile's affine map
    is the homography's at three of its corners; where it misses the fourth corner by more
    than ``tolerance_px`` (a strong perspective: a photograph), the whole image is warped
    exactly. Outside the image: ``border_value``."""
    w, h = size
    tiles = [(r0, c0, min(h, r0 + tile_px), min(w, c0 + tile_px)) for r0 in range(0, h, tile_px) for c0 in range(0, w, tile_px)]
    corners = np.array([[[c0, r0], [c1 - 1, r0], [c0, r1 - 1], [c1 - 1, r1 - 1]] for r0, c0, r1, c1 in tiles], np.float64)
    mapped = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), frame_to_image).reshape(-1, 4, 2)
    # the affine through three corners, at the fourth: top-right + bottom-left - top-left
    if float(np.abs(mapped[:, 1] + mapped[:, 2] - mapped[:, 0] - mapped[:, 3]).max()) > tolerance_px:
        return cv2.warpPerspective(image, frame_to_image, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderValue=border_value)
    out = np.empty((h, w), image.dtype)
    for (r0, c0, r1, c1), local, there in zip(tiles, corners, mapped, strict=True):
        affine = cv2.getAffineTransform((local[:3] - (c0, r0)).astype(np.float32), there[:3].astype(np.float32))
        out[r0:r1, c0:c1] = cv2.warpAffine(image, affine, (c1 - c0, r1 - r0), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                           borderValue=border_value)
    return out


def paper_level(gray: np.ndarray) -> float:
    """The page's paper level: the PAPER_PCT percentile of every other pixel both ways of its
    middle (PAPER_EDGE_SHARE of each side left out: a scanner's backing round a sheet, white
    round coloured stock or black round white, is not its paper), as ``np.percentile``
    computes it (for 8-bit images from their histogram, five times faster)."""
    h, w = gray.shape[:2]
    mh, mw = int(h * PAPER_EDGE_SHARE), int(w * PAPER_EDGE_SHARE)
    sample = gray[mh: h - mh: 2, mw: w - mw: 2]
    if sample.dtype != np.uint8 or sample.size == 0:
        return max(float(np.percentile(sample, PAPER_PCT)), 1.0)
    counts = np.cumsum(cv2.calcHist([np.ascontiguousarray(sample)], [0], None, [256], [0, 256]).ravel())
    position = PAPER_PCT / 100.0 * (sample.size - 1)
    k = int(np.floor(position))
    below, above = np.searchsorted(counts, [k + 1, min(k + 2, sample.size)])  # the k-th and (k+1)-th smallest values
    t = position - k
    level = float(above) - (float(above) - float(below)) * (1.0 - t) if t >= 0.5 else float(below) + (float(above) - float(below)) * t
    return max(level, 1.0)  # numpy's interpolation, to the last bit


PRINTED_DARK = 0.6  # a pixel darker than this share of the paper level carries print ...
PRINTED_MARGIN = 0.03  # ... counted inside this share of the page's sides (a scanner's shadow at the edges) ...
PRINTED_MIN_PAPER = 100  # ... on a page whose paper is at least this light (a black scan is no blank page)


def printed_share(gray: np.ndarray) -> float | None:
    """The share of the page that carries print (a ballot side: a few percent and more; a
    blank sheet: next to nothing), estimated from a pixel every 1/50 in or so (the short side
    taken as 8.5 in: well under a millisecond); None where the paper itself is dark (a scan
    of nothing: the lid open, the lamp out), which is no blank page."""
    k = max(1, int(min(gray.shape[:2]) / 8.5 / 50))
    small = gray[::k, ::k]
    paper = paper_level(small)
    if paper < PRINTED_MIN_PAPER:
        return None
    mh, mw = int(small.shape[0] * PRINTED_MARGIN), int(small.shape[1] * PRINTED_MARGIN)
    inner = small[mh: small.shape[0] - mh, mw: small.shape[1] - mw]
    return float(np.count_nonzero(inner < PRINTED_DARK * paper)) / max(1, inner.size)


def ink_of(gray: np.ndarray) -> np.ndarray:
    """Darkness in [0, 1] relative to the page's paper level, lightly blurred (float32)."""
    paper = paper_level(gray)
    ink = np.clip(1.0 - gray.astype(np.float32) / paper, 0.0, 1.0)
    return cv2.GaussianBlur(ink, (0, 0), BLUR_SIGMA)


def ink_at(gray: np.ndarray, dpi: float, target_dpi: float) -> np.ndarray:
    return ink_of(reduce_to(gray, dpi, target_dpi))


# --------------------------------------------------------------------------------------
# Timing marks


def find_timing_marks(gray: np.ndarray, dpi: float) -> tuple[np.ndarray, tuple[float, float] | None]:
    """Centres (inches) of the solid marks that stand evenly in rows or columns, and their
    median size; ``(empty, None)`` when the page has none.

    Candidates are solid, compact connected components (a dash, a bar or a square); a row is
    a straight horizontal or vertical line through at least :data:`MARK_ROW_MIN` candidates
    of one size. Text, ovals and rules are neither solid nor in such rows.
    """
    blobs = solid_blobs(gray, dpi)
    if len(blobs) < MARK_ROW_MIN:
        return np.zeros((0, 2)), None
    centres, sizes = blobs[:, :2], blobs[:, 2:4]
    keep = np.zeros(len(blobs), bool)
    tol = MARK_ROW_TOL_IN
    for axis in (0, 1):  # 0: columns (same x), 1: rows (same y)
        coord = centres[:, axis]
        order = np.argsort(coord)
        start = 0
        for end in range(1, len(order) + 1):
            if end == len(order) or coord[order[end]] - coord[order[end - 1]] > tol:
                group = order[start:end]
                if len(group) >= MARK_ROW_MIN:
                    keep[_one_size(group, sizes)] = True
                start = end
    if keep.sum() < MARK_ROW_MIN:
        return np.zeros((0, 2)), None
    w, h = np.median(sizes[keep], axis=0)
    return centres[keep].astype(np.float64), (float(w), float(h))


def _one_size(group: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The members of a row whose size is within 30% of the row's median size."""
    median = np.median(sizes[group], axis=0)
    close = np.all(np.abs(sizes[group] - median) <= 0.3 * median + 0.01, axis=1)
    return group[close] if close.sum() >= MARK_ROW_MIN else group[:0]


def solid_blobs(gray: np.ndarray, dpi: float, largest_in: float = MARK_SIDE_IN[1]) -> np.ndarray:
    """``(n, 4)`` centre x, y and width, height (inches) of solid dark components with sides
    from MARK_SIDE_IN's least to ``largest_in``."""
    work_dpi = min(dpi, 100.0)
    small = reduce_to(gray, dpi, work_dpi)
    scale = gray.shape[1] / small.shape[1]
    px_per_in = dpi / scale
    level = np.float32(0.5 * paper_level(small))
    if small.dtype == np.uint8:  # v < level for whole v: v <= ceil(level) - 1, as OpenCV thresholds 8-bit images
        _done, dark = cv2.threshold(small, float(np.ceil(level)) - 1.0, 1, cv2.THRESH_BINARY_INV)
    else:
        dark = (small.astype(np.float32) < level).astype(np.uint8)
    components = dark_components(dark)
    if components is None:
        return np.zeros((0, 4))
    w, h, area, centroids = components
    lo, hi = MARK_SIDE_IN[0] * px_per_in, largest_in * px_per_in
    ok = (w >= lo) & (h >= lo) & (w <= hi) & (h <= hi) & (area >= MARK_SOLIDITY * w * h) & (np.minimum(w, h) >= 2)
    c = centroids[ok]
    out = np.column_stack([(c[:, 0] + 0.5) * scale - 0.5, (c[:, 1] + 0.5) * scale - 0.5, w[ok] * scale, h[ok] * scale])
    return out / np.array([dpi, dpi, dpi, dpi]) if len(out) else np.zeros((0, 4))


def dark_components(dark: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Width, height, area and centroid ``(n, 2)`` of the 8-connected components of a 0/1
    image, in OpenCV's label order: what ``cv2.connectedComponentsWithStats`` gives, to the
    last bit, in less time (its statistics visit every pixel, the paper too; these only
    the dark ones). None when there are none."""
    found = component_boxes(dark)
    if found is None:
        return None
    _labels, boxes, area, centroids = found
    return boxes[:, 3], boxes[:, 4], area, centroids


def component_boxes(dark: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The 8-connected components of a sparse 0/1 image: their labels image, per component
    ``(label, left, top, width, height)`` (``(n, 5)``, OpenCV's label order), area and
    centroid ``(n, 2)``, from the dark pixels alone; None when there are none."""
    count, labels = cv2.connectedComponents(dark, connectivity=8)
    if count <= 1:
        return None
    where = np.flatnonzero(dark.view(bool) if dark.dtype == np.uint8 else dark)  # numpy finds a bool array's non-zeros ~8x faster
    label = labels.ravel()[where]
    order = np.argsort(label, kind="stable")  # by label, then raster order within one
    label, where = label[order], where[order]
    ys, xs = np.divmod(where, dark.shape[1])
    starts = np.flatnonzero(np.r_[True, label[1:] != label[:-1]])
    area = np.diff(np.r_[starts, len(label)])
    x0, x1 = np.minimum.reduceat(xs, starts), np.maximum.reduceat(xs, starts)
    y0, y1 = ys[starts], np.maximum.reduceat(ys, starts)  # raster order: a component's first pixel is on its top row
    centroids = np.column_stack([np.add.reduceat(xs, starts) / area, np.add.reduceat(ys, starts) / area])
    return labels, np.column_stack([label[starts], x0, y0, x1 - x0 + 1, y1 - y0 + 1]), area, centroids


# --------------------------------------------------------------------------------------
# Refinement points


def textured_points(image: np.ndarray, dpi: float) -> tuple[tuple[int, int], ...]:
    """Per cell of the blank (about PATCH_COUNT of them), the centre of its most textured patch."""
    half = int(PATCH_IN * dpi) // 2
    energy = cv2.boxFilter(cv2.absdiff(cv2.dilate(image, np.ones((3, 3), np.uint8)), image), cv2.CV_32F,
                           (2 * half, 2 * half))
    area_in = image.shape[0] * image.shape[1] / dpi**2
    cell = int(max(PATCH_MIN_CELL_IN, np.sqrt(area_in / PATCH_COUNT)) * dpi)
    margin = half + int(0.05 * dpi) + 1
    points = []
    for y0 in range(margin, image.shape[0] - margin, cell):
        for x0 in range(margin, image.shape[1] - margin, cell):
            block = energy[y0: min(y0 + cell, image.shape[0] - margin), x0: min(x0 + cell, image.shape[1] - margin)]
            if block.size == 0:
                continue
            r, c = np.unravel_index(int(np.argmax(block)), block.shape)
            if block[r, c] >= PATCH_MIN_ENERGY:
                points.append((x0 + int(c), y0 + int(r)))
    return tuple(points)


def cut_off(mask: np.ndarray) -> np.ndarray:
    """The pixels of ``mask`` in 4-connected pieces that do not reach the edge of the array."""
    count, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=4)
    edge = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    inner = np.ones(count, bool)
    inner[edge] = False
    inner[0] = False
    return inner[labels] & mask


def largest_hole(own: np.ndarray) -> np.ndarray | None:
    """The largest piece of the paper round ``own`` that ``own`` cuts off from the edge of its
    box, or None where it cuts off none (a loop not closed)."""
    cut = cut_off(~own)
    if not cut.any():
        return None
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cut.astype(np.uint8), connectivity=4)
    return labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
