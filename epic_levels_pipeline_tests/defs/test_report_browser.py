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
