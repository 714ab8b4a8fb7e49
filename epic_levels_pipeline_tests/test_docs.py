"""The documentation site: its generated reference pages are current, and it builds with ``mkdocs build --strict``
(every page in the navigation, every link and anchor resolving).

The reference pages (command line, models file, warehouse tables, asset graph) are generated from the code by
``python tools/reference_docs.py``; a change to the CLI, the models file's model, a table schema or the asset
graph that is committed without running it again fails here, naming the page.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("reference_docs", ROOT / "tools" / "reference_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_docs_are_current():
    generator = _generator()
    stale = [str(path.relative_to(ROOT)) for path, text in generator.pages().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"stale generated pages {stale}: run `python tools/reference_docs.py` and commit them"


def test_reference_pages_name_every_command_table_column_and_asset():
    from epic_levels_pipeline.schemas.registry import SCHEMAS

    generator = _generator()
    cli = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    parser = __import__("epic_levels_pipeline.cli", fromlist=["build_parser"]).build_parser()
    commands = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)).choices
    assert all(f"## epic-levels {name}" in cli for name in commands)
    warehouse = (ROOT / "docs" / "reference" / "warehouse.md").read_text(encoding="utf-8")
    for table, schema in SCHEMAS.items():
        assert f"### {table}\n" in warehouse
        assert all(f"| `{column}` |" in warehouse for column in schema.names), table
    assert generator.cell("a '*' roll-up of <dataset>__<video> | `x_*`") == \
        "a '\\*' roll-up of &lt;dataset&gt;\\_\\_&lt;video&gt; \\| `x_*`"


def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "warehouse" / "index.html").exists()


def test_the_readme_is_short_and_every_link_resolves():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", readme, re.S | re.M)
    commands = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(commands) == 2 and "epic-levels run" in commands[0] and "pytest" in commands[1]  # what .ci/run runs
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
    assert "../" not in readme  # no path outside the repository
