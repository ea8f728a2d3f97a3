"""The live-heads widget on "Heads that learn", driven in Chromium (issue 12).

The JavaScript forward pass is replayed on the committed test vectors (made by
mha_ref's own model, see mha_site.tiny_model.export) and must match them within 1e-4,
ablated heads included. The induction claims of the page are then checked
through the widget's own markup (data-head / data-key / data-weight), by keyboard.
"""

from __future__ import annotations

import json
import random

import pytest

from mha_site.tiny_model import ASSETS
from mha_site.tiny_model.export import VECTORS, token_symbols
from sitekit import ROOT, axe_findings

pytestmark = pytest.mark.browser

PAGE = "tiny-model/"
TOLERANCE = 1e-4  # the bound for logits and attention weights
MANIFEST = json.loads((ROOT / ASSETS / "model.json").read_text(encoding="utf-8"))
SYMBOLS = token_symbols(MANIFEST["config"]["vocab_size"])
INDUCTION = [f"L{layer}H{head}" for layer, head in MANIFEST["induction_heads"]]
PREVIOUS = "L{}H{}".format(*MANIFEST["previous_token_head"])

COMPARE_JS = """async (doc) => {
  const root = document.querySelector('[data-live-heads]');
  const model = await mhaLiveHeads.loadModel(root.dataset.modelSrc);
  const V = model.config.vocab_size;
  const report = [];
  for (const c of doc.cases) {
    const r = mhaLiveHeads.forward(model, c.tokens, c.head_mask);
    const T = c.tokens.length;
    let logits = 0, weights = 0, compared = 0;
    for (let t = 0; t < T; t++) for (let j = 0; j < V; j++) {
      logits = Math.max(logits, Math.abs(r.logits[t * V + j] - c.logits[t][j])); compared++;
    }
    c.weights.forEach((layer, l) => layer.forEach((head, h) => head.forEach((row, t) => {
      for (let s = 0; s < T; s++) {  // keys after the query must carry exactly 0
        const want = s < row.length ? row[s] : 0;
        weights = Math.max(weights, Math.abs(r.weights[l][h][t * r.stride + s] - want)); compared++;
      }
    })));
    report.push({name: c.name, logits, weights, compared, expected: T * V + c.weights.length * c.weights[0].length * T * T});
  }
  return report;
}"""

STATE_JS = """() => {
  const root = document.querySelector('[data-live-heads]');
  const heads = {};
  root.querySelectorAll('[data-head][data-key]').forEach(cell => {
    (heads[cell.dataset.head] = heads[cell.dataset.head] || []).push([Number(cell.dataset.key), Number(cell.dataset.weight)]);
  });
  const top = [...root.querySelectorAll('[data-live-prediction] li')].map(li => [li.dataset.token, Number(li.dataset.probability)]);
  return {query: Number(root.dataset.liveQuery), heads, top};
}"""



TOP_BAR_JS = """() => {
  const row = document.querySelector('[data-row-head="L1H0"]');
  const top = row.querySelector('[data-top]'), canvas = row.querySelector('canvas');
  const ratio = canvas.width / canvas.getBoundingClientRect().width;
  const cell = top.getBoundingClientRect(), box = canvas.getBoundingClientRect();
  const x = Math.round((cell.left + cell.width / 2 - box.left) * ratio), y = Math.round((box.height - 4) * ratio);
  const [r, g, b, a] = canvas.getContext('2d').getImageData(x, y, 1, 1).data;
  const bg = getComputedStyle(document.body).backgroundColor.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const drawn = [r, g, b].map((v, i) => v * a / 255 + bg[i] * (1 - a / 255));
  const lum = c => { const [R, G, B] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * R + 0.7152 * G + 0.0722 * B; };
  const [hi, lo] = [lum(drawn), lum(bg)].sort((p, q) => q - p);
  return {colour: drawn.map(Math.round), contrast: (hi + 0.05) / (lo + 0.05)};
}"""


