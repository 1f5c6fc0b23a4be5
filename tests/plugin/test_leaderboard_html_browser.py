"""The leaderboard's HTML page in a real browser: headless Chromium driven by Selenium.

The page is produced by the real ``kpass leaderboard`` command (JSON and HTML from one run). The
test checks that the page loads offline without errors or requests, that every number rendered
in the table equals the JSON output, that the interval bars are drawn to scale, that clicking a
header sorts the rows, and saves a screenshot as a test artifact (under pytest's tmp dir, and in
``$KPASS_TEST_ARTIFACTS`` when set; ``KPASS_UPDATE_SCREENSHOT=1`` also refreshes
``docs/leaderboard.png``, the picture in docs/leaderboard.md).

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``; ``make test``
installs them through scripts/setup-test-deps.sh). A missing browser FAILS this test: it is never skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from kpass.render.leaderboard_text import format_number, format_p_value, format_rank

CHROMIUM = os.environ.get("KPASS_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("KPASS_CHROMEDRIVER", "/usr/bin/chromedriver")
REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def write_samples(path: Path) -> None:
    """Six simulated models on 40 problems (8 samples each) with token counts and clusters;
    two of them identical, so the page shows a shared rank."""
    rng = np.random.default_rng(2024)
    abilities = {"orca-72b": 1.6, "heron-70b": 0.9, "finch-32b": 0.8, "finch-32b-rerun": None,
                 "wren-8b": 0.0, "lark-3b": -1.0}
    difficulty = rng.normal(0.0, 1.3, 40)
    records = {}
    with open(path, "w") as handle:
        for model, ability in abilities.items():
            if ability is None:       # an exact copy of finch-32b under another name
                for record in records["finch-32b"]:
                    handle.write(json.dumps(dict(record, model=model)) + "\n")
                continue
            records[model] = []
            p = 1 / (1 + np.exp(-(ability - difficulty)))
            for j in range(40):
                for s in range(8):
                    finished = bool(rng.random() < 0.75 + 0.1 * ability)
                    length = int(rng.gamma(4.0, 500.0 * (1.3 - 0.15 * ability))) + 50
                    finished = finished and length < 8192
                    record = {"model": model, "task": "olympiad-math", "problem_id": f"p{j:03d}",
                              "sample_index": s, "correct": bool(finished and rng.random() < p[j]),
                              "finished": finished,
                              "output_tokens": length if finished else 8192,
                              "answer_token": length if finished else None,
                              "cluster": f"{['algebra', 'geometry', 'number theory', 'combinatorics'][j % 4]}-{j % 5}"}
                    records[model].append(record)
                    handle.write(json.dumps(record) + "\n")


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """(data, html path) from one run of the real `kpass leaderboard` command."""
    directory = tmp_path_factory.mktemp("leaderboard")
    samples = directory / "samples.jsonl"
    write_samples(samples)
    json_path, html_path = directory / "board.json", directory / "board.html"
    command = [sys.executable, "-m", "kpass.cli", "leaderboard", str(samples), "-m", "pass@1,4",
               "--cluster-by", "cluster", "--n-resamples", "1000", "--seed", "7", "--pairs", "adjacent",
               "--title", "Olympiad math: six models, 40 problems, 8 samples each",
               "-o", str(json_path), "-o", str(html_path)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    return json.loads(json_path.read_text()), html_path


@pytest.fixture(scope="module")
def browser():
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            pytest.fail(f"{path} is missing: install Debian's {package} (`apt-get install chromium "
                        f"chromium-driver`, as make test does); this test is never skipped.")
    profile = tempfile.mkdtemp(prefix="kpass-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,1500",
                     "--force-device-scale-factor=1", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def table_order(driver, table_id="kp-leaderboard"):
    return [row.get_attribute("data-model")
            for row in driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")]


def test_page_loads_offline_without_errors(browser, page):
    data, html_path = page
    browser.get(html_path.as_uri())
    assert browser.title == "Olympiad math: six models, 40 problems, 8 samples each"
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []
    # nothing was fetched: no resource entries besides the document itself
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    embedded = json.loads(browser.execute_script(
        "return document.getElementById('kpass-data').textContent"))
    assert embedded == data


def test_rendered_numbers_equal_json(browser, page):
    data, html_path = page
    browser.get(html_path.as_uri())
    assert table_order(browser) == [entry["model"] for entry in data["models"]]
    rows = browser.find_elements(By.CSS_SELECTOR, "#kp-leaderboard tbody tr")
    for row, entry in zip(rows, data["models"]):
        for column in data["columns"]:
            key = column["key"]
            cell = entry["metrics"][key]
            td = row.find_element(By.CSS_SELECTOR, f'td[data-column="{key}"]')
            shown = td.find_element(By.CLASS_NAME, "kp-est").text
            assert shown == format_number(cell["estimate"])
            assert abs(float(shown) - cell["estimate"]) <= 0.0005
            interval = td.find_element(By.CLASS_NAME, "kp-ci").text
            low, high = (float(x) for x in interval.strip("[]").split(","))
            assert abs(low - cell["low"]) <= 0.0005 and abs(high - cell["high"]) <= 0.0005
        rank = entry["ranks"][data["sort"]]
        rank_text = row.find_element(By.CSS_SELECTOR, "td.kp-rank .kp-est").text
        assert rank_text == format_rank(rank)
        shown_low, _, shown_high = rank_text.partition("-")
        assert (int(shown_low), int(shown_high or shown_low)) == (rank["low"], rank["high"])
        assert row.find_element(By.CSS_SELECTOR, 'td[data-column="n_problems"]').text == str(entry["n_problems"])
    # the two identical models show the same rank interval
    ranks = {e["model"]: e["ranks"][data["sort"]] for e in data["models"]}
    assert ranks["finch-32b"] == ranks["finch-32b-rerun"]
    # pairwise comparisons: one row per comparison, Holm p-values as in the JSON
    pair_rows = browser.find_elements(By.CSS_SELECTOR, "#kp-comparisons tbody tr")
    assert len(pair_rows) == len(data["comparisons"]) == 5        # neighbours in the sorted order
    order = [entry["model"] for entry in data["models"]]
    assert [(c["model_a"], c["model_b"]) for c in data["comparisons"]] == list(zip(order[:-1], order[1:]))
    for row, comparison in zip(pair_rows, data["comparisons"]):
        cells = row.find_elements(By.TAG_NAME, "td")
        assert [cells[0].text, cells[1].text] == [comparison["model_a"], comparison["model_b"]]
        assert cells[4].text == format_p_value(comparison["p_value_holm"])


def test_interval_bars_are_drawn_to_scale(browser, page):
    data, html_path = page
    browser.get(html_path.as_uri())
    for column in data["columns"]:
        key = column["key"]
        geometry = browser.execute_script("""
            return Array.from(document.querySelectorAll('#kp-leaderboard td[data-column="' + arguments[0] + '"]'))
              .map(function (td) {
                var band = td.querySelector('rect.kp-interval').getBoundingClientRect();
                var tick = td.querySelector('line.kp-estimate').getBoundingClientRect();
                return [band.left, band.right, (tick.left + tick.right) / 2];
              });""", key)
        cells = [entry["metrics"][key] for entry in data["models"]]
        for (left, right, tick), _cell in zip(geometry, cells):
            assert left - 1 <= tick <= right + 1            # the estimate lies on its interval
        # one scale per column: pixel positions are an increasing affine function of the values
        values = np.array([[c["low"], c["high"], c["estimate"]] for c in cells]).ravel()
        pixels = np.array(geometry).ravel()
        slope, intercept = np.polyfit(values, pixels, 1)
        assert slope > 0
        assert np.max(np.abs(slope * values + intercept - pixels)) < 2.5   # within ~2 px (min width)


def test_clicking_headers_sorts(browser, page):
    data, html_path = page
    browser.get(html_path.as_uri())
    header = browser.find_element(By.CSS_SELECTOR, '#kp-leaderboard th[data-column="pass@4"]')
    header.click()
    by_pass4 = sorted(data["models"], key=lambda e: -e["metrics"]["pass@4"]["estimate"])
    expected = [e["model"] for e in by_pass4]
    assert table_order(browser) == expected
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    ascending = sorted(data["models"], key=lambda e: e["metrics"]["pass@4"]["estimate"])
    shown = table_order(browser)
    assert [next(e for e in data["models"] if e["model"] == m)["metrics"]["pass@4"]["estimate"]
            for m in shown] == [e["metrics"]["pass@4"]["estimate"] for e in ascending]
    assert header.get_attribute("aria-sort") == "ascending"
    browser.find_element(By.CSS_SELECTOR, '#kp-leaderboard th[data-column="model"]').click()
    assert table_order(browser) == sorted(e["model"] for e in data["models"])
    browser.find_element(By.CSS_SELECTOR, '#kp-leaderboard th[data-column="rank"]').click()
    ranks = [next(e for e in data["models"] if e["model"] == m)["ranks"][data["sort"]]["rank"]
             for m in table_order(browser)]
    assert ranks == sorted(ranks)


def test_curves_and_screenshot(browser, page, tmp_path):
    data, html_path = page
    browser.get(html_path.as_uri())
    curve = browser.find_element(By.ID, "kp-curve-pass@k")
    names = [line.get_attribute("data-name") for line in curve.find_elements(By.CSS_SELECTOR, "polyline.kp-series")]
    assert names == [entry["model"] for entry in data["models"]]
    assert len(data["curves"]["pass@k"]["orca-72b"]) == 4                   # k = 1, 2, 4, 8
    for metric in ("pass@1", "fin@1"):
        chart = browser.find_element(By.ID, f"kp-budget-{metric}")
        assert len(chart.find_elements(By.CSS_SELECTOR, "polyline.kp-series")) == 6
        assert chart.size["width"] > 300
    screenshot = tmp_path / "leaderboard.png"
    assert browser.save_screenshot(str(screenshot))
    png = screenshot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1280, 1500) or width >= 1000
    artifacts = os.environ.get("KPASS_TEST_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(artifacts) / "leaderboard.png")
        shutil.copy(html_path, Path(artifacts) / "leaderboard.html")
    if os.environ.get("KPASS_UPDATE_SCREENSHOT") == "1":
        shutil.copy(screenshot, REPOSITORY / "docs" / "leaderboard.png")


#: Model names that break a page whose embedded JSON escapes only ``</`` (issue #15): the first
#: opens an HTML comment inside the data element, which then swallows the page's own script.
HOSTILE_MODELS = ("<!--<script>", "</script><script>document.title='pwned'</script>", "a&b>c")


def test_hostile_model_names_leave_the_page_working(browser, tmp_path):
    rng = np.random.default_rng(15)
    samples = tmp_path / "hostile.jsonl"
    with open(samples, "w") as handle:
        for shift, model in enumerate(HOSTILE_MODELS):
            for j in range(12):
                for s in range(4):
                    handle.write(json.dumps({"model": model, "task": "t", "problem_id": f"p{j}",
                                             "sample_index": s,
                                             "correct": bool(rng.random() < 0.2 + 0.25 * shift)}) + "\n")
    json_path, html_path = tmp_path / "board.json", tmp_path / "board.html"
    finished = subprocess.run([sys.executable, "-m", "kpass.cli", "leaderboard", str(samples), "--n-resamples",
                               "200", "--no-curves", "-o", str(json_path), "-o", str(html_path)],
                              capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    data = json.loads(json_path.read_text())
    browser.get(html_path.as_uri())
    assert browser.title != "pwned"
    assert [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"] == []
    embedded = json.loads(browser.execute_script("return document.getElementById('kpass-data').textContent"))
    assert embedded == data
    assert sorted(table_order(browser)) == sorted(HOSTILE_MODELS)
    browser.find_element(By.CSS_SELECTOR, '#kp-leaderboard th[data-column="model"]').click()
    assert table_order(browser) == sorted(HOSTILE_MODELS)     # the sort script still runs
    header = browser.find_element(By.CSS_SELECTOR, '#kp-leaderboard th[data-column="model"]')
    assert header.get_attribute("aria-sort") == "ascending"
