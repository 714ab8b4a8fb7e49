"""Stage 5, scoring: verdicts (rules, then the judge), the judge audit, and ``metrics/`` (statistics, tables)."""

from .._compat import forward_to

__getattr__ = forward_to(__name__, "scoring.verdicts")  # names of the former module scoring.py
