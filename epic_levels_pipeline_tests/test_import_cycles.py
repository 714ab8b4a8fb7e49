"""No import cycles inside the package: every group of modules that import each other, directly or through
others, is a failure (grimp's graph of the package, the one import-linter checks the layers on)."""

from __future__ import annotations

import grimp

PACKAGE = "epic_levels_pipeline"


def import_cycles(package: str = PACKAGE) -> list[list[str]]:
    """The strongly connected groups of two or more modules in ``package``'s import graph, sorted."""
    graph = grimp.build_graph(package)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        # Tarjan's algorithm without recursion: each frame is a module and the iterator over its imports.
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imports = work[-1]
            nxt = next(imports, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                elif nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return sorted(groups)


def test_finds_a_cycle():
    """The search sees a cycle when there is one (two modules of a throwaway package import each other)."""
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "cycle_probe_pkg"
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "a.py").write_text("from . import b\n")
        (pkg / "b.py").write_text("from .a import x\n")
        (pkg / "c.py").write_text("from . import a\n")
        sys.path.insert(0, tmp)
        try:
            assert import_cycles("cycle_probe_pkg") == [["cycle_probe_pkg.a", "cycle_probe_pkg.b"]]
        finally:
            sys.path.remove(tmp)


def test_no_import_cycles():
    cycles = import_cycles()
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)
