"""``epic-levels report``: the report (Markdown and HTML with plots) from the warehouse."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..settings import Paths
from .options import about, location_flags


def add_parser(sub) -> None:
    p = sub.add_parser("report", **about("write the report (Markdown and HTML with plots) from the warehouse"))
    p.add_argument("--out", default="", metavar="DIR",
                   help="folder to write report.md, report.html and the figures to (default data/reports/)")
    location_flags(p)
    p.set_defaults(fn=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..reporting.report import report_from_warehouse

    md, html = report_from_warehouse(args.project, out_dir=Path(args.out) if args.out else None)
    print(f"wrote {md}\nwrote {html}")
    return 0