def top_bar(page) -> dict:
    """The colour of the bar drawn for L1H0's top key (composited on the page) and its contrast with the page."""
    return page.evaluate(TOP_BAR_JS)


def open_widget(get_page, **options):
    """The widget's page, loaded afresh (in a page from ``get_page``: conftest's ``shared_page`` or
    ``new_page``), with the widget built. The load waits for the page's scripts (tests/conftest.py),
    then for the widget's own ready mark."""
    page = get_page(**options)
    page.goto(PAGE)
    page.locator("[data-live-heads]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-live-heads][data-live-ready]")
    return page


def widget_state(page) -> dict:
    return page.evaluate(STATE_JS)


def argmax_key(cells: list[list[float]]) -> tuple[int, float]:
    key, weight = max(cells, key=lambda kw: kw[1])
    return int(key), weight


def test_js_forward_pass_equals_the_reference(shared_page) -> None:
    document = json.loads((ROOT / VECTORS).read_text(encoding="utf-8"))
    page = open_widget(shared_page)
    report = page.evaluate(COMPARE_JS, document)
    assert [r["name"] for r in report] == [c["name"] for c in document["cases"]]
    assert any(0.0 in row for case in document["cases"] for row in case["head_mask"]), "no ablated head is replayed"
    for r in report:
        assert r["compared"] == r["expected"], r
        assert r["logits"] <= TOLERANCE and r["weights"] <= TOLERANCE, r
    print("max |JS - reference|:", max(r["logits"] for r in report), "(logits)", max(r["weights"] for r in report), "(weights)")
    assert page.off_origin == [] and page.console_errors == []


INCREMENTAL_JS = """async (doc) => {
  const root = document.querySelector('[data-live-heads]');
  const model = await mhaLiveHeads.loadModel(root.dataset.modelSrc);
  const base = doc.cases[0].tokens, on = doc.cases[0].head_mask, off = doc.cases[1].head_mask;
  // Edits as a reader makes them: append, delete, change a middle token, shorten, switch a head, grow again.
  const steps = [[base.slice(0, 10), on], [base.slice(0, 11), on], [base.slice(0, 30), on], [base.slice(0, 29), on],
    [[...base.slice(0, 5), (base[5] + 1) % 64, ...base.slice(6, 40)], on], [base.slice(0, 20), on],
    [base.slice(0, 20), off], [base, off], [base, on]];
  let cache = null, worst = 0, reused = 0;
  for (const [tokens, keep] of steps) {
    const r = mhaLiveHeads.forward(model, tokens, keep, cache);
    cache = r.cache;
    reused += tokens.length - r.recomputed;
    const fresh = mhaLiveHeads.forward(model, tokens, keep);
    const T = tokens.length, V = model.config.vocab_size;
    for (let i = 0; i < T * V; i++) worst = Math.max(worst, Math.abs(r.logits[i] - fresh.logits[i]));
    r.weights.forEach((layer, l) => layer.forEach((w, h) => {
      for (let t = 0; t < T; t++) for (let s = 0; s < T; s++)
        worst = Math.max(worst, Math.abs(w[t * r.stride + s] - fresh.weights[l][h][t * r.stride + s]));
    }));
  }
  return {worst, reused};
}"""


def test_reusing_earlier_positions_changes_nothing(shared_page) -> None:
    document = json.loads((ROOT / VECTORS).read_text(encoding="utf-8"))
    page = open_widget(shared_page)
    result = page.evaluate(INCREMENTAL_JS, document)
    assert result["worst"] == 0.0
    assert result["reused"] == 80  # positions served from the cache over the nine edits
    assert page.console_errors == []


