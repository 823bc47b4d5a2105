"""Definition loading: every problem listed with file, JSON path and reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scanpipe.election import load_election
from scanpipe.errors import DefinitionError

FIDUCIALS = [[0.35, 0.35, 0.25, 0.25], [7.9, 0.35, 0.25, 0.25], [0.35, 10.4, 0.25, 0.25], [7.9, 10.4, 0.25, 0.25]]

ELECTION = {
    "id": "demo-2026", "name": "Demo County General 2026", "date": "2026-11-03", "jurisdiction": "MD",
    "precincts": [{"id": "P01", "name": "Precinct 1", "county": "Demo"}],
    "contests": [
        {"id": "gov", "title": "Governor", "kind": "candidate", "vote_for": 1,
         "options": [{"id": "gov-a", "name": "Ada Alvarez"}, {"id": "gov-w", "name": "Write-in", "write_in": True}]},
        {"id": "q1", "title": "Question 1", "kind": "question", "vote_for": 1,
         "options": [{"id": "q1-for", "name": "For"}, {"id": "q1-against", "name": "Against"}]},
    ],
    "ballot_styles": [{"id": "S1", "precincts": ["P01"], "contests": ["gov", "q1"], "layout": "layouts/S1.json"}],
}
LAYOUT = {"style": "S1", "pages": [{
    "page": 1, "size": [8.5, 11.0], "fiducials": FIDUCIALS, "qr": [6.6, 0.8, 1.2, 1.2],
    "targets": [
        {"contest": "gov", "option": "gov-a", "box": [0.9, 2.10, 0.22, 0.14]},
        {"contest": "gov", "option": "gov-w", "box": [0.9, 2.70, 0.22, 0.14], "write_in_area": [1.3, 2.62, 3.0, 0.30]},
        {"contest": "q1", "option": "q1-for", "box": [0.9, 4.0, 0.22, 0.14]},
        {"contest": "q1", "option": "q1-against", "box": [0.9, 4.4, 0.22, 0.14]},
    ]}]}


def write(tmp_path: Path, election: dict, layout: dict | None) -> Path:
    (tmp_path / "layouts").mkdir(exist_ok=True)
    (tmp_path / "election.json").write_text(json.dumps(election))
    if layout is not None:
        (tmp_path / "layouts" / "S1.json").write_text(json.dumps(layout))
    return tmp_path / "election.json"


def problems(tmp_path: Path, election: dict, layout: dict | None) -> list[str]:
    with pytest.raises(DefinitionError) as e:
        load_election(write(tmp_path, election, layout))
    return [f"{Path(p.file).name}: {p.json_path}: {p.reason}" for p in e.value.problems]


def test_a_good_definition_loads_into_typed_values(tmp_path: Path) -> None:
    election = load_election(write(tmp_path, ELECTION, LAYOUT))
    assert election.id == "demo-2026"
    assert election.contest("gov").options[1].write_in is True
    page = election.style("S1").layout.pages[0]
    assert page.targets[1].write_in_area_in == (1.3, 2.62, 3.0, 0.30)
    assert len(page.fiducials_in) == 4 and page.qr_in == (6.6, 0.8, 1.2, 1.2)


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    election = copy.deepcopy(ELECTION)
    layout = copy.deepcopy(LAYOUT)
    election["jurisdiction"] = "ZZ"
    election["contests"][0]["vote_for"] = 3
    election["precincts"].append({"id": "gov", "name": "Dup"})
    election["date"] = "Nov 3"
    layout["pages"][0]["targets"][2]["option"] = "q1-maybe"
    layout["pages"][0]["targets"][3]["box"] = [8.4, 4.4, 0.22, 0.14]
    assert problems(tmp_path, election, layout) == [
        "election.json: $.date: 'Nov 3' is not a date of the form YYYY-MM-DD",
        "election.json: $.jurisdiction: 'ZZ' has no recount rule set; known: AR, MD",
        "election.json: $.contests[0].vote_for: vote_for 3 exceeds the 2 options",
        "election.json: $.contests[0].id: id 'gov' is already used at $.precincts[1].id; ids must be unique across the election",
        "S1.json: $.pages[0].targets[2].option: option 'q1-maybe' is not an option of contest 'q1'",
        "S1.json: $.pages[0].targets[3].box: box [8.4, 4.4, 0.22, 0.14] lies outside the 8.5 x 11.0 in page",
        "S1.json: $.pages: option 'q1-for' of contest 'q1' has no target on any page",
    ]


def test_missing_layout_and_bad_json_are_named(tmp_path: Path) -> None:
    assert problems(tmp_path, ELECTION, None)[0].endswith("$.ballot_styles[0].layout: layout file " + str(tmp_path / "layouts" / "S1.json") + " does not exist")
    (tmp_path / "election.json").write_text("{ not json")
    with pytest.raises(DefinitionError) as e:
        load_election(tmp_path / "election.json")
    assert "not valid JSON" in str(e.value) and "line 1 column 3" in str(e.value)


def test_a_page_needs_fiducials_or_a_reference(tmp_path: Path) -> None:
    layout = copy.deepcopy(LAYOUT)
    del layout["pages"][0]["fiducials"]
    assert problems(tmp_path, ELECTION, layout) == ["S1.json: $.pages[0]: a page needs fiducials, a reference scan, or both"]


def test_reference_must_exist_and_carry_its_dpi(tmp_path: Path) -> None:
    layout = copy.deepcopy(LAYOUT)
    layout["pages"][0]["reference"] = "S1-blank.png"
    found = problems(tmp_path, ELECTION, layout)
    assert found == [
        "S1.json: $.pages[0].reference: a reference needs its reference_dpi",
        f"S1.json: $.pages[0].reference: reference scan {tmp_path / 'layouts' / 'S1-blank.png'} does not exist",
    ]


def test_wrong_types_are_reported_not_raised(tmp_path: Path) -> None:
    election = copy.deepcopy(ELECTION)
    election["contests"][1]["vote_for"] = "one"
    election["contests"][1]["options"] = "For, Against"
    election["precincts"] = {"P01": "x"}
    found = problems(tmp_path, election, LAYOUT)
    assert "election.json: $.precincts: must be a list, not dict" in found
    assert "election.json: $.contests[1].vote_for: must be an integer, not str" in found
    assert "election.json: $.contests[1].options: must be a list, not str" in found
