"""Running the asset graph (Dagster layer, above ``defs/``): in the project's instance (``local``) and through its
queue onto Celery workers (``distributed``). What has no public Dagster API lives in ``launcher``,
``celery_launcher`` and ``run_queue``, checked by ``test_dagster_internals.py`` (docs/design/orchestration.md)."""
