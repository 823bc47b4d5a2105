"""Shipped code never imports the demo (``scanpipe.synth``).

What counts as shipped: every module of the ``scanpipe`` package except ``scanpipe/synth/``
(synthetic elections, cards and decks for the demo, tests and benchmarks) and
``scanpipe/demo.py`` (the ``scanpipe demo`` verb, which may import ``scanpipe.synth`` inside
its function, lazily). ``cli.py``'s ``demo`` command imports ``scanpipe.demo`` lazily, never
``scanpipe.synth``. Two checks: no import statement anywhere in a shipped module names
``scanpipe.synth`` (the demo's only inside a function), and importing every shipped module
leaves ``scanpipe.synth`` unloaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import scanpipe

PACKAGE = Path(scanpipe.__file__).parent
DEMO_TOOLING = PACKAGE / "synth"
DEMO_VERB = PACKAGE / "demo.py"


def shipped_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if DEMO_TOOLING not in p.parents and p != DEMO_VERB and "migrations" not in p.parts)


def synth_imports(tree: ast.AST) -> list[tuple[int, bool]]:
    """``(line, inside a function)`` of every import naming scanpipe.synth."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.module:
                names = [child.module] + [f"{child.module}.{a.name}" for a in child.names]
            if any(n == "scanpipe.synth" or n.startswith("scanpipe.synth.") for n in names):
                found.append((child.lineno, inside))
            visit(child, inside)

    visit(tree, False)
    return found


def test_no_shipped_module_imports_the_demo() -> None:
    offenders = {str(p.relative_to(PACKAGE)): synth_imports(ast.parse(p.read_text(encoding="utf-8")))
                 for p in shipped_modules()}
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) > 40  # the walk found the package


def test_the_demo_verb_imports_the_demo_only_inside_its_function() -> None:
    found = synth_imports(ast.parse(DEMO_VERB.read_text(encoding="utf-8")))
    assert found and all(inside for _, inside in found)


def test_the_checker_sees_an_import_of_the_demo() -> None:
    tree = ast.parse("import os\nfrom scanpipe.synth.render import render_card\ndef f():\n    import scanpipe.synth.deck\n")
    assert synth_imports(tree) == [(2, False), (4, True)]


def test_importing_every_shipped_module_loads_nothing_of_the_demo() -> None:
    names = [".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts) for p in shipped_modules()]
    names = [n.removesuffix(".__init__") for n in names]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            "loaded = sorted(m for m in sys.modules if m == 'scanpipe.synth' or m.startswith('scanpipe.synth.'))\n"
            "print(len(sys.modules), loaded)\nassert not loaded, loaded\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
