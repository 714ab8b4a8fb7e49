"""Running the asset graph (Dagster layer, above ``defs/``): in the project's instance from Python or the command
line (``local``), and through the instance's queue onto Celery workers (``distributed``).

Two things the product needs have no public Dagster API; each lives in one small module, every use commented,
and ``epic_levels_pipeline_tests/orchestration/test_dagster_internals.py`` fails when a pin bump changes them:
``celery_launcher`` (the worker health check and resume of dagster-celery's run launcher) and ``run_queue``
(submitting a run to the instance's run coordinator from Python, as the UI's "Materialize" does).
"""
