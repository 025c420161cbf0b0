"""The UI in real headless Chromium (Debian's, driven by playwright through `executable_path`) against the real
`agentenv up` and runs the real runtime recorded. Each test saves a screenshot of its page to
`build/explorer-screenshots/` at the repository root."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from agentenv_testing.services import LoopbackService

if TYPE_CHECKING:
    from conftest import Project

CHROMIUM = Path(os.environ.get("AGENTENV_CHROMIUM", "/usr/lib/chromium/chromium"))
SHOTS = Path(__file__).resolve().parents[4] / "build" / "explorer-screenshots"
TIMEOUT_MS = 60_000

pytestmark = pytest.mark.skipif(
    not CHROMIUM.is_file(), reason=f"no chromium at {CHROMIUM} (.ci/setup.d/50-chromium.sh installs Debian's)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert errors == [], f"the page raised: {errors}"


def visit(page: Any, explorer: LoopbackService, route: str, ready: str) -> None:
    """Open the UI at `#/route` and wait until `ready` (a selector) is on the page."""
    page.goto(f"{explorer.url}/#/{route}")
    page.locator(ready).first.wait_for()


def shoot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_the_runs_page_lists_and_filters_runs(page: Any, explorer: LoopbackService, project: Project) -> None:
    page.goto(f"{explorer.url}/#/runs")
    for run in project.runs.values():
        page.locator(f'#runs-table tr[data-run="{run}"]').wait_for()
    failing = page.locator(f'tr[data-run="{project.runs["refund_fail"]}"]')
    assert "below threshold" in failing.inner_text() and "0.25" in failing.inner_text()
    shoot(page, "runs.png")
    page.fill('input[name="task"]', "resolve-refund")
    page.click('form.filters button[type="submit"]')
    page.wait_for_function("document.querySelectorAll('#runs-table tbody tr').length === 2")
    assert page.locator(f'tr[data-run="{project.runs["hello"]}"]').count() == 0


def test_the_support_refund_run_shows_the_refund_call_and_the_score(
    page: Any, explorer: LoopbackService, project: Project
) -> None:
    visit(page, explorer, f"run/{project.runs['refund_pass']}", "#events-table")
    assert page.inner_text("#run-score") == "1.00"
    assert page.locator("svg.dag g.step.succeeded").count() == 5
    rows = page.locator("#events-table tbody tr")
    assert page.locator("svg.timeline circle.mark").count() == rows.count()
    refund = page.locator("#events-table tr", has_text="issue_refund")
    assert refund.count() == 1 and "billing_lead" in refund.inner_text()
    refund.click()
    detail = page.inner_text("#event-detail")
    assert "issue_refund" in detail and "89.99" in detail and "ORD-5001" in detail
    verifier = page.inner_text("#verifier")
    assert "grade: score 1.00" in verifier and "refund_amount" in verifier and "got 8999, expected 8999" in verifier
    assert "Refunded 89.99 on ORD-5001" in page.inner_text("ol.transcript")
    page.locator('[data-panel="run-notes"]', has_text="notes: task resolve-refund, 5 steps").wait_for()
    shoot(page, "run-support-refund.png")


def test_the_world_page_shows_the_card_roles_and_final_tables(
    page: Any, explorer: LoopbackService, project: Project
) -> None:
    visit(page, explorer, f"world/{project.runs['refund_fail']}", "#role-tools")
    refund_row = page.locator("#role-tools tr", has_text="issue_refund").first
    cells = [c.strip() for c in refund_row.locator("td").all_inner_texts()]
    assert cells[0] == "issue_refund" and cells[1:] == ["✓", "✓", "–"]  # default, billing_lead, support
    assert "helpdesk+email+slack" in page.inner_text("#card")
    refunds = page.locator('#tables details[data-table="helpdesk.refunds"]')
    refunds.locator("summary").click()
    assert "REF-3001" in refunds.inner_text() and "12999" in refunds.inner_text()  # the run's wrong refund
    shoot(page, "world.png")


def test_compare_a_passing_and_a_failing_run(page: Any, explorer: LoopbackService, project: Project) -> None:
    page.goto(f"{explorer.url}/#/runs?task=resolve-refund")
    for name in ("refund_pass", "refund_fail"):
        page.check(f'input[aria-label="choose {project.runs[name]}"]')
    page.click("#compare")
    page.locator("#divergence").wait_for()
    assert page.inner_text("#divergence").startswith("They part at event #")
    assert page.locator("#criteria tr.differs").count() == 2
    text = page.inner_text("main")
    assert "129.99" in text and "89.99" in text and "\nnull\n" not in text  # no stray empty part
    shoot(page, "compare.png")


def test_start_hello_and_watch_it_finish(page: Any, explorer: LoopbackService) -> None:
    page.goto(f"{explorer.url}/#/start")
    page.select_option("#start-bundle", "hello")
    page.fill("#start-seed", "21")
    page.click("#start-button")
    page.locator("#start-status .badge", has_text="succeeded").wait_for()
    events = page.inner_text("#start-events")
    assert "tool post_message" in events and "run_finished" in events
    shoot(page, "start-hello.png")
    page.click("#start-run-link")
    page.locator("#events-table").wait_for()
    assert "post_message" in page.inner_text("#events-table")
    shoot(page, "run-hello.png")


def test_the_timeline_shows_triggers_refusals_access_and_clock_jumps(
    page: Any, explorer: LoopbackService, project: Project
) -> None:
    visit(page, explorer, f"run/{project.runs['living']}", "#events-table")
    timeline = page.locator("svg.timeline")
    assert timeline.locator("circle.mark.trigger").count() >= 3
    assert timeline.locator("circle.mark.trigger-call").count() >= 1  # a call a trigger made, on the world lane
    assert timeline.locator("circle.mark.access").count() == 1
    assert "clock +30 min" in timeline.locator(".clock-jump").first.inner_html()
    lanes = timeline.locator(".lane text").all_text_contents()
    assert "support" in lanes and "world rules" in lanes
    refused = timeline.locator("circle.mark.refused")
    assert refused.count() == 1
    refused.click()
    detail = page.inner_text("#event-detail")
    assert "refused issue_refund" in detail and "may not call 'issue_refund'" in detail
    shoot(page, "run-living-world.png")


def test_a_plugin_page_is_in_the_navigation(page: Any, explorer: LoopbackService) -> None:
    visit(page, explorer, "runs", "#nav a[href='#/page/overview']")
    page.click("#nav a[href='#/page/overview']")
    page.locator("main .panel-body", has_text="a page of its own").wait_for()
    assert page.inner_text("main h1") == "Overview"
