"""Write docs/cli.md: every scanpipe verb with its options, from the command line's own help.

    python scripts/cli_reference.py            # rewrites docs/cli.md
    python scripts/cli_reference.py --check    # exit 1 when docs/cli.md is not what this prints

tests/test_docs.py checks that every verb and option is named in the README or docs/.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from scanpipe.cli import cli

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        path = (*prefix, name)
        yield path, command
        if isinstance(command, click.Group):
            yield from commands(command, path)


def _option_line(param: click.Parameter, ctx: click.Context) -> str | None:
    if not isinstance(param, click.Option) or "--help" in param.opts:
        return None
    record = param.get_help_record(ctx)
    if record is None:
        return None
    names, text = record
    escaped = text.replace("|", "\\|")
    return f"| `{names}` | {escaped} |"


def reference() -> str:
    lines = ["# scanpipe command line", "",
             "Every verb and option, from `scanpipe --help` (written by `python scripts/cli_reference.py`).",
             "The contract's verbs are specified in [formats.md](formats.md) section 5; the README says how they fit together.", ""]
    root = click.Context(cli, info_name="scanpipe")
    lines += ["## scanpipe", "", (cli.help or "").strip(), "", "| option | |", "| --- | --- |"]
    lines += [x for p in cli.get_params(root) if (x := _option_line(p, root))]
    for path, command in commands(cli):
        ctx = click.Context(command, info_name=" ".join(("scanpipe", *path)))
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += ["", f"## scanpipe {' '.join(path)}", "", f"`scanpipe {' '.join(path)} {usage}`".replace(" `", "`"), "",
                  inspect.cleandoc(command.help or "").replace("\b\n", "")]
        rows = [x for p in command.get_params(ctx) if (x := _option_line(p, ctx))]
        if rows:
            lines += ["", "| option | |", "| --- | --- |", *rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = reference()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python scripts/cli_reference.py", file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
