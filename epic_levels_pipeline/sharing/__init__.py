"""Sharing the benchmark: the export as a Hugging Face dataset folder, replies made by other harnesses scored
as a model, and Inspect AI both ways (a task over the export; runs written as Inspect eval logs).

Pure core (no Dagster): ``export`` reads the materialized ``items`` through the table store, ``replies``
validates and stores replies files, ``inspect_logs`` converts between Inspect's logs and this project's tables.
"""
