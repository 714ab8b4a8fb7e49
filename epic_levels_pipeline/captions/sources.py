"""The caption track's only contact with the rest of the project: the clip, the catalogue and the
annotation tables. Every import from outside ``captions`` goes through this module, so a move of those
modules is one edit here.

What the track uses:

- :class:`Clip` (dataset, video, window) — the clip whose caption is asked for;
- the clip rows frame of ``clip_annotations(ann, clip)`` (streams ``sound``, ``narration``,
  ``object_track``; spans in video time, clipped and unclipped), and whether they make the clip's audio
  annotated (``audio_annotated``: where ``silenced`` is asked);
- :class:`Catalogue` — noun / verb classes and their ``instances`` (synonyms), HD-EPIC object classes,
  entity frequencies (answer priors for the ``blind`` responder);
- the cue phrase of each EPIC-SOUNDS class (the catalogue's table of them).
"""

from __future__ import annotations

from ..annotations.catalogue import Catalogue, is_placeholder_name, object_class
from ..annotations.clips import Clip
from ..annotations.clip_rows import audio_annotated, clip_annotations
from ..annotations.clip_keys import read_manifest
from ..annotations.language import SOUND_CUES
from ..annotations.readers import Annotations

__all__ = ["Annotations", "Catalogue", "Clip", "SOUND_CUES", "audio_annotated", "clip_annotations",
           "is_placeholder_name", "object_class", "read_manifest"]
