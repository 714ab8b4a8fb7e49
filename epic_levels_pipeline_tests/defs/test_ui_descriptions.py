"""What the UI shows about each asset reads as written: every declared table carries its column schema with a
description per column (the Columns tab), and every description survives the UI's Markdown rendering — the
``scores`` description's ``'*'`` roll-ups and ``imported:<category>`` levels included."""

from __future__ import annotations

import html
import re

import dagster as dg
import pytest
from markdown_it import MarkdownIt

from epic_levels_pipeline.definitions import defs
from epic_levels_pipeline.defs.metadata import markdown_text
from epic_levels_pipeline.schemas.registry import SCHEMAS


@pytest.fixture(scope="module")
def graph():
    return defs().resolve_asset_graph()


COMMONMARK = MarkdownIt("commonmark")  # the UI renders descriptions as CommonMark


def rendered_text(text: str) -> str:
    """What a reader sees of ``text`` rendered as Markdown: the HTML's text, code spans without their backticks
    (raw HTML such as ``<category>`` is dropped, as the UI drops it)."""
    out = COMMONMARK.render(text)
    out = re.sub(r"<(?!/?(p|em|strong|code|a)\b)[^>]*>", "", out)  # raw HTML the UI would not show
    return html.unescape(re.sub(r"<[^>]+>", "", out)).strip()


def as_written(text: str) -> str:
    return re.sub(r"`([^`]*)`", r"\1", text).strip()


def test_every_declared_table_shows_its_columns_with_descriptions(graph):
    for table, schema in SCHEMAS.items():
        columns = graph.get(dg.AssetKey(table)).metadata["dagster/column_schema"].columns
        assert [c.name for c in columns] == schema.names, table
        for column, field in zip(columns, schema):
            assert column.description, (table, column.name)
            assert rendered_text(column.description) == as_written(field.metadata[b"doc"].decode()), (table, column.name)


def test_every_asset_and_check_description_renders_as_written(graph):
    raw = {"scores": "with '*' roll-ups; level imported:<category>"}
    for key in graph.get_all_asset_keys():
        shown = graph.get(key).description or ""
        plain = shown.replace("\\", "")
        assert rendered_text(shown) == as_written(plain), key.to_user_string()
    scores = graph.get(dg.AssetKey("scores")).description
    assert "'*' roll-ups" in rendered_text(scores) and "imported:<category>" in rendered_text(scores)
    assert rendered_text(markdown_text(raw["scores"])) == raw["scores"]
    for key in graph.asset_check_keys:
        text = graph.get_check_spec(key).description or ""
        assert rendered_text(text) == as_written(text), key


def test_escaping_keeps_code_spans_and_plain_text():
    assert markdown_text("a `x_*` b") == "a `x_*` b"
    assert markdown_text("snake_case and 2 * 3 [x]") == "snake\\_case and 2 \\* 3 \\[x\\]"
    assert markdown_text(None) is None
