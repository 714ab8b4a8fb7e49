"""The public names stay as they are: commands and flags, asset keys and checks, jobs, sensors, schedules, pools,
the code location, and the warehouse tables with their columns.

``fixtures/public_names.json`` records them; users' scripts, the UI, stored runs and SQL over the warehouse
refer to them by name, so a restructuring of the code must leave every one unchanged. A deliberate rename
re-records the fixture with ``python -m epic_levels_pipeline_tests.test_public_names``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "public_names.json"


class _Parsed(Exception):
    pass


def cli_surface() -> dict[str, list[str]]:
    """Every ``epic-levels`` command with its sorted option strings and positional names."""
    from epic_levels_pipeline import cli

    captured: dict = {}
    original = argparse.ArgumentParser.parse_args

    def grab(self, *args, **kwargs):
        captured["parser"] = self
        raise _Parsed

    argparse.ArgumentParser.parse_args = grab
    try:
        cli.main(["validate", "x"])
    except _Parsed:
        pass
    finally:
        argparse.ArgumentParser.parse_args = original
    sub = next(a for a in captured["parser"]._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, parser in sub.choices.items():
        flags = []
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            flags += action.option_strings or [action.dest]
            if action.choices:
                flags += [f"{action.dest}={c}" for c in action.choices]
        out[name] = sorted(flags)
    return out


def dagster_surface() -> dict:
    """Asset keys, check keys, jobs, sensors, schedules and pools of the code location."""
    from epic_levels_pipeline.definitions import defs

    d = defs()
    graph = d.resolve_asset_graph()
    assets = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    checks = sorted(f"{c.asset_key.to_user_string()}:{c.name}" for c in graph.asset_check_keys)
    pools = sorted({f"{k.to_user_string()}:{a.op.pool}" for a in d.assets or [] if a.op.pool for k in a.keys})
    groups = sorted({graph.get(k).group_name for k in graph.get_all_asset_keys()})
    return {
        "assets": assets, "checks": checks, "groups": groups, "pools": pools,
        "jobs": sorted(j.name for j in d.resolve_all_job_defs() if not j.name.startswith("__")),
        "sensors": sorted(s.name for s in d.sensors or []),
        "schedules": sorted(s.name for s in d.schedules or []),
    }


def warehouse_surface() -> dict[str, list[str]]:
    """The per-clip warehouse tables' columns, by table name."""
    from epic_levels_pipeline.formats.items import ITEM_COLUMNS
    from epic_levels_pipeline.bank.tables import POOL_COLUMNS, QUESTION_COLUMNS
    from epic_levels_pipeline.responses.runner import RESPONSE_COLUMNS
    from epic_levels_pipeline.scoring.verdicts import VERDICT_COLUMNS
    from epic_levels_pipeline.captions import track

    return {"questions": QUESTION_COLUMNS, "distractor_pools": POOL_COLUMNS, "items": ITEM_COLUMNS,
            "responses": RESPONSE_COLUMNS, "verdicts": VERDICT_COLUMNS,
            "caption_references": track.REFERENCE_COLUMNS, "caption_responses": track.RESPONSE_COLUMNS,
            "caption_alignments": track.ALIGNMENT_COLUMNS, "caption_response_scores": track.RESPONSE_SCORE_COLUMNS,
            "caption_scores": track.SCORE_COLUMNS, "caption_threshold_sensitivity": track.SWEEP_COLUMNS,
            "caption_threshold_partials": track.SWEEP_PARTIAL_COLUMNS}


def compute() -> dict:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {
        "scripts": project["project"]["scripts"],
        "code_location": project["tool"]["dg"]["project"]["code_location_name"],
        "cli": cli_surface(),
        "dagster": dagster_surface(),
        "warehouse": warehouse_surface(),
    }


def test_public_names_are_unchanged():
    """Nothing recorded is renamed or removed (new jobs, sensors, assets may be added: record them too)."""
    recorded = json.loads(FIXTURE.read_text())
    now = compute()
    for part in ("scripts", "code_location", "cli", "warehouse"):
        assert now[part] == recorded[part], part
    for kind, names in recorded["dagster"].items():
        missing = sorted(set(names) - set(now["dagster"][kind]))
        assert not missing, f"{kind} renamed or removed: {missing}"


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(compute(), indent=2) + "\n")
    print(f"recorded {FIXTURE}", file=sys.stderr)