def test_model_loads_only_when_needed_and_only_on_this_page(new_page) -> None:
    page = new_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("", wait_until="networkidle")
    assert not [url for url in requested if "live-heads" in url], "another page loads the widget"
    requested.clear()
    page.goto(PAGE, wait_until="networkidle")
    assert all(any(url.endswith(name) for url in requested) for name in ("live-heads-model.js", "live-heads.js"))
    assert not [url for url in requested if url.endswith(("model.json", "weights.bin"))], "weights fetched on load"
    assert page.locator(".live-heads__fallback").is_hidden()
    page.locator("[data-live-heads]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-live-heads][data-live-ready]")
    assert [url.rsplit("/", 1)[-1] for url in requested if url.endswith(("model.json", "weights.bin"))] == [
        "model.json", "weights.bin"]
    assert page.locator("[data-live-heads]").get_attribute("data-vocab").split() == SYMBOLS == MANIFEST["symbols"]
    assert page.off_origin == [] and page.console_errors == []


def test_induction_heads_find_the_earlier_copy_and_predict_it(shared_page) -> None:
    rng = random.Random(0)
    prefix, length = 4, 16
    segment = [rng.randrange(len(SYMBOLS)) for _ in range(length)]
    tokens = [rng.randrange(len(SYMBOLS)) for _ in range(prefix)] + segment + segment
    page = open_widget(shared_page)
    page.locator("[data-live-input]").fill(" ".join(SYMBOLS[t] for t in tokens))

    def sweep() -> tuple[dict[str, float], float]:
        """Walk the query back through the second copy by keyboard; per head, how often its
        top key is the token after the query's earlier copy; how often the top prediction is right."""
        page.locator('[data-live-heads] button[aria-pressed="true"]').focus()
        page.keyboard.press("End")
        hits = {head: 0 for head in INDUCTION}
        right = 0
        queries = range(len(tokens) - 1, prefix + length, -1)  # every second-copy token but the first
        for query in queries:
            state = widget_state(page)
            assert state["query"] == query
            assert sorted(state["heads"]) == sorted(f"L{l}H{h}" for l in range(2) for h in range(4))
            assert all(len(cells) == query + 1 for cells in state["heads"].values())  # keys 0..query
            for head in INDUCTION:
                hits[head] += argmax_key(state["heads"][head])[0] == query - length + 1
            # What followed the query's earlier twin (for the last token: what the copy would go on with).
            right += state["top"][0][0] == SYMBOLS[tokens[query - length + 1]]
            page.keyboard.press("ArrowLeft")
        return {h: n / len(queries) for h, n in hits.items()}, right / len(queries)

    state = widget_state(page)  # default query: the last token, whose earlier twin is followed by position prefix + length
    for head in INDUCTION:
        key, weight = argmax_key(state["heads"][head])
        assert key == prefix + length and weight > 0.5, (head, key, weight)
    assert state["top"][0][0] == SYMBOLS[tokens[prefix + length]]
    assert len(state["top"]) == 5 and state["top"][0][1] > 0.5

    hits, right = sweep()
    assert min(hits.values()) >= 0.75 and right >= 0.9, (hits, right)

    page.locator(f'input[data-live-ablate="{PREVIOUS}"]').uncheck()  # cut the circuit (ticked = head on)
    assert page.locator(f'[data-row-head="{PREVIOUS}"]').evaluate("r => r.classList.contains('live-heads__row--off')")
    hits, right = sweep()
    assert max(hits.values()) <= 0.3 and right <= 0.3, (hits, right)

    page.locator("button[data-live-reset]").click()
    for head in INDUCTION[:2]:  # two redundant induction heads off: the others still carry the copy
        page.locator(f'input[data-live-ablate="{head}"]').uncheck()
    hits, right = sweep()
    assert right >= 0.8, right
    assert page.off_origin == [] and page.console_errors == []


