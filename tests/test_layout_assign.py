"""Assigning found targets to contest options by the text read beside them (pure: targets
and OCR lines are given as values, in pixels at 200 dpi)."""

from __future__ import annotations

from scanpipe.imaging.page_text import TextLine
from scanpipe.imaging.targets import FoundTarget, TargetShape
from scanpipe.layout_assign import How, PageScan, assign, name_similarity, title_similarity
from scanpipe.types import Contest, Option

DPI = 200.0
OVAL = (40, 24)


def contest(cid: str, title: str, *names: str, write_ins: int = 0) -> Contest:
    options = [Option(f"{cid}-{k}", n) for k, n in enumerate(names)]
    options += [Option(f"{cid}-w{k}", "Write-in", write_in=True) for k in range(write_ins)]
    return Contest(cid, title, "candidate", 1, tuple(options))


class Page:
    """A page being drawn: targets and the text lines an OCR would return."""

    def __init__(self, number: int = 1) -> None:
        self.number = number
        self.targets: list[FoundTarget] = []
        self.texts: list[TextLine] = []
        self.rules: dict[int, tuple[int, int, int, int]] = {}
        self.ids: list[str] = []  # what each target is, for the expectations

    def text(self, x: int, y: int, text: str, h: int = 34) -> None:
        self.texts.append(TextLine(text, (x, y, 16 * len(text), h), 0.99))

    def header(self, x: int, y: int, *lines: str) -> int:
        for k, line in enumerate(lines):
            self.text(x, y + 40 * k, line)
        return y + 40 * len(lines)

    def option(self, x: int, y: int, truth: str, label: str | None, *, below: str | None = None,
               right: str | None = None, rule: bool = False, shape: TargetShape = TargetShape.OVAL) -> int:
        self.targets.append(FoundTarget(shape, (x, y, *OVAL)))
        self.ids.append(truth)
        if label is not None:
            self.text(x + OVAL[0] + 14, y - 5, label)
        if right is not None:
            self.text(x + 400, y - 5, right)
        if below is not None:
            self.text(x + OVAL[0] + 40, y + 30, below)
        if rule:
            self.rules[len(self.targets) - 1] = (x + OVAL[0] + 12, y + 20, 500, 3)
            self.text(x + OVAL[0] + 14, y + 26, "(Write-in vote, if any)", h=24)
        return y + (100 if below or rule else 50)

    def scan(self, *, ocr: bool = True) -> PageScan:
        return PageScan(self.number, DPI, tuple(self.targets), tuple(self.texts) if ocr else None, dict(self.rules))


def mapping(proposal, pages: list[Page]) -> dict[str, str]:  # noqa: ANN001
    by_page = {p.number: p for p in pages}
    return {by_page[a.page].ids[a.target]: f"{a.contest}:{a.option}" for a in proposal.assignments}


ELECTION = (
    contest("ussen", "United States Senator", "Glenn A. Burkett", "Maurice A. Ferre", "Jeff Greene"),
    contest("rep2", "Representative in Congress, District 2", "Allen Boyd", "Al Lawson"),
    contest("gov", "Governor and Lieutenant Governor", "Brian P. Moore", "Alex Sink"),
    contest("q2", "Question 2", "Yes", "No"),  # defined before Question 1: printed after it
    contest("q1", "Question 1", "Yes", "No"),
    contest("board", "Board of Supervisors", "Cy Young", write_ins=1),
    contest("ag", "Attorney General", "Dave Aronberg", "Dan Gelber"),  # on another page
)


