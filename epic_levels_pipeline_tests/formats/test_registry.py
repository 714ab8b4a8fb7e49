"""The format registry: one entry per base format, and the items' formats all resolve through it."""

import pytest

from epic_levels_pipeline.formats.parsing import FORMATS as REPLY_FORMATS
from epic_levels_pipeline.formats.registry import (FORMATS, IMPORTED_FORMATS, ITEM_FORMATS, chance, format_of, reply_format,
                                                   rule_verdict)


def test_every_item_format_has_a_chance_and_every_reply_form_an_entry():
    assert set(ITEM_FORMATS) - {"open_with_reason"} | set(IMPORTED_FORMATS) == set(FORMATS)
    assert chance("official_mcq", n_options=5) == pytest.approx(0.2)
    forms = {f.reply_format for f in FORMATS.values()} | {f.reason_reply_format for f in FORMATS.values()} - {None}
    assert forms == set(REPLY_FORMATS)
    assert [chance(f, n_options=4, n_statements=4, base_format="option_judgement") for f in ITEM_FORMATS] == \
        [1 / 2, 1 / 4, 1 / 15, 0.0, 1 / 4, 1 / 4]


def test_unknown_format_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown format 'essay'.*yes_no"):
        format_of("essay")


def test_items_in_the_bank_are_scored_by_their_base_formats_rule(offline_bank):
    items = offline_bank["items"]
    for item in items.drop_duplicates("format").itertuples():
        assert reply_format(item) in REPLY_FORMATS
        assert rule_verdict(item, "not in any stated form")[2] == "unparsed"
