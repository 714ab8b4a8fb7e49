"""The warehouse writer: the one asset that opens the DuckDB file for writing."""