def vendor_page() -> Page:
    p = Page()
    p.header(500, 60, "OFFICIAL PRIMARY BALLOT", "CALHOUN COUNTY, FLORIDA")
    p.targets.append(FoundTarget(TargetShape.BOX, (60, 40, 100, 50)))  # the precinct official's initials box
    p.ids.append("initials")
    p.text(50, 100, "Precinct Official's Initials", h=20)
    y = p.header(110, 300, "CONGRESSIONAL", "UNITEDSTATESSENATOR", "(Vote for One)")
    y = p.option(100, y, "ussen-0", "Glenn A. Burkett", right="DEM")
    y = p.option(100, y, "ussen-1", "Maurice.A. Ferre", right="DEM")
    y = p.option(100, y, "ussen-2", "Jeff Greene", right="DEM")
    y = p.header(160, y + 20, "REPRESENTATIVE IN", "CONGRESS", "DISTRICT 2", "(Vote for One)")
    y = p.option(100, y, "rep2-0", "Allen Boyd", right="DEM")
    y = p.option(100, y, "rep2-1", "Al Lawson", right="DEM")
    y = p.header(110, y + 20, "STATE", "GOVERNOR & LIEUTENANT", "GOVERNOR", "(Vote for One)")
    y = p.option(100, y, "gov-0", "Brian P. Maure", below="Not Yet Designated", right="DEM")
    p.option(100, y, "gov-1", "Alex Sink", below="Not Yet Designated", right="DEM")
    y = p.header(720, 300, "QUESTION 1", "Shall the county build a new", "bridge over the river?")
    y = p.option(700, y, "q1-0", "YES")
    y = p.option(700, y, "q1-1", "NO")
    y = p.header(720, y + 20, "QUESTION 2", "Shall the county sell the", "old bridge?")
    y = p.option(700, y, "q2-0", "YES")
    y = p.option(700, y, "q2-1", "NO")
    y = p.header(720, y + 20, "FOR BOARD OF SUPERVISORS", "(Vote for no more than one)")
    y = p.option(700, y, "board-0", "Cy Young")
    p.option(700, y, "board-w0", None, rule=True)
    return p


def test_contests_are_blocks_matched_by_title_and_options_by_name() -> None:
    page = vendor_page()
    proposal = assign([page.scan()], ELECTION)
    got = mapping(proposal, [page])
    expected = {t: f"{t.rsplit('-', 1)[0]}:{t}" for t in page.ids if t != "initials"}
    assert got == expected
    assert [a.how for a in proposal.assignments if a.option == "board-w0"] == [How.WRITE_IN]
    (unassigned,) = proposal.unassigned_targets  # the initials box: found, not an option
    assert unassigned[:2] == (1, 0)
    assert proposal.missing_options == (("ag", "ag-0"), ("ag", "ag-1"))
    assert all(a.confidence >= 0.75 for a in proposal.assignments)
    assert {m.contest: m.header for m in proposal.contests}["rep2"] == "REPRESENTATIVE IN CONGRESS DISTRICT 2"


def test_without_names_targets_go_in_reading_order_only_when_the_counts_agree() -> None:
    page = Page()
    y = 100
    for k in range(3):
        y = page.option(100, y, f"ussen-{k}", None)
    for k in range(2):
        page.option(700, 100 + 50 * k, f"rep2-{k}", None)
    proposal = assign([page.scan(ocr=False)], ELECTION[:2])
    assert not proposal.names_read
    assert mapping(proposal, [page]) == {f"{c}-{k}": f"{c}:{c}-{k}" for c, n in (("ussen", 3), ("rep2", 2)) for k in range(n)}
    assert {a.how for a in proposal.assignments} == {How.ORDER} and {a.confidence for a in proposal.assignments} == {0.5}
    fewer = assign([page.scan(ocr=False)], ELECTION[:3])
    assert fewer.assignments == () and len(fewer.unassigned_targets) == 5 and len(fewer.missing_options) == 7


