"""A clip's question bank (``bank/tables.py``): the questions and the distractor pools their wrong options were
drawn from."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, BOOLS, INT, INTS, STR, STRS, _f


QUESTIONS = pa.schema([
    _f("question_id", STR, "<clip key>/<subtype>/<strategy>/<digest of the draft>", False),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("clip_key", STR, "the clip (window) the question is about"),
    _f("video_id", STR, "the source video"),
    _f("subtype", STR, "question subtype (bank/subtypes)"),
    _f("level", STR, "L1-L4, derived from the subtype's scope"),
    _f("scope", STR, "the subtype's declared evidence scope (presence, moment, sequence, beyond)"),
    _f("derived_scope", STR, "the scope recomputed from the provenance"),
    _f("question", STR, "the question text"),
    _f("options", STRS, "the four option texts, in the order shown"),
    _f("option_values", STRS, "the options' candidate values (kind:payload)"),
    _f("answer", STR, "the key's text"),
    _f("answer_value", STR, "the key's candidate value"),
    _f("answer_index", INT, "the key's position among the options (0-3)"),
    _f("distractor_strategy", STR, "how the wrong options were drawn (bank/pools.py)"),
    _f("provenance", STR, "JSON list of the evidence rows (stream, row_id, span, role, at_s, in_window, label)"),
    _f("can_stand_alone", BOOL, "can the question be asked without its options"),
    _f("stand_alone_reason", STR, "why it cannot stand alone (empty when it can)"),
    _f("open_question", STR, "the question's open-answer wording"),
    _f("statement", STR, "the key as a yes/no statement"),
    _f("answer_type", STR, "entity, sound, action, purpose, activity, recipe_step or number"),
    _f("params", STR, "the draft's parameters as sorted JSON"),
    _f("option_present", BOOLS, "does each option occur in the clip (null: presence cannot tell)"),
    _f("presence_pick", INT, "the option the presence oracle singles out, -1 for none"),
    _f("presence_rule", STR, "why the presence oracle picked it (or did not)"),
    _f("presence_correct", BOOL, "is the presence oracle's pick the key"),
    _f("caveats", STRS, "notes a reader should know about the question"),
    _f("option_frequency", INTS, "each option's corpus frequency (what a text-only prior sees)"),
])

DISTRACTOR_POOLS = pa.schema([
    _f("clip_key", STR, "the clip"),
    _f("question_id", STR, "the question the pool was drawn for (kept or dropped)"),
    _f("subtype", STR, "question subtype"),
    _f("distractor_strategy", STR, "the strategy that offered the candidates"),
    _f("value", STR, "candidate value (kind:payload)"),
    _f("text", STR, "option text"),
    _f("role", STR, "distractor or answer"),
    _f("present", BOOL, "does the candidate occur in the clip (null: cannot tell)"),
    _f("rows", STRS, "stream:row_id of the rows justifying the candidate"),
    _f("note", STR, "why it is a wrong option (or 'the key')"),
    _f("chosen", BOOL, "is it one of the question's options"),
    _f("offered", INT, "how many candidates the strategy offered for the draft"),
])
