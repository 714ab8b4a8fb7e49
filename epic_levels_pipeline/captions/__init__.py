"""The caption track: a structured caption of a clip (references, audio events, actions, links), scored against a
reference structure computed from the clip's annotations (after OmniCapBench, arXiv 2610.12458). Pure core, no
Dagster; :mod:`.track` holds the table-level functions the assets call (docs/design/captions.md)."""

from .track import (ALIGNMENT_COLUMNS, REFERENCE_COLUMNS, RESPONSE_COLUMNS, RESPONSE_SCORE_COLUMNS, SCORE_COLUMNS,
                    SWEEP_COLUMNS, caption_alignments, caption_references, caption_responses, caption_scores,
                    caption_threshold_sensitivity)

__all__ = ["ALIGNMENT_COLUMNS", "REFERENCE_COLUMNS", "RESPONSE_COLUMNS", "RESPONSE_SCORE_COLUMNS", "SCORE_COLUMNS",
           "SWEEP_COLUMNS", "caption_alignments", "caption_references", "caption_responses", "caption_scores",
           "caption_threshold_sensitivity"]
