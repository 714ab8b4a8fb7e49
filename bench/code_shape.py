"""The package's shape in figures: lines, docstring and comment share, largest modules, import cycles.

Docstring lines are the lines of every module, class and function docstring; comment lines are lines holding a
comment. Cycles are the groups of the package's modules that import each other (grimp's graph, as
import-linter builds it; ``epic_levels_pipeline_tests/test_import_cycles.py`` fails on any).

    python bench/code_shape.py [--largest 5] [--root DIR]

``--root`` measures another checkout of the repository (e.g. an older commit in a scratch clone).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import io
import sys
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "epic_levels_pipeline"


def docstring_lines(tree: ast.AST) -> int:
    """Lines taken by the docstrings of a module's module, classes and functions."""
    total = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                total += body[0].end_lineno - body[0].lineno + 1
    return total


def comment_lines(text: str) -> int:
    """Lines holding a comment (alone or after code)."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return len({t.start[0] for t in tokens if t.type == tokenize.COMMENT})


def shape(root: Path) -> dict:
    files = sorted(root.rglob("*.py"))
    per_file = {}
    lines = docs = comments = 0
    for path in files:
        text = path.read_text()
        n = len(text.splitlines())
        per_file[path.relative_to(root.parent).as_posix()] = n
        lines += n
        docs += docstring_lines(ast.parse(text))
        comments += comment_lines(text)
    return {"files": len(files), "lines": lines, "docstring_lines": docs, "comment_lines": comments,
            "per_file": per_file}


def package_cycles(root: Path) -> list[list[str]]:
    """The import cycles of the package under ``root`` (grimp's graph; the test's search, loaded by its path so
    that an older checkout without the test is measured too)."""
    spec = importlib.util.spec_from_file_location("_cycle_search", REPO / "epic_levels_pipeline_tests" / "test_import_cycles.py")
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    sys.path.insert(0, str(root))
    return search.import_cycles()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", type=int, default=5)
    parser.add_argument("--root", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    s = shape(root / PACKAGE)
    print(f"{PACKAGE}/: {s['files']} files, {s['lines']} lines")
    print(f"docstring lines: {s['docstring_lines']} ({s['docstring_lines'] / s['lines']:.1%})")
    print(f"comment lines:   {s['comment_lines']} ({s['comment_lines'] / s['lines']:.1%})")
    print("largest modules:")
    for name, n in sorted(s["per_file"].items(), key=lambda kv: -kv[1])[:args.largest]:
        print(f"  {n:5d}  {name}")
    cycles = package_cycles(root)
    print(f"import cycles: {len(cycles)}")
    for cycle in cycles:
        print("  " + " <-> ".join(cycle))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
