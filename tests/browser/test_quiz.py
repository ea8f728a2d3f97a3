"""The lesson's three quizzes, driven by mouse and by keyboard in Chromium."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def lesson(page):
    page.goto("", wait_until="networkidle")
    page.locator("#quiz-head-width").scroll_into_view_if_needed()
    return page


def feedback(page, quiz_id: str) -> str:
    return page.locator(f"#{quiz_id} .quiz-feedback").inner_text()


def test_numeric_quiz_by_typing(lesson):
    box = lesson.locator("#quiz-head-width-input")
    box.fill("128")
    box.press("Enter")
    assert feedback(lesson, "quiz-head-width").startswith("\u2717 Not quite.")
    assert not lesson.locator("#quiz-head-width details").evaluate("d => d.open")

    box.fill("sixty-four")
    box.press("Enter")
    assert "Type a number" in feedback(lesson, "quiz-head-width")
    assert box.get_attribute("aria-invalid") == "true"

    box.fill(" 64 ")
    lesson.locator("#quiz-head-width button[type=submit]").click()
    assert feedback(lesson, "quiz-head-width") == "\u2713 Correct. d_k = 512 / 8 = 64."
    assert lesson.locator("#quiz-head-width details").evaluate("d => d.open")
    assert lesson.url.endswith("/"), "the form must not navigate"


def test_choice_quiz_by_clicking(lesson):
    quiz = lesson.locator("#quiz-why-heads")
    quiz.locator("[data-quiz-check]").click()
    assert "Choose an answer" in feedback(lesson, "quiz-why-heads")

    quiz.locator("label[for=quiz-why-heads-a]").click()
    quiz.locator("[data-quiz-check]").click()
    text = feedback(lesson, "quiz-why-heads")
    assert text.startswith("\u2717 Not quite.") and "about the same" in text
    assert quiz.locator(".quiz-option[data-verdict=wrong] #quiz-why-heads-a").count() == 1

    quiz.locator("label[for=quiz-why-heads-b]").click()
    quiz.locator("[data-quiz-check]").click()
    assert feedback(lesson, "quiz-why-heads").startswith("\u2713 Correct.")
    assert quiz.locator(".quiz-option[data-verdict=right] #quiz-why-heads-b").count() == 1
    assert quiz.locator(".quiz-option[data-verdict=wrong]").count() == 0


def test_choice_quiz_by_keyboard_only(lesson):
    lesson.locator("#quiz-head-width-input").focus()
    # Tab out of the numeric quiz to the radio group, move with arrows, then reach Check.
    for _ in range(20):
        lesson.keyboard.press("Tab")
        if lesson.evaluate("document.activeElement.name") == "quiz-why-heads":
            break
    else:
        pytest.fail("the radio group cannot be reached with Tab")
    lesson.keyboard.press("ArrowDown")  # moving within a radio group also selects
    assert lesson.evaluate("document.activeElement.id") == "quiz-why-heads-b"
    lesson.keyboard.press("Tab")
    assert lesson.evaluate("document.activeElement.dataset.quizCheck") == ""
    lesson.keyboard.press("Enter")
    assert feedback(lesson, "quiz-why-heads").startswith("\u2713 Correct.")


def test_recall_card_reveals_then_self_checks(lesson):
    quiz = lesson.locator("#quiz-three-moves")
    quiz.locator("textarea").fill("split, attend, concat + project")
    assert not quiz.locator("[data-quiz-self-check]").is_visible()
    quiz.locator("summary").focus()
    lesson.keyboard.press("Enter")  # <summary> opens with the keyboard
    assert quiz.locator("details").evaluate("d => d.open")
    assert "Concatenate and project" in quiz.locator("details").inner_text()
    quiz.locator("[data-verdict=not-yet]").click()
    assert "Split, attend, concatenate, project" in feedback(lesson, "quiz-three-moves")
    quiz.locator("[data-verdict=had-it]").click()
    assert feedback(lesson, "quiz-three-moves").startswith("\u2713 Correct.")


def test_quizzes_readable_without_javascript(new_page):
    page = new_page(java_script=False)
    page.goto("")
    assert not page.locator("#quiz-head-width form").is_visible()  # no dead form without its script
    page.locator("#quiz-head-width summary").click()
    assert "512 / 8 = 64" in page.locator("#quiz-head-width details").inner_text()
    page.locator("#quiz-why-heads summary").click()
    notes = page.locator("#quiz-why-heads .quiz-explanations li")
    assert notes.count() == 4 and all(notes.nth(i).is_visible() for i in range(4))


def test_quizzes_survive_instant_navigation(lesson):
    lesson.evaluate("() => { window.mhaSamePage = true; }")  # lost if the browser reloads instead
    lesson.locator(".md-nav__link", has_text="The causal mask").first.click()
    lesson.wait_for_url("**/causal-mask/")
    lesson.go_back()
    lesson.wait_for_selector(".quiz[data-quiz-ready]")
    assert lesson.evaluate("() => window.mhaSamePage === true"), "Material reloaded the page instead of swapping it"
    box = lesson.locator("#quiz-head-width-input")
    box.fill("64")
    box.press("Enter")
    assert feedback(lesson, "quiz-head-width").startswith("\u2713 Correct.")
