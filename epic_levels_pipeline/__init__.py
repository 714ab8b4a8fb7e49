"""epic-levels: an evidence-levelled video-and-audio QA benchmark, as stage packages and a Dagster layer.

See README.md, "Where things live", for the packages and the rule of what may import what.
"""
