"""The end of ``epic-levels run`` on a materialized project: the leaderboard's oracle row, and where the report, the
tables and the UI are."""

from __future__ import annotations

from epic_levels_pipeline.cli.run import print_summary


def test_the_summary_says_where_the_report_and_the_ui_are(offline_graph, capsys):
    print_summary(offline_graph.project)
    out = capsys.readouterr().out
    assert "Leaderboard" in out and "report.html" in out and "dg dev" in out
    assert next(line for line in out.splitlines() if line.startswith("oracle")).split()[:3] == ["oracle", "offline", "1.000"]
