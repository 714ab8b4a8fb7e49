"""The field helper and the Arrow types every table's schema is declared with, and the columns several tables
declare alike: who answered (:data:`RESPONDER`), the provider called (:data:`PROVIDER`) and the judge
(:data:`JUDGE`)."""

from __future__ import annotations

import pyarrow as pa


def _f(name: str, kind: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, kind, nullable=nullable, metadata={"doc": doc})


STR, INT, FLOAT, BOOL = pa.large_string(), pa.int64(), pa.float64(), pa.bool_()
STRS, INTS, BOOLS = pa.list_(pa.large_string()), pa.list_(pa.int64()), pa.list_(pa.bool_())

RESPONDER = [
    _f("responder", STR, "offline responder or model family that answered"),
    _f("model", STR, "the model's name; offline for the offline reference responders"),
]

PROVIDER = [
    _f("provider", STR, "the model provider"),
    _f("endpoint", STR, "the provider's base URL (empty for offline responders)"),
]

JUDGE = [
    _f("judge_provider", STR, "provider of the judge model"),
    _f("judge_model", STR, "the judge model"),
    _f("judge_endpoint", STR, "the judge's base URL"),
]
