"""The Dagster layer: assets, checks, sensors, schedules and resources that wire the pure core."""
