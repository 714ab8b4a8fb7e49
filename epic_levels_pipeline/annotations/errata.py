"""Known upstream errata: rows of the public annotation files that are wrong at the source, and why.

``known_errata.csv`` lists them (four HD-EPIC activities that end before they start); a listed row is
dropped with the erratum's reason instead of failing validation. Any other inverted row stays an error.
"""

from __future__ import annotations

import io
from functools import lru_cache
from importlib import resources

import pandas as pd


@lru_cache(maxsize=1)
def known_errata() -> dict[tuple, str]:
    """(kind, file name, video, label, start, stop) → the reason the row is dropped."""
    text = resources.files("epic_levels_pipeline.annotations").joinpath("known_errata.csv").read_text("utf-8")
    table = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return {
        (r.kind, r.file_name, r.video_id, r.label, float(r.start), float(r.stop)): r.reason
        for r in table.itertuples()
    }
