"""The documentation names every verb and option people can type, and the contract is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

import click

from scanpipe.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def _docs() -> str:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    out = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        out.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            out += _commands(command, (*prefix, name))
    return out


def missing_from_docs(docs: str) -> list[str]:
    """Verbs (``scanpipe report pull-list``) and options (``--write-in``) that no doc names."""
    missing = []
    for opt in (o for p in cli.params if isinstance(p, click.Option) for o in p.opts if o.startswith("--")):
        if opt not in docs and opt != "--help":
            missing.append(f"scanpipe {opt}")
    for path, command in _commands(cli):
        verb = " ".join(path)
        if not re.search(rf"(?<![\w-]){re.escape(verb)}(?![\w-])", docs):
            missing.append(f"scanpipe {verb}")
        for param in command.params:
            if isinstance(param, click.Option):
                for opt in param.opts + param.secondary_opts:
                    if opt.startswith("--") and opt != "--help" and not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", docs):
                        missing.append(f"scanpipe {verb} {opt}")
    return missing


def test_every_verb_and_option_is_documented() -> None:
    assert missing_from_docs(_docs()) == [], "document these in README.md or docs/ (python scripts/cli_reference.py writes docs/cli.md)"


def test_the_check_names_what_is_missing() -> None:
    docs = _docs().replace("--write-in", "--wr1te-in").replace("pull-list", "pul1-list")
    missing = missing_from_docs(docs)
    assert "scanpipe adjudicate --write-in" in missing and "scanpipe report pull-list" in missing


def test_the_contract_and_the_schemas_it_names_are_in_docs() -> None:
    contract = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in re.findall(r"nist/([\w.-]+\.schema\.json)", contract):
        assert (ROOT / "docs" / "nist" / name).is_file(), name
    assert "docs/formats.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert (ROOT / "docs" / "nist" / "nist-cvr-v1.schema.json").read_bytes() == (ROOT / "scanpipe" / "exports" / "nist_cvr_schema.json").read_bytes()


def test_the_readme_shows_pictures_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\((docs/screens/[\w.-]+\.png)\)", readme)
    assert len(pictures) >= 4
    for p in pictures:
        assert (ROOT / p).is_file() and (ROOT / p).stat().st_size < 200_000, p