def test_keyboard_alone_operates_the_widget(shared_page) -> None:
    page = open_widget(shared_page)
    box = page.locator("[data-live-input]")
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("ba be bi bo ba be bi")
    assert widget_state(page)["query"] == 6
    page.keyboard.type(" xx")
    assert box.get_attribute("aria-invalid") == "true"
    assert "\u201cxx\u201d is not a token" in page.locator(".live-heads__status").inner_text()
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    page.keyboard.type("3")  # a token's number works too: 3 is "bo"
    assert box.get_attribute("aria-invalid") is None
    assert widget_state(page)["query"] == 7
    assert page.locator('[data-live-heads] button[data-position="7"]').get_attribute("data-token") == "bo"

    for _ in range(6):  # the three examples, "All heads on" and "Continue", then the query token
        page.keyboard.press("Tab")
    focused = page.evaluate("() => document.activeElement.dataset.position")
    assert focused == "7", "Tab should land on the query token"
    assert page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle") != "none"
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert widget_state(page)["query"] == 1
    assert page.evaluate("() => document.activeElement.dataset.position") == "1"
    page.keyboard.press("Tab")  # out of the tokens: the first head's switch
    assert page.evaluate("() => document.activeElement.dataset.liveAblate") == "L0H0"
    assert page.locator('input[data-live-ablate="L0H0"]').is_checked(), "ticked = head on"
    page.keyboard.press("Space")
    assert not page.locator('input[data-live-ablate="L0H0"]').is_checked()
    assert "(switched off)" in page.locator(".live-heads__summary").inner_text()
    # the word beside the head's name follows its switch (it said "on" whatever the state)
    switch = page.locator('label:has(input[data-live-ablate="L0H0"])')
    assert switch.locator(".live-heads__on").inner_text() == "off"
    assert switch.evaluate("l => l.control.labels[0].textContent").startswith("L0H0off")

    page.locator('button[data-live-example="repeat"]').focus()
    page.keyboard.press("Enter")
    words = box.input_value().split()
    state = widget_state(page)
    assert state["query"] == len(words) - 1 and all(w in SYMBOLS for w in words)
    assert not page.locator('input[data-live-ablate="L0H0"]').is_checked(), "examples keep the switches"
    page.locator('button[data-live-example="figure"]').click()
    assert [SYMBOLS.index(w) for w in box.input_value().split()] == MANIFEST["figure_tokens"]
    assert page.off_origin == [] and page.console_errors == []


@pytest.mark.parametrize("scheme, width", [("light", 1280), ("dark", 1280), ("dark", 375), ("light", 375)])
def test_fits_narrow_screens_and_dark_mode(shared_page, scheme: str, width: int) -> None:
    page = open_widget(shared_page, color_scheme=scheme, width=width, height=900)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    expected = "slate" if scheme == "dark" else "default"
    assert page.evaluate("() => document.body.dataset.mdColorScheme") == expected
    # The query's column is scrolled into view beside the head labels.
    visible = page.evaluate("""() => {
      const wrap = document.querySelector('.live-heads__wrap').getBoundingClientRect();
      const label = document.querySelector('.live-heads__label').getBoundingClientRect();
      const query = document.querySelector('.live-heads__token[aria-pressed="true"]').getBoundingClientRect();
      return query.left >= label.right - 1 && query.right <= wrap.right + 1;
    }""")
    assert visible
    # The bar a head weighs most stands out from the page by at least 3:1 (WCAG for graphics): read the drawn pixel.
    contrast = top_bar(page)["contrast"]
    assert contrast >= 3, contrast
    page.locator('input[data-live-ablate="L0H2"]').uncheck()
    page.locator("[data-live-heads]").screenshot(path=f"/tmp/live-heads-{width}-{scheme}.png")
    assert axe_findings(page, "[data-live-heads]") == []
    assert page.off_origin == [] and page.console_errors == []


def test_palette_toggle_redraws_the_bars(shared_page) -> None:
    page = open_widget(shared_page, color_scheme="light")
    light = top_bar(page)
    page.get_by_role("button", name="Switch to dark mode").click()
    page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
    page.wait_for_timeout(100)
    dark = top_bar(page)
    assert light["contrast"] >= 3 and dark["contrast"] >= 3, (light, dark)
    assert sum(dark["colour"]) > sum(light["colour"]) + 300, (light, dark)  # dark bars became light ones
    assert page.console_errors == []


