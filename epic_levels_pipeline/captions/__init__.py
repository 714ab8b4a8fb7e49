"""The caption track: a structured caption of a clip (references, audio events, actions, links), scored
against a reference structure computed from the clip's annotations (after OmniCapBench, arXiv 2610.12458).

Pure core, no Dagster. The stages, each a module:

- :mod:`.reference` — the reference structure of a clip and its table (``caption_references``);
- :mod:`.schema` / :mod:`.prompt` — the JSON schema a model fills and the prompt per clip × condition;
- :mod:`.responders` — offline responders (``oracle``, ``jitter_<σ>s``, ``presence``, ``blind``, ``chance``);
- :mod:`.parse` — tolerant JSON extraction, canonicalisation and the structural predicates;
- :mod:`.match` — one-to-one temporal matching (greedy with fixed tie rules; Hungarian for sensitivity);
- :mod:`.labels` — label agreement on aligned pairs by rules, a judge only for what rules cannot decide;
- :mod:`.score` — alignments and metrics per response, and the cross-clip ``caption_scores``;
- :func:`.track.caption_threshold_sensitivity` — threshold sensitivity with Spearman ρ of the responder ranking;
- :mod:`.figure` — the timeline figure of the report;
- :mod:`.track` — the table-level functions the assets call.
"""

from .track import (ALIGNMENT_COLUMNS, REFERENCE_COLUMNS, RESPONSE_COLUMNS, RESPONSE_SCORE_COLUMNS, SCORE_COLUMNS,
                    SWEEP_COLUMNS, caption_alignments, caption_references, caption_responses, caption_scores,
                    caption_threshold_sensitivity)

__all__ = ["ALIGNMENT_COLUMNS", "REFERENCE_COLUMNS", "RESPONSE_COLUMNS", "RESPONSE_SCORE_COLUMNS", "SCORE_COLUMNS",
           "SWEEP_COLUMNS", "caption_alignments", "caption_references", "caption_responses", "caption_scores",
           "caption_threshold_sensitivity"]
