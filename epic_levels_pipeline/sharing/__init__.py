"""Sharing the benchmark (pure core): the export as a Hugging Face dataset folder, replies made by other harnesses
scored as a model, and Inspect AI both ways (a task over the export; runs written as Inspect eval logs)."""