def test_arriving_by_link_and_coming_back_initialises_once(shared_page) -> None:
    page = shared_page()
    page.goto("inference/")  # the page before "Heads that learn"
    page.locator("a.md-footer__link--next").click()
    page.wait_for_selector("[data-live-heads]")
    page.locator("[data-live-heads]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-live-heads][data-live-ready]")
    page.locator("a.md-footer__link--next").click()
    page.wait_for_function("() => !document.querySelector('[data-live-heads]')")
    page.go_back()
    page.wait_for_selector("[data-live-heads]")
    page.locator("[data-live-heads]").scroll_into_view_if_needed()
    page.wait_for_selector("[data-live-heads][data-live-ready]")
    assert page.locator(".live-heads__app").count() == 1
    assert page.locator(".live-heads__tokens button").count() == len(MANIFEST["figure_tokens"])
    assert page.off_origin == [] and page.console_errors == []


def test_without_javascript_the_static_figure_shows(new_page) -> None:
    page = new_page(java_script=False)
    page.goto(PAGE)
    fallback = page.locator(".live-heads__fallback")
    assert fallback.is_visible()
    image = fallback.locator("img")
    image.scroll_into_view_if_needed()
    assert image.evaluate("img => img.complete && img.naturalWidth > 0") or image.evaluate(
        "img => img.decode().then(() => img.naturalWidth > 0)")
    assert len(image.get_attribute("alt")) > 100
    assert page.locator(".live-heads__app").count() == 0
    assert page.off_origin == []


KEYSTROKES_JS = """async ([text, changes, rounds]) => {
  const root = document.querySelector('[data-live-heads]');
  const input = root.querySelector('[data-live-input]');
  const words = text.split(' ');
  const versions = changes === 'end' ? [words.slice(0, 63), words] : [[words[1], ...words.slice(1)], [words[2], ...words.slice(1)]];
  for (let i = 0; i < rounds; i++) for (const version of versions) {
    input.value = version.join(' ');
    input.dispatchEvent(new Event('input'));
    void root.offsetHeight;  // style and layout of the redrawn rows included
  }
}"""


def test_forward_and_keystroke_time_for_64_tokens(new_page) -> None:
    """T = 64. The budget (50 ms a keystroke on a phone-class CPU, taken as 4x slower than this one) is checked on
    main-thread CPU time, which other processes on a shared machine do not inflate (wall-clock time, which they
    do, is not measured here)."""
    page = open_widget(new_page)
    tokens = " ".join(SYMBOLS[(7 * i + 3) % len(SYMBOLS)] for i in range(64))
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def thread_ms() -> float:
        return 1000 * next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ThreadTime")

    cpu = {}
    for changes, rounds in (("end", 40), ("start", 20)):
        page.evaluate(KEYSTROKES_JS, [tokens, changes, 2])  # warm up
        before = thread_ms()
        page.evaluate(KEYSTROKES_JS, [tokens, changes, rounds])
        cpu[changes] = (thread_ms() - before) / (2 * rounds)

    print(f"T=64 main-thread CPU ms per keystroke: last token {cpu['end']:.1f}, first token (full recompute) "
          f"{cpu['start']:.1f}")
    assert 4 * cpu["end"] < 50, cpu  # the budget on a phone-class CPU
    # That the cache is used (a last-token change recomputes one position) is asserted exactly, by count, in
    # test_reusing_earlier_positions_changes_nothing: comparing the two CPU times here failed under load (8.4 vs 8.3 ms).
    assert page.console_errors == []


# Per induction row: its strongest key, whether that key's cell is inside the visible strip (right of the sticky
# labels, left of the scroll box's edge), and the off-screen arrow the row shows, if any.
STRONGEST_JS = """(heads) => {
  const wrap = document.querySelector('.live-heads__wrap').getBoundingClientRect();
  const label = document.querySelector('.live-heads__label').getBoundingClientRect();
  return heads.map(name => {
    const row = document.querySelector(`[data-row-head="${name}"]`);
    const top = row.querySelector('[data-top]'), r = top.getBoundingClientRect();
    const mark = [...row.querySelectorAll('[data-offscreen]')].filter(m => !m.hidden)
      .map(m => { const b = m.getBoundingClientRect();
        return {side: m.dataset.offscreen, text: m.textContent, key: Number(m.dataset.key),
                inside: b.width > 0 && b.left >= label.right - 1 && b.right <= Math.min(wrap.right, innerWidth) + 1}; });
    return {head: name, key: Number(top.dataset.key), weight: Number(top.dataset.weight),
            visible: r.left >= label.right - 1 && r.right <= wrap.right + 1, marks: mark};
  });
}"""