def test_labels_left_of_the_targets_are_read_when_the_page_prints_them_there() -> None:
    page = Page()
    y = page.header(100, 100, "UNITED STATES SENATOR")
    for k, name in enumerate(("Glenn A. Burkett", "Maurice A. Ferre", "Jeff Greene")):
        page.targets.append(FoundTarget(TargetShape.ARROW, (600, y + 50 * k, 40, 24)))
        page.ids.append(f"ussen-{k}")
        page.text(560 - 16 * len(name), y + 50 * k - 5, name)
    proposal = assign([page.scan()], ELECTION[:1])
    assert mapping(proposal, [page]) == {f"ussen-{k}": f"ussen:ussen-{k}" for k in range(3)}
    assert {a.how for a in proposal.assignments} == {How.NAME}


def test_a_contest_continued_at_the_top_of_the_next_column_keeps_its_options() -> None:
    names = ("Ann Arbor", "Bea Bright", "Cal Cole", "Dee Dunn", "Eve Eng", "Fay Fox")
    long = contest("council", "County Council", *names)
    page = Page()
    y = page.header(110, 100, "COUNTY COUNCIL", "(Vote for up to three)")
    for k in range(4):
        y = page.option(100, y, f"council-{k}", names[k])
    page.text(720, 60, "COUNTY COUNCIL (continued)")
    page.option(700, 100, "council-4", names[4])
    page.option(700, 150, "council-5", names[5])
    proposal = assign([page.scan()], (long,))
    assert mapping(proposal, [page]) == {f"council-{k}": f"council:council-{k}" for k in range(6)}


def test_contests_of_one_style_may_lie_on_two_pages() -> None:
    front, back = Page(1), Page(2)
    y = front.header(110, 100, "UNITED STATES SENATOR")
    for k, name in enumerate(("Glenn A. Burkett", "Maurice A. Ferre", "Jeff Greene")):
        y = front.option(100, y, f"ussen-{k}", name)
    y = back.header(110, 100, "ATTORNEY GENERAL")
    back.option(100, y, "ag-0", "Dave Aronberg")
    back.option(100, y + 50, "ag-1", "Dan Gelber")
    proposal = assign([front.scan(), back.scan()], (ELECTION[0], ELECTION[6]))
    assert mapping(proposal, [front, back]) == {t: f"{t.rsplit('-', 1)[0]}:{t}" for t in front.ids + back.ids}
    assert {a.page for a in proposal.assignments if a.contest == "ag"} == {2}


def test_when_names_cannot_be_matched_the_printed_order_is_proposed_for_a_person_to_check() -> None:
    page = Page()
    y = page.header(110, 100, "ATTORNEY GENERAL")
    page.option(100, y, "ag-0", "%%%")  # a stamp across both names
    page.option(100, y + 50, "ag-1", None)
    proposal = assign([page.scan()], (ELECTION[6],))
    assert mapping(proposal, [page]) == {"ag-0": "ag:ag-0", "ag-1": "ag:ag-1"}
    assert {a.how for a in proposal.assignments} == {How.ORDER} and max(a.confidence for a in proposal.assignments) < 0.75


def test_similarity_forgives_what_ocr_does_to_ballot_text() -> None:
    assert name_similarity("United States Senator", "UNITEDSTATESSENATOR") == 1.0
    assert name_similarity("Glenn A. Burkett", "Glenn A. Burkett DEM") > 0.9
    assert name_similarity("William Escoffery III", "William Escoffery Ill") > 0.85
    assert name_similarity("Glenn A. Burkett", "Maurice A. Ferre") < 0.5
    score, window = title_similarity("Representative in Congress, District 2",
                                     ("CONGRESSIONAL", "REPRESENTATIVE IN", "CONGRESS", "DISTRICT 2", "(Vote for One)"))
    assert score > 0.95 and window == "REPRESENTATIVE IN CONGRESS DISTRICT 2"


