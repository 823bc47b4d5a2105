"""Definition loading: every problem listed with file, JSON path and reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# --------------------------------------------------------------------------------------
# Hostile definitions (issue 9 item 8): every one a named problem, never a crash


def test_json_nested_too_deeply_to_read_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "election.json").write_text('{"id": "x", "extra": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(DefinitionError) as e:
        load_election(tmp_path / "election.json")
    assert [(p.json_path, p.reason) for p in e.value.problems] == [
        ("$", "nested too deeply to read (more than 32 levels is not an election definition)")]


def test_json_nested_deeper_than_a_definition_is_a_problem_at_its_path(tmp_path: Path) -> None:
    election = copy.deepcopy(ELECTION)
    election["precincts"][0]["notes"] = json.loads("[" * 40 + "]" * 40)
    assert problems(tmp_path, election, LAYOUT) == [
        "election.json: $.precincts[0].notes" + "[0]" * 30 + ": nested more than 32 levels deep: not an election definition"]


@pytest.mark.parametrize(("where", "value", "reason"), [
    ("style precinct", ["P01"], "$.ballot_styles[0].precincts[0]: must be a precinct id (a string), not list"),
    ("style contest", {"id": "gov"}, "$.ballot_styles[0].contests[0]: must be a contest id (a string), not dict"),
    ("precinct id", ["P01"], "$.precincts[0].id: must be a string, not list"),
    ("target contest", ["gov"], "$.pages[0].targets[0].contest: must be a string, not list"),
])
def test_a_list_or_object_where_an_id_belongs_is_a_problem(tmp_path: Path, where: str, value: object, reason: str) -> None:
    election, layout = copy.deepcopy(ELECTION), copy.deepcopy(LAYOUT)
    if where == "style precinct":
        election["ballot_styles"][0]["precincts"][0] = value
    elif where == "style contest":
        election["ballot_styles"][0]["contests"][0] = value
    elif where == "precinct id":
        election["precincts"][0]["id"] = value
    else:
        layout["pages"][0]["targets"][0]["contest"] = value
    assert reason in [p.split(": ", 1)[1] for p in problems(tmp_path, election, layout)]


@pytest.mark.parametrize(("literal", "shown"), [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("1e999", "inf")])
def test_a_number_json_does_not_have_is_a_problem(tmp_path: Path, literal: str, shown: str) -> None:
    write(tmp_path, ELECTION, None)
    text = json.dumps(LAYOUT).replace("[0.9, 2.1, 0.22, 0.14]", f"[{literal}, 2.1, 0.22, 0.14]", 1)
    (tmp_path / "layouts" / "S1.json").write_text(text)
    with pytest.raises(DefinitionError) as e:
        load_election(tmp_path / "election.json")
    assert [(Path(p.file).name, p.json_path, p.reason) for p in e.value.problems] == [
        ("S1.json", "$.pages[0].targets[0].box[0]", f"{shown} is not a number (JSON has no NaN or infinity)")]


def test_values_the_store_cannot_keep_are_problems(tmp_path: Path) -> None:
    election, layout = copy.deepcopy(ELECTION), copy.deepcopy(LAYOUT)
    election["precincts"][0]["name"] = "Precinct\x001"
    election["contests"][0]["vote_for"] = 2**40
    layout["pages"][0]["size"] = [8.5, 1100.0]
    layout["pages"][0]["targets"][0]["box"] = [0.9, 2.1, 1e-9, 0.14]
    assert problems(tmp_path, election, layout) == [  # what no field may hold is found before fields are read
        "election.json: $.precincts[0].name: the text contains a NUL character",
        "election.json: $.contests[0].vote_for: 1099511627776 is too large a number (at most 2147483647)",
    ]
    assert problems(tmp_path, ELECTION, layout) == [
        "S1.json: $.pages[0].size: must be [width, height] in inches, each from 1 to 40",
        "S1.json: $.pages[0].targets[0].box: box width and height must be at least 0.02 in, got 1e-09 x 0.14"]


def test_a_reference_scan_that_is_a_bomb_is_a_problem(tmp_path: Path) -> None:
    from scanpipe.synth.badfiles import tiff_claiming

    layout = copy.deepcopy(LAYOUT)
    layout["pages"][0]["reference"] = "blank.tif"
    layout["pages"][0]["reference_dpi"] = 200
    (tmp_path / "layouts").mkdir()
    (tmp_path / "layouts" / "blank.tif").write_bytes(tiff_claiming(1, 60000, 60000))
    reference = (tmp_path / "layouts" / "blank.tif").resolve()
    assert problems(tmp_path, ELECTION, layout) == [
        f"S1.json: $.pages[0].reference: reference scan {reference}: 60000x60000 = 3600 megapixels, over the 100-megapixel limit"]


def _json_paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [path]
    if isinstance(value, dict):
        out += [p for k, v in value.items() for p in _json_paths(v, (*path, k))]
    elif isinstance(value, list):
        out += [p for i, v in enumerate(value) for p in _json_paths(v, (*path, i))]
    return out


def _replaced(doc: object, path: tuple[object, ...], value: object) -> object:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    return doc


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_value_anywhere_is_a_definition_or_a_list_of_problems(data: st.DataObject) -> None:
    """Replace one node of the election or its layout by any JSON value (or by that node
    wrapped in a list): loading gives an Election or a DefinitionError, nothing else."""
    import tempfile

    from scanpipe.types import Election

    in_layout = data.draw(st.booleans(), label="in layout")
    doc = LAYOUT if in_layout else ELECTION
    path = data.draw(st.sampled_from(_json_paths(doc)[1:]), label="path")
    node: object = doc
    for key in path:
        node = node[key]  # type: ignore[index]
    value = data.draw(st.one_of(JSON_VALUES, st.just([node])), label="value")
    mutated = _replaced(doc, path, value)
    with tempfile.TemporaryDirectory() as folder:
        election_file = write(Path(folder), ELECTION if in_layout else mutated, LAYOUT if not in_layout else None)  # type: ignore[arg-type]
        if in_layout:
            (Path(folder) / "layouts" / "S1.json").write_text(json.dumps(mutated))
        try:
            assert isinstance(load_election(election_file), Election)
        except DefinitionError as e:
            assert e.problems and all(p.file and p.json_path.startswith("$") and p.reason for p in e.problems)


def test_init_refuses_a_hostile_definition_with_exit_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scanpipe.cli import main

    election = copy.deepcopy(ELECTION)
    election["ballot_styles"][0]["precincts"] = [["P01"]]
    path = write(tmp_path, election, LAYOUT)
    text = json.dumps(LAYOUT).replace("[0.9, 2.1, 0.22, 0.14]", "[NaN, 2.1, 0.22, 0.14]", 1)
    (tmp_path / "layouts" / "S1.json").write_text(text)
    url = f"sqlite:///{tmp_path / 'x.db'}"
    with pytest.raises(SystemExit) as done:
        main(["--db", url, "init", "--election", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "Traceback" not in err
    assert f"{tmp_path / 'layouts' / 'S1.json'}: $.pages[0].targets[0].box[0]: nan is not a number" in err
    path.write_text(json.dumps(election))  # the layout mended, the list where an id belongs remains
    (tmp_path / "layouts" / "S1.json").write_text(json.dumps(LAYOUT))
    with pytest.raises(SystemExit) as done:
        main(["--db", url, "init", "--election", str(path)])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "Traceback" not in err
    assert f"{path}: $.ballot_styles[0].precincts[0]: must be a precinct id (a string), not list" in err
    with pytest.raises(SystemExit) as done:
        main(["--db", url, "tally"])
    assert done.value.code == 2  # nothing was loaded
