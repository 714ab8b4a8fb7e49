"""Stage 1, annotations: readers and validation of the annotation files, errata, clips, the entity catalogue.

Imports nothing of the later stages. ``readers`` reads and validates every table (and applies the known
errata), ``clips`` cuts the manifest's clips out of them, ``catalogue`` names entities across datasets,
``language`` holds the English helpers every stage phrases text with.
"""
