"""The annotation tables read from the upstream files (activities, narrations, object tracks, recipe steps,
sounds, videos, vocabulary) and a clip's rows of them (``clip_annotations``)."""

from __future__ import annotations

import pyarrow as pa

from .fields import BOOL, FLOAT, INT, INTS, STR, STRS, _f


ACTIVITIES = pa.schema([
    _f("activity_id", STR, "HD-EPIC activity id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("recipe_id", STR, "HD-EPIC recipe id"),
    _f("label", STR, "the row's text label"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("stop_is_video_end", BOOL, "does the activity run to the video's end"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

CLIP_ANNOTATIONS = pa.schema([
    _f("clip_key", STR, "the clip (window): <dataset>__<video>__<start>-<end>"),
    _f("dataset", STR, "hd_epic or epic_sounds"),
    _f("video_id", STR, "the source video"),
    _f("stream", STR, "annotation stream (sound, narration, activity, object_track, recipe_step)"),
    _f("row_id", STR, "the annotation row's id"),
    _f("label", STR, "the row's text label"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("start_clipped_s", FLOAT, "start clipped to the window"),
    _f("stop_clipped_s", FLOAT, "stop clipped to the window"),
    _f("in_window", BOOL, "does the row lie in the clip's window"),
    _f("description", STR, "EPIC-SOUNDS free-text description"),
    _f("sound_class", STR, "EPIC-SOUNDS class"),
    _f("class_id", INT, "the class's numeric id"),
    _f("categorised", BOOL, "is the sound segment in a class"),
    _f("narration", STR, "the narration text"),
    _f("verb", STR, "the narration's verb"),
    _f("verb_class", INT, "EPIC-KITCHENS verb class"),
    _f("noun", STR, "the narration's main noun"),
    _f("noun_class", INT, "EPIC-KITCHENS noun class"),
    _f("all_nouns", STRS, "every noun of the narration"),
    _f("all_noun_classes", INTS, "the classes of those nouns"),
    _f("labelled", BOOL, "has the narration a verb and noun class"),
    _f("recipe_id", STR, "HD-EPIC recipe id"),
    _f("recipe_key", STR, "recipe key (participant/recipe)"),
    _f("step_id", STR, "recipe step id"),
    _f("step_number", INT, "the step's number in its recipe"),
    _f("raw_name", STR, "object name as annotated"),
    _f("object_name", STR, "object name shown (instance suffixes removed, typos fixed)"),
    _f("association_id", STR, "HD-EPIC object association id"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

NARRATIONS = pa.schema([
    _f("narration_id", STR, "narration id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("narration", STR, "the narration text"),
    _f("verb", STR, "the narration's verb"),
    _f("verb_class", INT, "EPIC-KITCHENS verb class"),
    _f("noun", STR, "the narration's main noun"),
    _f("noun_class", INT, "EPIC-KITCHENS noun class"),
    _f("all_nouns", STRS, "every noun of the narration"),
    _f("all_noun_classes", INTS, "the classes of those nouns"),
    _f("labelled", BOOL, "has the narration a verb and noun class"),
    _f("label_source", STR, "where the narration's labels come from"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

OBJECT_TRACKS = pa.schema([
    _f("track_id", STR, "object track id"),
    _f("association_id", STR, "HD-EPIC object association id"),
    _f("video_id", STR, "the source video"),
    _f("raw_name", STR, "object name as annotated"),
    _f("object_name", STR, "object name shown (instance suffixes removed, typos fixed)"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("n_masks", INT, "count of masks"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

RECIPE_STEPS = pa.schema([
    _f("recipe_key", STR, "recipe key (participant/recipe)"),
    _f("recipe_name", STR, "the recipe's name"),
    _f("step_id", STR, "recipe step id"),
    _f("step_text", STR, "the recipe step's text"),
    _f("step_number", INT, "the step's number in its recipe"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("span_index", INT, "which span of the step"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", STR, "its row (line or index) in that file"),
])

SOUNDS = pa.schema([
    _f("annotation_id", STR, "EPIC-SOUNDS annotation id"),
    _f("participant_id", STR, "the participant who recorded the video"),
    _f("video_id", STR, "the source video"),
    _f("start_s", FLOAT, "start, seconds from the video start"),
    _f("stop_s", FLOAT, "stop, seconds from the video start"),
    _f("description", STR, "EPIC-SOUNDS free-text description"),
    _f("sound_class", STR, "EPIC-SOUNDS class"),
    _f("class_id", INT, "the class's numeric id"),
    _f("categorised", BOOL, "is the sound segment in a class"),
    _f("source_file", STR, "the upstream file the row was read from"),
    _f("source_row", INT, "its row (line or index) in that file"),
])

VIDEOS = pa.schema([
    _f("video_id", STR, "the source video"),
    _f("duration_s", FLOAT, "duration in seconds"),
    _f("fps", FLOAT, "frames per second"),
    _f("source_file", STR, "the upstream file the row was read from"),
])

VOCABULARY = pa.schema([
    _f("vocabulary", STR, "which vocabulary (verbs, nouns, sounds)"),
    _f("kind", STR, "kind of row"),
    _f("class_id", INT, "the class's numeric id"),
    _f("key", STR, "vocabulary key"),
    _f("instances", STRS, "the vocabulary entry's instance names"),
    _f("category", STR, "vocabulary category"),
    _f("source_file", STR, "the upstream file the row was read from"),
])
