"""Imports of external benchmarks through the format steps (HD-EPIC's VQA benchmark)."""
