"""What the caption track reads of the annotations stage (the clip, its rows, whether its audio is annotated, the
catalogue and the cue phrases), gathered in one module. (The track also uses the responses stage directly: its
conditions, offline model name and, in :mod:`.models`, the call runner and cache.)"""

from __future__ import annotations

from ..annotations.catalogue import Catalogue, is_placeholder_name, object_class
from ..annotations.clips import Clip
from ..annotations.clip_rows import audio_annotated, clip_annotations
from ..annotations.clip_keys import read_manifest
from ..annotations.language import SOUND_CUES
from ..annotations.readers import Annotations

__all__ = ["Annotations", "Catalogue", "Clip", "SOUND_CUES", "audio_annotated", "clip_annotations",
           "is_placeholder_name", "object_class", "read_manifest"]
