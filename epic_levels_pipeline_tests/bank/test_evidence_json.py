""":func:`levels.evidence_json` (a template per row where its fields have the plain types) writes the text
``json.dumps`` writes of the rows' dicts, on any rows: odd strings, every kind of float, ints, None, bools."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from epic_levels_pipeline.bank.levels import Evidence, evidence_json

ANY = st.one_of(st.text(max_size=6), st.floats(), st.integers(-10**20, 10**20), st.none(), st.booleans())
NUMBER = st.one_of(st.floats(), st.floats(-1e6, 1e6), st.integers(-5, 5), st.none(), st.booleans())


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.text(max_size=6), ANY), st.one_of(st.text(max_size=6), ANY), NUMBER, NUMBER,
                          st.one_of(st.text(max_size=6), ANY), NUMBER, st.one_of(st.booleans(), ANY),
                          st.one_of(st.text(max_size=8), ANY)), max_size=4))
def test_evidence_json_is_json_dumps_of_the_dicts(rows):
    evidence = [Evidence(*row) for row in rows]
    assert evidence_json(evidence) == json.dumps([e.to_dict() for e in evidence])


def test_the_template_is_used_for_the_banks_rows():
    from epic_levels_pipeline.bank import levels

    assert levels._TEMPLATE
    e = Evidence("narration", "P01_101_7", 1.25, 3.0, "context", at_s=2.0, label="take \"cup\" – é")
    assert levels._row_json(e) == json.dumps(e.to_dict())
