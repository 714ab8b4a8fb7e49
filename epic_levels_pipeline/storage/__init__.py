"""Storage: the table store's layout (:mod:`.table_store`), its Parquet files (:mod:`.parquet`), the
consolidated copies of per-clip tables (:mod:`.consolidated`), frame conversion (:mod:`.frames`) and the DuckDB
warehouse's views (:mod:`.views`)."""
