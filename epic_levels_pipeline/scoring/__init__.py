"""Stage 5, scoring: verdicts (rules, then the judge), the judge audit, and ``metrics/`` (statistics, tables)."""