def test_at_375_each_induction_row_shows_its_strongest_key(shared_page) -> None:
    page = open_widget(shared_page, width=375, height=800)
    page.locator("button[data-live-example='figure']").click()  # a block of 12 written twice: targets 11 back
    tokens = MANIFEST["figure_tokens"]
    page.locator('[data-live-heads] button[aria-pressed="true"]').focus()
    page.keyboard.press("End")
    marked = 0
    for query in range(len(tokens) - 1, len(tokens) // 2, -1):  # the second copy, walked by keyboard
        page.wait_for_function(f"() => document.querySelector('[data-live-heads]').dataset.liveQuery === '{query}'")
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # the scroll
        for row in page.evaluate(STRONGEST_JS, INDUCTION):
            if row["visible"]:
                assert row["marks"] == [], row
                continue
            # Off screen: an arrow and the key's position, symbol and weight, inside the visible strip.
            (mark,) = row["marks"]
            symbol = SYMBOLS[tokens[row["key"]]]
            arrow = "\u25c0" if mark["side"] == "left" else "\u25b6"
            assert mark["key"] == row["key"] and mark["inside"], (query, row)
            assert arrow in mark["text"] and f"\u00b7{row['key']} {symbol} {row['weight']:.2f}" in mark["text"], (query, row)
            marked += 1
        if query == len(tokens) - 1:
            page.locator("[data-live-heads]").screenshot(path="/tmp/live-heads-375-offscreen.png")
        page.keyboard.press("ArrowLeft")
    assert marked > 0, "at 375 px the first copy should be off screen for some query (else this test shows nothing)"
    # Scrolled back to the start by hand, the marks go: the strongest keys are in view.
    page.locator(".live-heads__wrap").evaluate("w => { w.scrollLeft = 0; }")
    page.wait_for_function("""() => [...document.querySelectorAll('[data-offscreen]')].every(m => m.hidden ||
      m.dataset.offscreen === 'right')""")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    assert page.off_origin == [] and page.console_errors == []


def test_a_letter_the_model_lacks_is_named_with_the_letters_it_has(shared_page) -> None:
    consonants = " ".join(dict.fromkeys(s[0] for s in SYMBOLS))
    vowels = " ".join(dict.fromkeys(s[1:] for s in SYMBOLS))
    assert "u" not in vowels.split()  # the model's vowels are a, e, i, o
    page = open_widget(shared_page)
    box = page.locator("[data-live-input]")
    box.fill("ba bu")
    assert box.get_attribute("aria-invalid") == "true"
    status = page.locator(".live-heads__status").inner_text()
    rule = f"a token is one of the consonants {consonants} followed by one of the vowels {vowels}"
    numbers = f"or type a number from 0 to {len(SYMBOLS) - 1}."
    assert status == (f"\u201cbu\u201d is not a token: {rule} (its second letter \u201cu\u201d is not one of the vowels), {numbers}")
    box.fill("ba xx")  # both letters wrong: each is named by its place (the review read "x", then "x" again)
    status = page.locator(".live-heads__status").inner_text()
    assert ("(its first letter \u201cx\u201d is not one of the consonants; "
            "its second letter \u201cx\u201d is not one of the vowels)") in status
    # a word of the wrong length is not blamed on a letter the model has (the review's "hello")
    box.fill("ba hello")
    status = page.locator(".live-heads__status").inner_text()
    assert status == f"\u201chello\u201d is not a token: {rule} (it has 5 letters, a token has 2), {numbers}"
    box.fill("ba bo")
    assert box.get_attribute("aria-invalid") is None
    assert page.console_errors == []


def _expected_role(layer: int, head: int) -> str:
    """The label the page promises: the measured pattern with the largest share, induction or k back."""
    names = {0: "itself", 1: "previous token", 2: "two back"}
    patterns = [("induction", MANIFEST["scores"]["induction"][layer][head])]
    patterns += [(names.get(k, f"{k} back"), share) for k, share in enumerate(MANIFEST["offsets"][layer][head])]
    name, share = max(patterns, key=lambda p: p[1])  # the first of equals, as the widget's strict ">"
    return f"{name} {share:.2f}" if share >= 0.3 else f"spread out (best {share:.2f})"


def test_each_head_is_labelled_by_what_it_measurably_does(shared_page) -> None:
    """The review's L0H0 read "prev. score 0.02" while it looks two back: labels name the best measured pattern."""
    page = open_widget(shared_page)
    roles = page.locator(".live-heads__role").all_inner_texts()
    assert roles == [_expected_role(layer, head) for layer in range(2) for head in range(4)]
    assert roles[0] == "two back 0.83" and roles[int(PREVIOUS[-1])].startswith("previous token")
    assert all(roles[4 + int(name[-1])].startswith("induction") for name in INDUCTION)
    assert page.console_errors == []


@pytest.mark.parametrize("text", ["hello world", "", " ".join(["ba"] * 96)])
def test_text_that_is_no_sequence_dims_the_bars_and_clears_the_predictions(shared_page, text: str) -> None:
    page = open_widget(shared_page)
    box, root = page.locator("[data-live-input]"), page.locator("[data-live-heads]")
    box.fill(text)
    assert box.get_attribute("aria-invalid") == "true"
    assert root.get_attribute("data-live-stale") == ""
    assert float(page.locator(".live-heads__wrap").evaluate("w => getComputedStyle(w).opacity")) < 0.5
    assert page.locator(".live-heads__wrap").evaluate("w => w.inert"), "stale bars and switches stay reachable"
    assert page.locator("[data-live-prediction]").is_hidden() and page.locator(".live-heads__summary").is_hidden()
    assert page.locator(".live-heads__prediction-title").inner_text().startswith("No prediction")
    assert page.locator("button[data-live-continue]").is_disabled()
    snapshot = page.locator("[data-live-heads]").aria_snapshot()
    assert "most weight on position" not in snapshot and "%" not in snapshot.split("No prediction")[-1]
    box.fill("ba be bi")
    assert root.get_attribute("data-live-stale") is None and page.locator("[data-live-prediction]").is_visible()
    assert not page.locator(".live-heads__wrap").evaluate("w => w.inert") and widget_state(page)["query"] == 2
    assert page.locator("button[data-live-continue]").is_enabled()
    assert page.console_errors == []


def test_watch_induction_fits_at_1280_and_scrolls_by_touch_at_375(shared_page, new_page) -> None:
    """"Segment written twice" needed sideways scrolling at 1280 px (36 tokens, 1,096 px in a 654 px column)."""
    page = open_widget(shared_page)
    sizes = page.evaluate("""() => { const w = document.querySelector('.live-heads__wrap');
      const cell = document.querySelector('.live-heads__token').getBoundingClientRect().width;
      return {client: w.clientWidth, scroll: w.scrollWidth, cell}; }""")
    for _ in range(8):  # examples of every length
        page.locator('button[data-live-example="repeat"]').click()
        fit = page.evaluate("""() => { const w = document.querySelector('.live-heads__wrap');
          const cells = [...document.querySelectorAll('.live-heads__token')];
          return {client: w.clientWidth, scroll: w.scrollWidth, n: cells.length, cell: cells[0].getBoundingClientRect().width,
                  last: cells[cells.length - 1].getBoundingClientRect().right, right: w.getBoundingClientRect().right}; }""")
        assert fit["scroll"] <= fit["client"] + 1 and fit["last"] <= fit["right"] + 1, fit
        assert fit["cell"] >= 18, fit  # 0.9rem: two letters and a two-digit position stay legible
    assert sizes["client"] >= 600, sizes  # the desktop column, not a phone's
    phone = open_widget(new_page, width=375, height=800, touch=True)
    phone.locator('button[data-live-example="repeat"]').tap()
    cell = phone.locator(".live-heads__token").first.bounding_box()["width"]
    assert cell >= 22, cell  # a finger's cell, as before: the rows scroll instead
    n = phone.locator(".live-heads__token").count()
    target = phone.locator(f'.live-heads__token[data-position="{n // 2}"]')
    target.scroll_into_view_if_needed()
    target.tap()
    assert widget_state(phone)["query"] == n // 2
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 375
    assert page.console_errors == [] and phone.console_errors == []


def _greedy(tokens: list[int], steps: int) -> list[int]:
    """The shipped weights' greedy continuation by mha_ref's own forward pass (float64, every head on)."""
    import torch

    from mha_site.tiny_model import export
    from mha_site.tiny_model.report import load_results

    config = export._config(load_results(ROOT / ASSETS / "results.json"))
    blob = (ROOT / ASSETS / "weights.bin").read_bytes()
    model = export.load_model(export.decode_weights(blob, MANIFEST["tensors"]), config)
    tokens = list(tokens)
    with torch.no_grad():
        for _ in range(steps):
            logits, _ = model(torch.tensor([tokens]))
            tokens.append(int(logits[0, -1].argmax()))
    return tokens


@pytest.mark.parametrize("motion", ["reduce", "no-preference"])
def test_continue_copies_the_rest_of_the_segment(new_page, motion: str) -> None:
    """'After a segment written twice, or a copy begun, it writes the segment out again'. The widget's greedy
    tokens are also the Python model's, step for step."""
    rng = random.Random(3)
    segment = rng.sample(range(len(SYMBOLS)), 14)  # no token twice
    start = [rng.randrange(len(SYMBOLS)) for _ in range(3)] + segment + segment[:2]
    page = open_widget(new_page)
    page.emulate_media(reduced_motion=motion)
    page.locator("[data-live-input]").fill(" ".join(SYMBOLS[t] for t in start))
    button = page.locator("button[data-live-continue]")
    button.focus()
    page.keyboard.press("Enter")  # a button: the keyboard works it
    if motion == "no-preference":  # one token at a time: the sequence is seen growing
        page.wait_for_function(f"() => document.querySelectorAll('.live-heads__token').length === {len(start) + 3}")
        assert button.is_disabled() and page.locator("[data-live-heads]").get_attribute("data-live-continued") is None
    page.wait_for_selector("[data-live-continued]", timeout=10_000)
    ids = [SYMBOLS.index(w) for w in page.locator("[data-live-input]").input_value().split()]
    assert ids == _greedy(start, 10), "the widget's continuation is not the Python model's"
    assert ids[len(start):] == segment[2:12]  # induction copies the segment on
    added = " ".join(SYMBOLS[t] for t in segment[2:12])
    assert page.locator(".live-heads__status").inner_text().endswith(added + ".")
    assert widget_state(page)["query"] == len(ids) - 1 and button.is_enabled()
    assert page.off_origin == [] and page.console_errors == []


def test_a_token_twice_in_the_segment_can_send_the_copy_astray() -> None:
    """The page's proviso, by the Python model the widget agrees with: the copy holds until it writes a token
    that also occurs elsewhere in the row, then follows the other occurrence."""
    rng = random.Random(3)
    segment = [rng.randrange(len(SYMBOLS)) for _ in range(14)]
    start = [rng.randrange(len(SYMBOLS)) for _ in range(3)] + segment + segment[:2]
    written = _greedy(start, 10)[len(start):]
    wrong = next(i for i, (a, b) in enumerate(zip(written, segment[2:12])) if a != b)
    assert wrong > 0 and start.count(written[wrong - 1]) > 1  # the token before the slip occurs twice before
