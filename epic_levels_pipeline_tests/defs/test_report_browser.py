"""The report as a reader sees it: opened in headless Chromium in a 1,400 px window, it scrolls no sideways (the page
and every table fit), every table has a header, the plots are shown unscaled enough that their smallest text is at
least 10 px, and values from fewer than 10 items are de-emphasised."""

from __future__ import annotations

from epic_levels_pipeline.reporting.document import FEW
from epic_levels_pipeline.reporting.plots import DPI, MIN_FONT_PT
from epic_levels_pipeline.reporting.report import report_from_warehouse

from .conftest import start_chromium

WIDTH, HEIGHT = 1400, 900


def test_the_report_fits_a_1400_px_window_and_reads_at_a_glance(offline_graph, tmp_path):
    _, page = report_from_warehouse(offline_graph.project, out_dir=tmp_path / "report")
    driver = start_chromium(tmp_path / "chromium-profile", WIDTH, HEIGHT)
    try:
        driver.get(page.as_uri())
        width, inner = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, f"the page scrolls sideways: {width} px of content in a {inner} px window"
        tables = driver.execute_script("""return [...document.querySelectorAll('table')].map(t => [
            t.querySelectorAll('thead th').length, t.scrollWidth, t.parentElement.clientWidth,
            (t.parentElement.previousElementSibling || {}).textContent || ''])""")
        assert len(tables) > 10
        for headers, table_width, room, before in tables:
            assert headers > 0, f"a table without a header (after {before[:60]!r})"
            assert table_width <= room, f"a table wider than its column: {table_width} > {room} (after {before[:60]!r})"
        images = driver.execute_script(
            "return [...document.images].map(i => [i.width, i.naturalWidth, i.alt])")
        assert images
        for shown, natural, alt in images:
            smallest_px = shown / natural * MIN_FONT_PT * DPI / 72
            assert smallest_px >= 10, f"{alt}: text of {smallest_px:.1f} px"
        faded = driver.execute_script("""return [...document.querySelectorAll('td.few')].map(td =>
            [parseFloat(getComputedStyle(td).opacity), td.textContent])""")
        assert faded, "three clips give cells of fewer than 10 items: some must be faded"
        assert all(opacity < 0.6 and f"n={FEW}" not in text for opacity, text in faded)
        first = driver.execute_script("return document.querySelector('p.lead').textContent")
        assert first.startswith("How well ") and "0 is guessing, 1 is perfect" in first and "not given" not in first
        driver.save_screenshot(str(tmp_path / "report_1400.png"))
    finally:
        driver.quit()


def test_model_pairs_under_the_leaderboard_fit_a_1400_px_window(tmp_path):
    """Four models (six pairs) over four levels and three conditions: the table of pairs under the leaderboard and
    the per-format tables of the paired comparisons fit the window, one cell per pair and level."""
    import random

    import pandas as pd

    from epic_levels_pipeline.reporting.report import write_report
    from epic_levels_pipeline.scoring.metrics.tables import paired_comparisons, scores

    from ..scoring.test_model_pairs import verdict

    rng = random.Random(4)
    models = [("vllm", "qwen-omni-7b_audio-in-video"), ("vllm", "qwen-omni-7b_audio-separate"),
              ("gemini", "gemini-2.5-flash_frames"), ("external", "qwen-omni-7b_audio-in-video")]
    rows = [verdict(f"c{c}q{i}", fmt, condition, rng.random() < 0.6, f"c{c}", responder, model, level=f"L{1 + i % 4}",
                    chance=chance)
            for c in range(6) for i in range(8) for fmt, chance in (("multiple_choice", 0.25), ("yes_no", 0.5))
            for condition in ("clip", "no_clip", "silenced") for responder, model in [*models, ("oracle", "offline")]]
    v = pd.DataFrame(rows)
    paired = paired_comparisons(v, n_boot=50)
    assert (paired["kind"] == "model").sum() == 6 * 5 * 3 * 3  # pairs x levels x conditions x formats
    _, page = write_report(tmp_path / "report", scores(v, n_boot=50), paired, None, None)
    driver = start_chromium(tmp_path / "chromium-profile", WIDTH, HEIGHT)
    try:
        driver.get(page.as_uri())
        width, inner = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, f"the page scrolls sideways: {width} px of content in a {inner} px window"
        tables = driver.execute_script("""return [...document.querySelectorAll('table')].map(t => [
            t.scrollWidth, t.parentElement.clientWidth, (t.parentElement.previousElementSibling || {}).textContent
            || '', t.querySelectorAll('tbody tr').length])""")
        pairs = [t for t in tables if t[2].startswith("Models compared on the same items")]
        assert len(pairs) == 1 and pairs[0][3] == 6 * 3, "one row per pair and condition under the leaderboard"
        per_format = [t for t in tables if t[2].startswith("A = ")]
        assert len(per_format) == 6
        for table_width, room, before, _ in tables:
            assert table_width <= room, f"a table wider than its column: {table_width} > {room} (after {before[:60]!r})"
        driver.save_screenshot(str(tmp_path / "model_pairs_1400.png"))
    finally:
        driver.quit()
