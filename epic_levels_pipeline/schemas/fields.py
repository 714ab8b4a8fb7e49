"""The field helper and the Arrow types every table's schema is declared with, and the columns several tables
declare alike: who answered (:data:`RESPONDER`), the provider called (:data:`PROVIDER`) and the judge
(:data:`JUDGE`)."""

from __future__ import annotations

import pyarrow as pa


def _f(name: str, kind: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, kind, nullable=nullable, metadata={"doc": doc})


STR, INT, FLOAT, BOOL = pa.large_string(), pa.int64(), pa.float64(), pa.bool_()
STRS, INTS, BOOLS = pa.list_(pa.large_string()), pa.list_(pa.int64()), pa.list_(pa.bool_())

EXTERNAL = "external"  # the responder (and provider) of imported replies (``epic-levels import-replies``)

RESPONDER = [
    _f("responder", STR, "the offline reference responder, the model's provider, or external (imported replies)"),
    _f("model", STR, "the model's identity: its configured NAME in the models file (PROVIDER/MODEL for an inline "
                     "name; the import's name for external replies; offline for the reference responders)"),
]

#: Beside ``model`` where rows are: what the server was asked for, and the digest of the settings it was asked with.
IDENTITY = [
    _f("served_model", STR, "the name the model's server answers to (what the model column held before it named the "
                            "configured model)"),
    _f("model_digest", STR, "digest of the model's route-changing settings (provider, served model, endpoint, routes, "
                            "sampling, extra body): a changed setting under the same NAME gives a new digest"),
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

#: Whether a model's server used the media it was sent (``responses.runner.MediaIntegrity``), on a model's rows.
MEDIA_USED = [
    _f("audio_ignored", BOOL, "the model's server reported the same prompt tokens for an item of this clip with and "
                              "without its audio: it ignored the audio (empty: not told)"),
    _f("video_ignored", BOOL, "the model's server reported the same prompt tokens for an item of this clip with and "
                              "without its video (clip vs no_clip): it ignored the video (empty: not told)"),
]
