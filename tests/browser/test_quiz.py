"""The quizzes in Chromium: every quiz of every content page answered right and wrong (every
option, every listed wrong value), by mouse and keyboard, and the text a reader sees (and a
screen reader hears) checked, not just the DOM state; and what the pages show without JavaScript."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from sitekit import COURSE_QUIZZES, DOCS

pytestmark = pytest.mark.browser

SOURCE = BeautifulSoup((DOCS / "_includes" / "quizzes.md").read_text(encoding="utf-8"), "html.parser")
CHOICE = {
    q["id"]: {li["data-option"]: li["data-correct"] == "true" for li in q.select(".quiz-explanations li")}
    for q in SOURCE.select("[data-quiz=choice]")
}
NUMERIC = {q["id"]: q["data-answer"] for q in SOURCE.select("[data-quiz=numeric]")}
# The follow-up pages and the include that holds each one's quizzes (the lesson is tested below).
FOLLOW_UPS = {page.removesuffix(".md") + "/": include for page, include in COURSE_QUIZZES.items() if page != "index.md"}


# A wrong answer on each follow-up quiz and words of the misconception its feedback must name.
MISCONCEPTIONS = {
    "worked-example/": [("quiz-scale", "a", "512 is the model's width"),
                        ("quiz-axis", "b", "A column holds the weight one key receives")],
    "code/": [("quiz-slice", "b", "where head 3's output sits in the concatenation"),
              ("quiz-view", "a", "Right shape, wrong numbers"),
              ("quiz-params", "2101248", "is twice the 8-head count")],
    "positions/": [("quiz-pos-shuffle", "b", "mean nothing to the layer"),
                   ("quiz-pos-rope", "a", "by the same extra amount"),
                   ("quiz-pos-mask", "a", "a shuffle changes what most tokens can see")],
    "block/": [("quiz-block-reads", "a", "the stream keeps what it carried"),
               ("quiz-block-recurrence", "a", "attention reads them all at once")],
    "causal-mask/": [("quiz-causal-count", "15", "counts only the entries below the diagonal"),
                     ("quiz-causal-polarity", "b", "That mixes the two readings")],
    "inference/": [("quiz-inf-kv-token", "512", "counts all 32 query heads"),
                   ("quiz-inf-kv-context", "1", "is the size in GiB"),
                   ("quiz-inf-gqa", "0", "is multi-query attention"),
                   ("quiz-causal-is-causal", "a", "aligns its triangle top-left")],
    "tiny-model/": [("quiz-rh-circuit", "c", "A clean pattern is not a spare part"),
                    ("quiz-rh-loss", "b", "a confident wrong guess costs more than an even one"),
                    ("quiz-rh-prune", "6", "keeps only what the circuit needs")],
    "real-models/": [("quiz-rm-start", "b", "Under the causal mask the start token attends only to itself"),
                     ("quiz-rm-control", "a", "The median is a typical draw, not every draw")],
    "benchmark/": [("quiz-bench-loop", "d", "gets the overhead backwards"),
                   ("quiz-bench-fastest", "a", "A lower median is no win when the blocks overlap"),
                   ("quiz-bench-memory", "c", "Every cell of the CPU run is float32")],
}


def source_ids(include: str) -> list[str]:
    text = (DOCS / "_includes" / include).read_text(encoding="utf-8")
    return [q["id"] for q in BeautifulSoup(text, "html.parser").select("[data-quiz]")]

# The text a sighted reader sees: the TeX annotation MathML keeps (never drawn) removed.
VISIBLE_TEXT_JS = """el => {
  const copy = el.cloneNode(true);
  copy.querySelectorAll('annotation').forEach(n => n.remove());
  return copy.textContent.replace(/\\s+/g, ' ').trim();
}"""
# What assistive technology reads: anything aria-hidden and the TeX annotation removed.
SPOKEN_TEXT_JS = """el => {
  const copy = el.cloneNode(true);
  copy.querySelectorAll('[aria-hidden="true"], annotation').forEach(n => n.remove());
  return copy.textContent.replace(/\\s+/g, ' ').trim();
}"""
# Every formula inside `el`: one MathML element, which the eye and the ear both read, laid out as
# MathML (a <math> box of its own, not inline text), with no TeX source left beside it.
FORMULAS_JS = """el => [...el.querySelectorAll('.katex')].map(k => ({
  mathml: k.querySelectorAll(':scope > math').length,
  laidOut: [...k.querySelectorAll(':scope > math')].every(m => getComputedStyle(m).display.includes('math')),
  besides: [...(k.closest('.arithmatex') || k).childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim(),
}))"""
TEX = re.compile(r"\\[a-zA-Z]+|\$|\^\{|_\{|\\\(|\\\)")


def choice_key(page, quiz_id: str) -> dict[str, bool]:
    """Option -> is it right, as the built page marks it (placeholders filled)."""
    return page.locator(f"#{quiz_id} .quiz-explanations li").evaluate_all(
        "lis => Object.fromEntries(lis.map(li => [li.dataset.option, li.dataset.correct === 'true']))"
    )


def value_notes(page, quiz_id: str) -> dict[str, int]:
    """Each wrong value a numeric quiz has a note on -> the index of its note."""
    return page.locator(f"#{quiz_id} .quiz-values li").evaluate_all(
        "lis => Object.fromEntries(lis.flatMap((li, i) => li.dataset.value.split(/\\s+/).map(v => [v, i])))"
    )


def shown(page, quiz_id: str, js: str = VISIBLE_TEXT_JS) -> str:
    return page.locator(f"#{quiz_id} .quiz-feedback").evaluate(js)


# What a quiz shows after a check, read in one call: its feedback as seen and as spoken, the
# live region's attributes, its formulas, each option's note as seen and as spoken, the options
# marked right or wrong (value, label), and whether the notes are open.
QUIZ_STATE_JS = f"""quiz => {{
  const visible = {VISIBLE_TEXT_JS}, spoken = {SPOKEN_TEXT_JS}, formulas = {FORMULAS_JS};
  const feedback = quiz.querySelector('.quiz-feedback');
  const note = (li, read) => read(li).replace(/^[A-D]: (yes|no)\\.\\s*/, '');
  return {{
    visible: visible(feedback), spoken: spoken(feedback), formulas: formulas(feedback),
    live: [feedback.getAttribute('aria-live'), feedback.getAttribute('role')],
    notes: Object.fromEntries([...quiz.querySelectorAll('.quiz-explanations li')].map(
      li => [li.dataset.option, [note(li, visible), note(li, spoken)]])),
    marked: [...quiz.querySelectorAll('.quiz-option[data-verdict]')].map(o => [
      o.dataset.verdict, o.querySelector('input').value, o.querySelector('label').innerText]),
    open: quiz.querySelector('details').open,
  }};
}}"""


# A numeric quiz's note on its wrong value number `index`, as seen and as spoken.
VALUE_NOTE_JS = f"""(quiz, index) => {{
  const note = quiz.querySelectorAll('.quiz-values li')[index];
  return [({VISIBLE_TEXT_JS})(note), ({SPOKEN_TEXT_JS})(note)];
}}"""


def assert_reads_cleanly(page, quiz_id: str) -> None:
    assert_state_reads_cleanly(page.locator(f"#{quiz_id}").evaluate(QUIZ_STATE_JS))


def assert_state_reads_cleanly(state: dict) -> None:
    """The feedback of a QUIZ_STATE_JS reading: a polite live region, no TeX seen or heard, and
    each formula one MathML element, laid out, with nothing beside it."""
    assert state["live"] == ["polite", "status"]
    assert not TEX.search(state["visible"]), f"raw TeX on screen: {state['visible']!r}"
    assert not TEX.search(state["spoken"]), f"raw TeX for screen readers: {state['spoken']!r}"
    for formula in state["formulas"]:
        assert formula == {"mathml": 1, "laidOut": True, "besides": ""}, formula


@pytest.fixture
def lesson(page):
    page.goto("")
    page.wait_for_selector(".quiz[data-quiz-ready]")
    return page


def test_the_page_has_every_quiz_of_the_source(lesson):
    ids = lesson.locator(".quiz[data-quiz]").evaluate_all("qs => qs.map(q => q.id)")
    assert ids == [q["id"] for q in SOURCE.select("[data-quiz]")] and len(ids) >= 3
    assert lesson.locator(".quiz[data-quiz-ready]").count() == len(ids)


def test_every_option_by_mouse_shows_its_own_explanation(lesson):
    # One page load for all quizzes: the lesson is heavy, and the suite has a time budget.
    for quiz_id in CHOICE:
        answer_every_option_by_mouse(lesson, quiz_id)


def answer_every_option_by_mouse(lesson, quiz_id: str) -> None:
    quiz = lesson.locator(f"#{quiz_id}")
    quiz.scroll_into_view_if_needed()
    quiz.locator("[data-quiz-check]").click()
    assert shown(lesson, quiz_id) == "Choose an answer first."
    for option, correct in choice_key(lesson, quiz_id).items():
        quiz.locator(f"label[for={quiz_id}-{option}]").click()
        quiz.locator("[data-quiz-check]").click()
        state = quiz.evaluate(QUIZ_STATE_JS)
        mark = "\u2713 Correct." if correct else "\u2717 Not quite."
        seen, heard = state["notes"][option]
        assert state["visible"] == f"{mark} {seen}"
        assert state["spoken"] == f"{mark} {heard}"
        assert_state_reads_cleanly(state)
        # One option marked (the previous mark is cleared): this one, right or wrong, in its label.
        assert len(state["marked"]) == 1, state["marked"]
        verdict, value, label = state["marked"][0]
        assert (verdict, value) == ("right" if correct else "wrong", option)
        assert label.endswith(" \u2713 correct" if correct else " \u2717 not this one"), label
        if correct:
            assert state["open"], "a right answer opens the notes on every option"


def test_quiz_2_feedback_reads_as_written_not_as_garbled_tex(lesson):
    """The reported bug: 'Scoring costs 2T2dk2T^2 d_k2T2dk ...' from textContent of KaTeX output."""
    quiz = lesson.locator("#quiz-why-heads")
    quiz.locator("label[for=quiz-why-heads-a]").click()
    quiz.locator("[data-quiz-check]").click()
    visible = shown(lesson, "quiz-why-heads")
    assert "T^2" not in visible and "d_k" not in visible and "2T2dk2T" not in visible
    assert visible.count("2T2dk") == 1  # the formula 2T^2 d_k, rendered once (superscript, subscript)
    assert "add up to the 2T2dmodel of one wide head" in visible
    # The verdict mark is a real element, bold, and the explanation keeps its formulas as MathML.
    assert quiz.locator(".quiz-feedback strong.quiz-mark").inner_text() == "\u2717 Not quite."
    assert quiz.locator(".quiz-feedback .katex").count() == quiz.locator("li[data-option=a] .katex").count() >= 4


def test_every_choice_quiz_by_keyboard(lesson):
    for quiz_id in CHOICE:
        answer_right_then_wrong_by_keyboard(lesson, quiz_id)


def answer_right_then_wrong_by_keyboard(lesson, quiz_id: str) -> None:
    key = choice_key(lesson, quiz_id)
    options = list(key)
    right = next(option for option, correct in key.items() if correct)
    lesson.locator(f"#{quiz_id}-{options[0]}").focus()
    lesson.keyboard.press("Space")  # select the focused radio
    for _ in range(options.index(right)):
        lesson.keyboard.press("ArrowDown")  # moving within a radio group also selects
    assert lesson.evaluate("document.activeElement.id") == f"{quiz_id}-{right}"
    lesson.keyboard.press("Tab")
    assert lesson.evaluate("document.activeElement.dataset.quizCheck") == ""
    lesson.keyboard.press("Enter")
    assert shown(lesson, quiz_id).startswith("\u2713 Correct.")
    # And a wrong one, with Space on the button this time.
    wrong = next(option for option in options if option != right)
    lesson.locator(f"#{quiz_id}-{wrong}").focus()
    lesson.keyboard.press("Space")
    lesson.keyboard.press("Tab")
    lesson.keyboard.press("Space")
    assert shown(lesson, quiz_id).startswith("\u2717 Not quite.")
    assert_reads_cleanly(lesson, quiz_id)


def test_tab_reaches_the_first_choice_quiz_from_the_first_numeric_one(lesson):
    lesson.locator("#quiz-head-width-input").focus()  # the choice quiz comes later, after the formula and the explorer
    for _ in range(200):
        lesson.keyboard.press("Tab")
        if lesson.evaluate("document.activeElement.name") == "quiz-why-heads":
            break
    else:
        pytest.fail("the radio group cannot be reached with Tab")


def test_numeric_quizzes_by_keyboard_and_mouse(lesson):
    for quiz_id in NUMERIC:
        answer_numeric(lesson, quiz_id)


def answer_numeric(lesson, quiz_id: str) -> None:
    box = lesson.locator(f"#{quiz_id}-input")
    answer = lesson.locator(f"#{quiz_id}").get_attribute("data-answer")
    notes = value_notes(lesson, quiz_id)
    assert len(notes) >= 2 and answer not in notes
    # Each typical wrong value gets its own note, which names the mistake behind it.
    quiz = lesson.locator(f"#{quiz_id}")
    for value, index in notes.items():
        box.fill(f"{int(value):,}")  # typed with digit groups; the note is found all the same
        box.press("Enter")
        state = quiz.evaluate(QUIZ_STATE_JS)
        seen, heard = quiz.evaluate(VALUE_NOTE_JS, index)
        assert state["visible"] == f"\u2717 Not quite. {seen}"
        assert state["spoken"] == f"\u2717 Not quite. {heard}"
        assert f" {value} " in state["visible"].replace(",", "")  # the note names the value it is about
        assert_state_reads_cleanly(state)
    # Any other wrong value gets the hint.
    other = next(v for v in ("128", "3", "7", "11") if v != answer and v not in notes)
    box.fill(other)
    box.press("Enter")
    text = shown(lesson, quiz_id)
    hint = lesson.locator(f"#{quiz_id} .quiz-hint").evaluate(VISIBLE_TEXT_JS)
    assert text == f"\u2717 Not quite. {other} is not it. {hint}"
    assert_reads_cleanly(lesson, quiz_id)

    box.fill("sixty-four")
    box.press("Enter")
    assert shown(lesson, quiz_id).startswith("Type the number in digits only, such as 4096")
    assert box.get_attribute("aria-invalid") == "true"
    box.fill("  ")
    box.press("Enter")
    assert shown(lesson, quiz_id) == "Type a number first."

    grouped = f"{int(answer):,}".replace(",", " ")  # digit groups are accepted: 1 050 624
    box.fill(f" {grouped} ")
    lesson.locator(f"#{quiz_id} button[type=submit]").click()
    why = lesson.locator(f"#{quiz_id} .quiz-why").evaluate(VISIBLE_TEXT_JS)
    assert shown(lesson, quiz_id) == f"\u2713 Correct. {why}"
    assert box.get_attribute("aria-invalid") is None
    assert_reads_cleanly(lesson, quiz_id)
    assert lesson.url.endswith("/"), "the form must not navigate"


def test_head_width_names_the_mistake_behind_each_wrong_value(lesson):
    box = lesson.locator("#quiz-head-width-input")
    for typed, words in (("512", "512 is dmodel, the width of the whole model"), ("4096", "4,096 is 512×8: the width multiplied"),
                         ("8", "8 is h, the number of heads")):
        box.fill(typed)
        box.press("Enter")
        text = shown(lesson, "quiz-head-width").replace("\u200b", "")  # KaTeX's zero-width spaces
        assert text.startswith(f"\u2717 Not quite. {words}"), text


def test_head_width_feedback_text(lesson):
    box = lesson.locator("#quiz-head-width-input")
    box.fill("64")
    box.press("Enter")
    assert shown(lesson, "quiz-head-width").startswith("\u2713 Correct. 64. Each head gets an equal share")
    assert "512/8=64" in shown(lesson, "quiz-head-width").replace(" ", "")


def test_recall_card_reveals_then_self_checks(lesson):
    quiz = lesson.locator("#quiz-three-moves")
    quiz.locator("textarea").fill("split, attend, concat + project")
    assert not quiz.locator("[data-quiz-self-check]").is_visible()
    quiz.locator("summary").focus()
    lesson.keyboard.press("Enter")  # <summary> opens with the keyboard
    assert quiz.locator("details").evaluate("d => d.open")
    assert "Concatenate and project" in quiz.locator("details").inner_text()
    quiz.locator("[data-verdict=not-yet]").click()
    # The reader's own "not yet" is not graded as a wrong answer.
    assert shown(lesson, "quiz-three-moves").startswith("\u21bb Worth another pass. Reread the section")
    assert "Split, attend, concatenate, project" in shown(lesson, "quiz-three-moves")
    quiz.locator("[data-verdict=had-it]").focus()
    lesson.keyboard.press("Enter")
    assert shown(lesson, "quiz-three-moves").startswith("\u2713 Correct.")


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_verdict_borders_have_3_to_1_contrast(new_page, scheme):
    page = new_page(color_scheme=scheme)
    page.goto("")
    page.wait_for_selector(".quiz[data-quiz-ready]")
    quiz = page.locator("#quiz-why-heads")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    for option, verdict in (("a", "wrong"), ("b", "right")):
        quiz.locator(f"label[for=quiz-why-heads-{option}]").click()
        quiz.locator("[data-quiz-check]").click()
        marked = quiz.locator(f".quiz-option[data-verdict={verdict}]")
        colour = marked.evaluate("el => getComputedStyle(el).borderTopColor")
        assert _contrast(colour, background) >= 3, f"{scheme} {verdict} border {colour} on {background}"
        feedback = quiz.locator(".quiz-feedback").evaluate("el => getComputedStyle(el).borderLeftColor")
        assert _contrast(feedback, background) >= 3


# One of each kind of quiz control; the lesson has every kind.
QUIZ_CONTROLS = {
    "answer box": ".quiz input[type=text]",
    "option": ".quiz input[type=radio]",
    "recall box": ".quiz textarea",
    "Check (numeric)": ".quiz button[type=submit]",
    "Check (choice)": ".quiz [data-quiz-check]",
    "self-check": ".quiz-self-check button",
    "answer": ".quiz summary",
}
# The control focused as a keyboard user focuses it (a key was pressed first, so :focus-visible
# applies), its outline, and the colour the ring is drawn over: the backgrounds behind the control
# (it lies outside it), composited from the first opaque one up (Material tints some in alpha).
FOCUS_RING_JS = """el => {
  el.scrollIntoView({ block: 'center' });
  el.focus();
  const style = getComputedStyle(el);
  const layers = [];
  for (let node = el.parentElement; node; node = node.parentElement) {
    const [r, g, b, a = 1] = getComputedStyle(node).backgroundColor.match(/[\\d.]+/g).map(Number);
    if (a > 0) layers.push([r, g, b, a]);
    if (a >= 1) break;
  }
  let under = [255, 255, 255];
  for (const [r, g, b, a] of layers.reverse()) under = [r, g, b].map((c, i) => c * a + under[i] * (1 - a));
  return { visible: el.matches(':focus-visible'), focused: document.activeElement === el,
           style: style.outlineStyle, width: parseFloat(style.outlineWidth), colour: style.outlineColor,
           under: `rgb(${under.map(Math.round).join(', ')})` };
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_quiz_control_shows_a_focus_ring(new_page, scheme):
    """WCAG 2.4.7: a focused quiz control is drawn unlike an unfocused one. Material removes the
    outline of inputs and leaves the others the browser's 1 px ring; quiz.css gives each a 2 px
    ring whose colour stands 3:1 against what it is drawn over (WCAG 1.4.11)."""
    page = new_page(color_scheme=scheme)
    page.goto("")
    page.wait_for_selector(".quiz[data-quiz-ready]")
    assert page.evaluate("document.body.dataset.mdColorScheme") == ("slate" if scheme == "dark" else "default")
    page.locator(".quiz details:has(.quiz-self-check) summary").first.click()  # shows the self-check buttons
    for kind, selector in QUIZ_CONTROLS.items():
        page.keyboard.press("Shift")
        ring = page.locator(selector).first.evaluate(FOCUS_RING_JS)
        assert ring["focused"] and ring["visible"], f"{kind}: not focused as by keyboard"
        assert ring["style"] not in ("none", "hidden") and ring["width"] >= 2, f"{scheme} {kind}: no ring: {ring}"
        assert ring["colour"].startswith("rgb("), f"{scheme} {kind}: a see-through ring {ring['colour']}"
        assert _contrast(ring["colour"], ring["under"]) >= 3, f"{scheme} {kind}: ring {ring['colour']} on {ring['under']}"


def test_print_shows_questions_options_and_right_explanation_as_text(lesson):
    quiz = lesson.locator("#quiz-why-heads")
    quiz.locator("label[for=quiz-why-heads-a]").click()
    quiz.locator("[data-quiz-check]").click()  # feedback and a verdict mark exist before printing
    lesson.emulate_media(media="print")
    for quiz_id in [q["id"] for q in SOURCE.select("[data-quiz]")]:
        quiz = lesson.locator(f"#{quiz_id}")
        live = quiz.locator("input, button, textarea, form, .quiz-feedback, summary, .quiz-option-verdict")
        assert all(not live.nth(i).is_visible() for i in range(live.count())), f"{quiz_id}: controls print"
        text = quiz.inner_text()
        if quiz_id in CHOICE:
            right = next(option for option, correct in CHOICE[quiz_id].items() if correct)
            for option in CHOICE[quiz_id]:
                assert quiz.locator(f"label[for={quiz_id}-{option}]").is_visible()
                assert quiz.locator(f"li[data-option={option}]").is_visible() == (option == right)
            assert f"{right.upper()}: yes." in text
        elif quiz_id in NUMERIC:
            assert quiz.locator(".quiz-why").is_visible()
            assert not quiz.locator(".quiz-values").is_visible()  # only the right answer prints
        else:
            assert "Concatenate and project" in text


# A quiz on a page without JavaScript, read in one call: its visible controls (there should be
# none: they need the script), whether its notes are open, each note's visibility, its text, and
# the answer's explanation if shown. Visible as Playwright's is_visible() means it: a box with an
# area, and not visibility: hidden.
NO_SCRIPT_QUIZ_JS = """quiz => {
  const visible = (el) => { const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  const why = quiz.querySelector('.quiz-why');
  return {
    controls: [...quiz.querySelectorAll('form, [data-quiz-check]')].filter(visible).map((el) => el.tagName),
    open: quiz.querySelector('details').open,
    notes: [...quiz.querySelectorAll('.quiz-explanations li, .quiz-values li')].map(visible),
    text: quiz.innerText, kind: quiz.dataset.quiz, answer: quiz.dataset.answer,
    why: why && visible(why) ? why.innerText : null,
  };
}"""


def test_quizzes_readable_without_javascript(new_page):
    page = new_page(java_script=False)
    page.goto("")
    assert not page.locator("#quiz-head-width form").is_visible()  # no dead form without its script
    assert not page.locator("#quiz-why-heads [data-quiz-check]").is_visible()
    page.locator("#quiz-head-width summary").click()
    details = page.locator("#quiz-head-width details")
    # The formula is rendered at build time: its TeX rides along only as MathML's annotation.
    assert "512 / 8 = 64" in details.locator(".katex annotation").first.text_content()
    assert details.locator(".katex math").first.is_visible()
    assert "$" not in details.inner_text() and "\\text" not in details.inner_text()
    # The notes on typical wrong values sit in the same box as the answer.
    values = details.locator(".quiz-values li")
    assert values.count() == 3 and all(values.nth(i).is_visible() for i in range(3))
    assert values.first.inner_text().startswith("512 is ")
    for quiz_id in CHOICE:
        page.locator(f"#{quiz_id} summary").click()
        notes = page.locator(f"#{quiz_id} .quiz-explanations li")
        assert notes.count() == 4 and all(notes.nth(i).is_visible() for i in range(4))


def test_follow_up_quizzes_readable_without_javascript(new_page):
    """One context, no JavaScript, every follow-up page: no dead controls, and every answer,
    option note and wrong-value note one click away."""
    page = new_page(java_script=False)
    for path, include in FOLLOW_UPS.items():
        page.goto(path)
        ids = page.locator(".quiz[data-quiz]").evaluate_all("qs => qs.map(q => q.id)")
        assert ids == source_ids(include) and len(ids) >= 2, path
        for quiz_id in ids:
            quiz = page.locator(f"#{quiz_id}")
            before = quiz.evaluate(NO_SCRIPT_QUIZ_JS)
            assert before["controls"] == [] and not before["open"], (quiz_id, before)
            quiz.locator("summary").click()
            after = quiz.evaluate(NO_SCRIPT_QUIZ_JS)
            assert after["open"] and len(after["notes"]) >= 2 and all(after["notes"]), (quiz_id, after["notes"])
            assert "{{" not in after["text"] and "$" not in after["text"] and "\\(" not in after["text"], quiz_id
            if after["kind"] == "numeric":
                assert after["why"] is not None and after["why"].startswith(after["answer"][0]), quiz_id


@pytest.mark.parametrize("path", list(FOLLOW_UPS))
def test_follow_up_page_quizzes_by_mouse_and_keyboard(new_page, path):
    """One page load per page: every option of every choice quiz by mouse, every listed wrong value
    and the right one of every numeric quiz, and the first choice quiz again by keyboard."""
    page = new_page()
    page.goto(path)
    ids = page.locator(".quiz[data-quiz]").evaluate_all("qs => qs.map(q => q.id)")
    assert ids == source_ids(FOLLOW_UPS[path]) and len(ids) >= 2
    page.wait_for_function(f"() => document.querySelectorAll('.quiz[data-quiz-ready]').length === {len(ids)}")
    kinds = {quiz_id: page.locator(f"#{quiz_id}").get_attribute("data-quiz") for quiz_id in ids}
    for quiz_id, kind in kinds.items():
        if kind == "choice":
            key = choice_key(page, quiz_id)
            assert len(key) == 4 and sum(key.values()) == 1
            answer_every_option_by_mouse(page, quiz_id)
        else:
            assert kind == "numeric"
            answer_numeric(page, quiz_id)
    # The numeric answers above went in with Enter; a choice quiz needs the arrow keys and Tab.
    first_choice = next((quiz_id for quiz_id, kind in kinds.items() if kind == "choice"), None)
    if first_choice:
        answer_right_then_wrong_by_keyboard(page, first_choice)
    for quiz_id, wrong, words in MISCONCEPTIONS[path]:
        if kinds[quiz_id] == "choice":
            page.locator(f"label[for={quiz_id}-{wrong}]").click()
            page.locator(f"#{quiz_id} [data-quiz-check]").click()
        else:
            page.locator(f"#{quiz_id}-input").fill(wrong)
            page.locator(f"#{quiz_id}-input").press("Enter")
        assert shown(page, quiz_id).startswith("\u2717 Not quite.") and words in shown(page, quiz_id), shown(page, quiz_id)
    assert page.url.endswith(path)
    assert page.console_errors == []


def test_quizzes_work_after_leaving_and_coming_back(lesson):
    lesson.locator(".md-nav__link", has_text="The causal mask").first.click()
    lesson.wait_for_url("**/causal-mask/")
    lesson.go_back()
    lesson.wait_for_selector(".quiz[data-quiz-ready]")
    box = lesson.locator("#quiz-head-width-input")
    box.fill("64")
    box.press("Enter")
    assert shown(lesson, "quiz-head-width").startswith("\u2713 Correct.")
    quiz = lesson.locator("#quiz-why-heads")
    quiz.locator("label[for=quiz-why-heads-b]").click()
    quiz.locator("[data-quiz-check]").click()
    assert shown(lesson, "quiz-why-heads").startswith("\u2713 Correct.")
    assert_reads_cleanly(lesson, "quiz-why-heads")


# For each formula followed by punctuation in `root`: is the punctuation on the line where the
# formula ends? (mha_site/build/katex.py wraps the two in .katex-nowrap and joins them with U+2060.)
PUNCTUATION_ON_FORMULA_LINE = """(root) => [...root.querySelectorAll('.katex-nowrap')]
    .filter((wrap) => wrap.lastChild.nodeType === Node.TEXT_NODE).map((wrap) => {
  const last = wrap.querySelector('math').getBoundingClientRect();
  const text = [...wrap.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).pop();
  const range = document.createRange();
  range.setStart(text, text.textContent.length - 1);
  range.setEnd(text, text.textContent.length);
  const mark = range.getBoundingClientRect();
  return [text.textContent.trim(), mark.top < last.bottom - 2 && mark.left >= last.left];
})"""


def test_punctuation_after_a_formula_never_starts_a_line(new_page):
    """The review saw quiz 2's feedback at 375 px break a line between W_i^Q and its comma,
    although the two sat in a nowrap wrapper: Chromium still broke after the formula."""
    page = new_page(width=375, height=812)
    page.goto("")
    page.wait_for_selector(".quiz[data-quiz-ready]")
    quiz = page.locator("#quiz-why-heads")
    quiz.locator("label[for=quiz-why-heads-b]").click()
    quiz.locator("[data-quiz-check]").click()
    feedback = quiz.locator(".quiz-feedback")
    assert feedback.locator(".katex-nowrap").count() >= 2
    # Every line-break position the feedback can meet, read in one call (a layout per width).
    sweep = feedback.evaluate(f"""(p, widths) => widths.map((width) => {{
      p.style.width = `${{width}}px`;
      return [width, ({PUNCTUATION_ON_FORMULA_LINE})(p)];
    }})""", list(range(100, 344, 3)))
    assert len(sweep) == 82 and all(len(marks) >= 1 for _, marks in sweep)
    for width, marks in sweep:
        for punctuation, on_line in marks:
            assert on_line, (width, punctuation)
    assert page.console_errors == []


def test_a_short_formula_never_breaks_across_lines(new_page):
    """A fresh review saw quiz 1 at 375 px end a line with "h =" and start the next with "8":
    KaTeX's HTML let a line break after a relation. MathML is laid out as one box."""
    page = new_page(width=375, height=812)
    page.goto("")
    question = page.locator("#quiz-head-width p").first
    assert question.locator(".arithmatex").count() == 3
    # Every line-break position the question can meet, read in one call (a layout per width).
    sweep = question.evaluate("""(p, widths) => widths.map((width) => {
      p.style.width = `${width}px`;
      return [width, [...p.querySelectorAll('.arithmatex')].map((f) => [f.textContent.slice(-12), f.getClientRects().length])];
    })""", list(range(100, 344, 3)))
    assert len(sweep) == 82
    for width, lines in sweep:
        assert len(lines) == 3 and all(count == 1 for _, count in lines), (width, lines)
    assert page.console_errors == []


@pytest.mark.parametrize("path", ["", "causal-mask/", "inference/", "tiny-model/", "real-models/", "benchmark/",
                                  "notebooks/mha-walkthrough/"])
def test_no_formula_in_the_text_runs_past_a_320_px_screen(new_page, path):
    """A formula is one MathML box, which no line breaks inside: an inline formula wider than the
    column would run past the edge of the screen (a displayed one scrolls in its own box)."""
    page = new_page(width=320, height=700)
    page.goto(path)
    overflowing = page.evaluate("""() => {
      const edge = document.querySelector('article').getBoundingClientRect().right;
      // A table scrolls sideways on a narrow screen (a11y.js), so what is in one may lie past the edge.
      return [...document.querySelectorAll('article span.arithmatex')]
        .filter((formula) => !formula.closest('.md-typeset__scrollwrap, div.arithmatex'))
        .filter((formula) => formula.getBoundingClientRect().right > edge + 0.5)
        .map((formula) => formula.textContent.slice(0, 40));
    }""")
    assert page.locator("article span.arithmatex").count() > 10
    assert overflowing == []


def test_quizzes_set_up_without_materials_bundle(browser, site_url):
    """quiz.js subscribes to Material's document$ when the bundle has run, and otherwise sets up
    from the parsed page: scripts may arrive in either order. Here the bundle never arrives (a
    plain context: the page's loader, which waits for the bundle, never reports "loaded")."""
    context = browser.new_context(base_url=site_url)
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.route("**/assets/javascripts/bundle.*.min.js", lambda route: route.abort())
        page.goto("causal-mask/", wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('.quiz[data-quiz-ready]').length === 3")
        assert page.evaluate("typeof window.document$") == "undefined"
        box = page.locator("#quiz-causal-count-input")
        box.fill("15")
        box.press("Enter")
        assert shown(page, "quiz-causal-count").startswith("\u2717 Not quite. 15 counts only the entries below the diagonal")
        page.locator("label[for=quiz-causal-polarity-c]").click()
        page.locator("#quiz-causal-polarity [data-quiz-check]").click()
        assert shown(page, "quiz-causal-polarity").startswith("\u2713 Correct.")
        assert not [error for error in errors if "quiz" in error]
    finally:
        context.close()
