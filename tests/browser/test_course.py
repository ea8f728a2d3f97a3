"""The lesson became a course of pages (issue 33): every address of the old single page still lands
on its text, and a reader sees each page's place and reading time."""

from __future__ import annotations

import pytest
import yaml

from sitekit import DOCS

#: Every section and quiz of the single lesson page (88bb028) that now lives on another page.
OLD_IDS = {
    "recap": "worked-example/",
    "worked-example": "worked-example/",
    "quiz-scale": "worked-example/",
    "quiz-axis": "worked-example/",
    "view-transpose": "code/",
    "it-matches-pytorch": "code/",
    "what-it-costs": "code/",
    "quiz-slice": "code/",
    "quiz-view": "code/",
    "quiz-params": "code/",
    "quiz-cost": "code/",
    "quiz-torch-weights": "code/",
    "mix-ups": "code/",
    "positions": "positions/",
    "transformer-block": "block/",
    "why-not-recurrence": "block/",
}
#: Sections that stayed on the lesson: their addresses must not move.
KEPT_IDS = ["core-idea", "why-not-one-head", "more-heads", "formula", "explorer", "meet-the-heads",
            "what-the-demo-shows", "one-batched-matmul", "output-projection", "check-yourself",
            "quiz-head-width", "quiz-identity", "sources", "further-questions"]


def _front_matter(path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8").split("---\n", 2)[1])


def test_the_lessons_front_matter_sends_on_every_old_address():
    moved = _front_matter(DOCS / "index.md")["moved"]
    assert {anchor: target.removesuffix(".md") + "/" for anchor, target in moved.items()} == OLD_IDS


@pytest.mark.parametrize("anchor", sorted(OLD_IDS))
def test_an_old_address_lands_on_its_text_on_the_new_page(shared_page, site_url: str, anchor: str) -> None:
    page = shared_page(width=375, height=812)
    page.goto(f"#{anchor}")
    page.wait_for_url(f"{site_url}{OLD_IDS[anchor]}#{anchor}")
    target = page.locator(f"[id='{anchor}']")
    assert target.count() == 1
    target.wait_for()
    page.wait_for_function(
        """(id) => { const r = document.getElementById(id).getBoundingClientRect();
                     return r.top >= -2 && r.top < innerHeight / 2; }""",
        arg=anchor,
    )
    assert not page.console_errors


@pytest.mark.parametrize("anchor", ["mha_ref.validation.check_finite", "mha_ref.weights.AttentionWeights"])
def test_the_api_layer_pages_old_addresses_land_on_checks_and_weights(shared_page, site_url: str, anchor: str) -> None:
    """The layer's API page lost its two last modules to a page of their own (api/checks.md), making
    it small enough to hold the TBT budget under load; their old addresses follow them."""
    moved = _front_matter(DOCS / "api" / "layer.md")["moved"]
    assert set(moved.values()) == {"api/checks.md"} and anchor in moved
    page = shared_page(width=375, height=812)
    page.goto(f"api/layer/#{anchor}")
    page.wait_for_url(f"{site_url}api/checks/#{anchor}")
    assert page.locator(f"[id='{anchor}']").count() == 1
    # Already on the old page, a fragment changed there (a pasted address, Back) is sent on too.
    page.goto("api/layer/")
    page.evaluate("(id) => { location.hash = id; }", anchor)
    page.wait_for_url(f"{site_url}api/checks/#{anchor}")
    assert not page.console_errors


@pytest.mark.parametrize("anchor", KEPT_IDS)
def test_addresses_still_on_the_lesson_stay_there(shared_page, site_url: str, anchor: str) -> None:
    page = shared_page()
    page.goto(f"#{anchor}")
    assert page.url == f"{site_url}#{anchor}"
    assert page.locator(f"[id='{anchor}']").count() == 1


def test_the_reader_sees_the_place_and_time_under_the_title(shared_page) -> None:
    page = shared_page(width=375, height=812)
    page.goto("code/")
    line = page.locator(".mha-course-place")
    assert line.is_visible()
    assert line.inner_text().startswith("Page 3 of 11 · about ")
    title = page.locator("article h1").bounding_box()
    assert 0 < line.bounding_box()["y"] - title["y"] < 200  # right under the title


@pytest.mark.parametrize("anchor", ["", "pruning", "live-heads", "quiz-rh-prune"])
def test_the_old_address_of_heads_that_learn_lands_on_the_tiny_model_page(shared_page, site_url: str,
                                                                          anchor: str) -> None:
    """"Heads that learn" moved from real-heads/ to tiny-model/ (one name for the tiny model): the old
    address, written by mha_site.build.course, sends its reader on with the fragment kept."""
    page = shared_page(width=375, height=812)
    fragment = f"#{anchor}" if anchor else ""
    page.goto(f"real-heads/{fragment}")
    page.wait_for_url(f"{site_url}tiny-model/{fragment}")
    assert "Heads that learn" in page.locator("h1").inner_text()
    if anchor:
        assert page.locator(f"[id='{anchor}']").count() == 1
    assert not page.console_errors
