"""``epic-levels report``: the report (Markdown and HTML with plots) from the warehouse."""

from __future__ import annotations

import argparse

from ..settings import Paths


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="write the report (Markdown and HTML with plots) under data/reports/")
    p.set_defaults(fn=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..reporting.report import report_from_warehouse

    md, html = report_from_warehouse(Paths.default())
    print(f"wrote {md}\nwrote {html}")
    return 0