def test_an_oval_hidden_under_a_stamp_is_inferred_from_its_name_and_the_rest_follow_the_printed_order() -> None:
    page = Page()
    y = page.header(110, 100, "CIRCUIT JUDGE", "14th CIRCUIT, GROUP 2")
    y = page.option(100, y, "cj-0", None)  # the oval was found; the stamp hid its name
    page.text(100 + OVAL[0] + 14, y - 5, "Mike Rei")  # the name was read; the stamp hid the oval
    page.text(100 + OVAL[0] + 40, y + 30, "Not Yet Designated")  # a line of the hidden name's row: not a name
    judge = contest("cj", "Circuit Judge, 14th Circuit, Group 2", "Pete Mallory", "Mike Reiter")
    proposal = assign([page.scan()], (judge,))
    by_option = {a.option: a for a in proposal.assignments}
    assert set(by_option) == {"cj-0", "cj-1"}
    assert by_option["cj-1"].how is How.INFERRED and by_option["cj-1"].target is None
    assert by_option["cj-1"].box_px == (100, y - 5 + 17 - OVAL[1] // 2, *OVAL)  # in the column, on the name's line
    assert by_option["cj-0"].how is How.ORDER and by_option["cj-0"].target == 0
    assert all(a.confidence < 0.75 for a in proposal.assignments)
    assert proposal.unassigned_targets == () and proposal.missing_options == ()


def test_a_stray_target_in_the_page_header_takes_no_contest_header_from_the_column_below_it() -> None:
    """Cedar's gower-springdale blank: an oval-like glyph in the header, right of the last
    column's left edge, made a column of its own that ended the last column before its
    centred headers ("FOR COUNTY AUDITOR"), so two write-in-only contests went unassigned."""
    auditor = Contest("aud", "County Auditor (Democratic Party)", "candidate", 1, (Option("aud-w", "Write-in", write_in=True),))
    sheriff = Contest("sher", "County Sheriff (Democratic Party)", "candidate", 1, (Option("sher-w", "Write-in", write_in=True),))
    page = Page()
    y = page.header(110, 300, "FOR UNITED STATES SENATOR", "(Vote for no more than one)")
    for k, name in enumerate(("Glenn A. Burkett", "Maurice A. Ferre", "Jeff Greene")):
        y = page.option(100, y, f"ussen-{k}", name)
    page.targets.append(FoundTarget(TargetShape.OVAL, (1395, 228, 26, 22)))  # the stray glyph, 0.5 in right of the column's edge
    page.ids.append("stray")
    y = page.header(1230, 1190, "FOR COUNTY AUDITOR", "(Vote for no more than one)")
    y = page.option(1184, y, "aud-w", None, rule=True)
    y = page.header(1230, y + 20, "FOR COUNTY SHERIFF", "(Vote for no more than one)")
    page.option(1184, y, "sher-w", None, rule=True)
    proposal = assign([page.scan()], (ELECTION[0], auditor, sheriff))
    got = mapping(proposal, [page])
    assert got == {**{f"ussen-{k}": f"ussen:ussen-{k}" for k in range(3)}, "aud-w": "aud:aud-w", "sher-w": "sher:sher-w"}
    assert [u[1] for u in proposal.unassigned_targets] == [page.ids.index("stray")]


def test_a_contests_write_in_lines_take_its_write_in_options_in_printed_order() -> None:
    """Cedar's tipton-1 blank: the OCR read the first of three write-in lines as "(Wrte-ln
    vote, if any)", so that line scored lower and paired by score the three came out as
    Write-in 3, 1, 2. They are taken in printed order."""
    board = contest("board", "Board of Supervisors", "Dennis Boedeker", write_ins=3)
    page = Page()
    y = page.header(110, 300, "FOR BOARD OF SUPERVISORS", "(Vote for no more than three)")
    y = page.option(100, y, "board-0", "Dennis Boedeker")
    for k in range(3):
        y = page.option(100, y, f"board-w{k}", None, rule=True)
    slip = next(i for i, t in enumerate(page.texts) if t.text.startswith("(Write-in"))
    page.texts[slip] = TextLine("(Wrte-ln vote, if any)", page.texts[slip].box_px, 0.99)
    proposal = assign([page.scan()], (board,))
    assert mapping(proposal, [page]) == {t: f"board:{t}" for t in page.ids}
