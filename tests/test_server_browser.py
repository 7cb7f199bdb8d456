"""The hosted evaluation in a real browser: headless Chromium driven through selenium (Debian's
chromium and chromium-driver) against one running deployment. A team signs in with its token,
uploads a zip through the form, sees it queued (no worker yet) then scored (a worker started),
finds its entry on the board; another team's session cannot open that submission's page.
With $SEGBENCH_SCREENSHOTS set to a folder, the board and the submission page are saved there
(docs/images/ holds the ones docs/server.md shows)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from server_fixtures import BENCHMARK, PHASE, Deployment, in_process, make_upload

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if CHROMIUM is None or DRIVER is None:
        problem = "Debian's chromium and chromium-driver are needed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("SEGBENCH_REQUIRE_CHROMIUM"):
            pytest.fail(problem, pytrace=False)
        pytest.skip(problem)
    folder = tmp_path_factory.mktemp("server")
    # a baseline (half of each frame blanked) for the boards' Δ column
    deployment = Deployment(folder, baseline=make_upload(folder / "baseline.zip", blank_rows=0.5))
    yield deployment
    deployment.close()


def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1000", "--disable-extensions", "--no-first-run"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console: what a CSP blocked
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))


def sign_in(browser, served: Deployment, team: str) -> None:
    browser.get(served.url + "/")
    browser.find_element(By.NAME, "token").send_keys(served.tokens[team])
    browser.find_element(By.CSS_SELECTOR, 'form[action="/signin"] button').click()
    wait_until(lambda: browser.current_url == served.url + "/team")


def wait_until(condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the page did not get there in time"
        time.sleep(0.2)


def shot(browser, name: str, tmp_path: Path) -> None:
    browser.save_screenshot(str(tmp_path / name))
    assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if os.environ.get("SEGBENCH_SCREENSHOTS"):
        shutil.copy(tmp_path / name, Path(os.environ["SEGBENCH_SCREENSHOTS"]) / name)


def test_a_team_signs_in_uploads_sees_it_scored_and_on_the_board_and_no_other_team_opens_it(served, tmp_path):
    upload = make_upload(tmp_path / "upload.zip")
    alpha, beta = chromium(), chromium()
    try:
        sign_in(alpha, served, "alpha")
        Select(alpha.find_element(By.NAME, "phase")).select_by_value(f"{BENCHMARK}/{PHASE}")
        alpha.find_element(By.NAME, "method").send_keys("in-the-browser")
        alpha.find_element(By.NAME, "upload").send_keys(str(upload))
        alpha.find_element(By.CSS_SELECTOR, 'form[action="/team/upload"] button').click()
        wait_until(lambda: "/submissions/" in alpha.current_url)
        page = alpha.current_url
        submission_id = page.rsplit("/", 1)[1]
        status = lambda: alpha.find_element(By.CSS_SELECTOR, "td.status").text  # noqa: E731
        assert status() == "queued"  # no worker runs yet
        served.worker()
        wait_until(lambda: (alpha.get(page), status())[1] == "scored")
        # before the reveal the page shows what the public board released for it (the Ladder's note), no metric
        assert "first score" in alpha.page_source and "in-the-browser" in alpha.page_source
        assert "Every metric" not in alpha.page_source
        shot(alpha, "server-submission.png", tmp_path)
        alpha.get(served.url + "/team")
        assert alpha.find_element(By.CSS_SELECTOR, f'tr[data-id="{submission_id}"] td.status').text == "scored"
        # the page's own style block applies under its Content-Security-Policy (headers.py)
        assert alpha.execute_script("return getComputedStyle(document.querySelector('form.inline')).display") == "inline"

        alpha.get(served.url + f"/boards/{BENCHMARK}/{PHASE}")
        entries = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")][:2]
                   for row in alpha.find_elements(By.XPATH, "//h2[text()='Entries']/following::table[1]/tbody/tr")]
        assert entries == [["alpha", "in-the-browser"]]
        shot(alpha, "server-board.png", tmp_path)
        header = alpha.find_element(By.XPATH, "//h2[text()='Entries']/following::table[1]/thead/tr/th[1]")
        header.click()  # the board's sorting script runs under the policy: it marks the column sorted
        assert header.get_attribute("aria-sort") == "ascending"

        sign_in(beta, served, "beta")
        beta.get(page)
        assert f"no submission '{submission_id}' of team beta" in beta.page_source
        assert "first score" not in beta.page_source and "in-the-browser" not in beta.page_source

        # once the host reveals the phase: every metric on the team's page, the private board's intervals and Δ
        in_process("server", "reveal", "--db", served.db, "--benchmark", BENCHMARK, "--phase", PHASE)
        alpha.get(page)
        assert [h.text for h in alpha.find_elements(By.TAG_NAME, "h2")] == ["Every metric, public part",
                                                                         "Every metric, private part"]
        alpha.execute_script("document.querySelector('h2').scrollIntoView()")  # the screenshot: the metrics
        shot(alpha, "server-submission-metrics.png", tmp_path)
        beta.get(page)
        assert "Every metric" not in beta.page_source
        alpha.get(served.url + f"/boards/{BENCHMARK}/{PHASE}/private")
        row = [cell.text for cell in alpha.find_elements(By.XPATH, "//table[1]/tbody/tr[1]/td")]
        assert row[:3] == ["1", "alpha", "upload"] and re.fullmatch(r"0\.\d{4} \[0\.\d{4}, 0\.\d{4}\]", row[4])
        assert re.fullmatch(r"\+0\.\d{4} \[[+-]0\.\d{4}, [+-]0\.\d{4}\]", row[5])  # Δ vs the baseline
        shot(alpha, "server-private-board.png", tmp_path)
        blocked = [entry["message"] for browser in (alpha, beta) for entry in browser.get_log("browser")
                   if "Content Security Policy" in entry["message"]]
        assert blocked == []
    finally:
        alpha.quit()
        beta.quit()
