"""Facts the lesson states on the learner's path: the layer's signature before its first call,
self-attention's Q = K = V = X, a W^O experiment that runs on its own, the one sentence left of the
cost paragraph, where the layer sits in a transformer block, and why attention and not recurrence.

Each test reads the sentence or table from the page source and checks it against code, PyTorch
or the committed benchmark results (the pattern of ``test_lesson_facts.py``).
"""

from __future__ import annotations

import inspect
import json
import re

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from markdown_fences import expand_snippets
from mha_ref import multi_head_attention, project, scaled_dot_product_attention, split_heads
from mha_site.bench.claims import CLAIMS, evaluate_claim
from mha_site.lesson_figures import BLOCK_STAGES
from sitekit import DOCS, LESSON_PAGES

#: The lesson's pages in course order (the single page they were cut from), and each one alone.
PAGES = {page: (DOCS / page).read_text(encoding="utf-8") for page in LESSON_PAGES}
LESSON = "\n\n".join(PAGES.values())
CODE, BLOCK = PAGES["code.md"], PAGES["block.md"]
BENCHMARK = (DOCS / "benchmark.md").read_text(encoding="utf-8")
#: The lesson with every run of white space made one space, so a sentence matches however it is wrapped.
FLAT = " ".join(LESSON.split())


def section(anchor: str, text: str = LESSON) -> str:
    """The Markdown of the section whose heading carries ``{ #anchor }``, up to the next heading of
    its level or above (lines in code fences are not headings: a ``# comment`` is code)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(rf"#+ .*\{{ #{anchor} \}}$", line)), None)
    assert start is not None, f"no section {{ #{anchor} }}"
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    in_fence = False
    for end in range(start + 1, len(lines)):
        if lines[end].lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and re.match(rf"#{{1,{level}}} ", lines[end]):
            break
    else:
        end = len(lines)
    return "".join(lines[start + 1 : end])


def python_fences(text: str) -> list[str]:
    """The source of every ```python fence (indented ones too), indentation removed."""
    fences = []
    for indent, body in re.findall(r"^( *)```python\n(.*?)^\1```", text, flags=re.M | re.S):
        fences.append("\n".join(line[len(indent) :] for line in body.splitlines()))
    return fences


# --- the signature before the first call --------------------------------------------------------


def test_the_core_comes_first_and_the_full_signature_before_the_full_functions_first_call():
    """The lesson shows the short core (with its signature) before any inference feature; the code
    page shows the full function's signature before its first call."""
    core = section("one-batched-matmul", PAGES["index.md"])
    assert '--8<-- "mha_ref/attention.py:core_signature"' in core and '--8<-- "mha_ref/attention.py:core"' in core
    assert "num_kv_heads" not in PAGES["index.md"] and "cache=" not in PAGES["index.md"]
    full = section("full-reference", CODE)
    shown = full.index('--8<-- "mha_ref/attention.py:mha_signature"')
    first_call = CODE.index("multi_head_attention(")
    assert CODE.index(full) + shown < first_call, "the first call comes before the signature"
    assert "api/layer.md#mha_ref.attention.multi_head_attention" in full


def test_the_lessons_core_listing_is_six_to_ten_lines_of_code():
    """Issue 33: a 6-10 line core (project, split, attend, merge, project), tested equal to the
    full function (tests/reference/test_attention.py)."""
    source = (DOCS.parent / "src" / "mha_ref" / "attention.py").read_text(encoding="utf-8")
    body = source.split("# --8<-- [start:core]\n", 1)[1].split("# --8<-- [end:core]", 1)[0]
    lines = [line for line in body.splitlines() if line.strip()]
    assert 6 <= len(lines) <= 10, lines
    for step in ("project", "split", "attend", "merge"):
        assert step in body, step


def test_the_signature_prose_matches_the_function():
    prose = " ".join(section("full-reference", CODE).split())
    parameters = inspect.signature(multi_head_attention).parameters
    positional = [name for name, p in parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    keyword_only = [name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY]
    assert positional == ["x", "w_q", "w_k", "w_v", "w_o", "num_heads", "mask", "return_weights"]
    # "mask and the arguments after the * (biases, cross-attention, shared key/value heads, a cache, two input
    # checks, attention dropout)"
    biases = ["b_q", "b_k", "b_v", "b_o"]
    assert keyword_only == [*biases, "context", "num_kv_heads", "cache", "empty_rows", "check_finite", "dropout_p",
                            "generator"]
    assert "(biases, cross-attention, shared key/value heads, a cache, two input checks, attention dropout)" in prose
    x, weights = torch.randn(2, 5, 16), torch.randn(4, 16, 16)
    out, attention = multi_head_attention(x, *weights, 4, return_weights=True)
    assert "returns the `(B, T, d_model)` output" in prose and out.shape == x.shape
    assert "`(B, h, T, T)` attention weights" in prose and attention.shape == (2, 4, 5, 5)


# --- Q = K = V = X, and what Q W_i^Q is ----------------------------------------------------------


def test_q_k_v_are_all_x_is_said_before_the_first_formula_that_uses_them():
    said = LESSON.index("$Q = K = V = X$")
    first_formula = LESSON.index(r"\mathrm{Attention}\!\left(Q W_i^{Q}")
    assert said < first_formula
    assert "In self-attention $Q$, $K$ and $V$" not in LESSON  # the old sentence after the formula is gone
    split = LESSON.index("1. **Split** (project into heads): $X W_i^Q$")
    assert LESSON.index("where $X$ is the layer's input", split) < LESSON.index("## The formula")


def test_self_attention_takes_queries_keys_and_values_from_the_same_tokens():
    torch.manual_seed(0)
    d_model, h = 16, 4
    d_k = d_model // h
    x, weights = torch.randn(1, 6, d_model), torch.randn(4, d_model, d_model)
    # the default is self-attention: the same as passing x again as the keys' and values' source
    torch.testing.assert_close(multi_head_attention(x, *weights, h), multi_head_attention(x, *weights, h, context=x))
    # Q W_i^Q: T rows, one d_k-wide query per token, in head i's own space
    for i in range(h):
        head_i = split_heads(project(x, weights[0]), h)[0, i]
        assert head_i.shape == (6, d_k)
        torch.testing.assert_close(head_i, x[0] @ weights[0][:, i * d_k : (i + 1) * d_k])
    assert "is the queries projected into head $i$'s own space, one $d_k$-wide query per token" in FLAT


# --- the W^O experiment runs from what the page shows ------------------------------------------


def test_the_output_projection_experiment_runs_in_a_fresh_namespace():
    (fence,) = [f for f in python_fences(section("output-projection")) if "moved_features" in f]
    assert "import torch" in fence and "from mha_ref import multi_head_attention" in fence
    namespace: dict = {}
    exec(compile(fence, "index.md#output-projection", "exec"), namespace)  # raises if a name is undefined
    assert namespace["moved_features"](torch.eye(namespace["d_model"])) == list(range(namespace["d_k"]))
    assert "It reuses the layer" not in section("output-projection")


def test_the_block_example_runs_in_a_fresh_namespace():
    (fence,) = python_fences(section("transformer-block", BLOCK))
    namespace: dict = {}
    exec(compile(fence, "index.md#transformer-block", "exec"), namespace)
    assert isinstance(namespace["block"], nn.TransformerEncoderLayer) and namespace["pre_ln"].norm_first


# --- the cost paragraph: one sentence in the lesson, the numbers on the benchmark page -----------


def test_the_lessons_cost_section_states_no_measured_number_and_links_to_the_benchmark():
    costs = section("what-it-costs", CODE)
    assert "(benchmark.md#cpu-heads)" in costs
    assert "{{" not in LESSON and '--8<-- "cost.md"' not in LESSON
    prose = re.sub(r"```.*?```", "", costs, flags=re.S)  # the measured numbers live on the benchmark page
    assert not re.search(r"\d+(\.\d+)?\s*(ms|s|MiB|GFLOP)", prose), "a measured number in the lesson's cost section"
    summary = section("in-short", BENCHMARK)
    assert summary.strip() == '--8<-- "cost.md"'
    include = (DOCS / "_includes" / "cost.md").read_text(encoding="utf-8")
    assert all(f"bench.claim.{claim.key}" in include for claim in CLAIMS)


def test_the_cost_sentence_holds_on_the_committed_head_sweep():
    """"Leaves its matmul FLOPs as they were, but a layer that stores its h score matrices [...] takes
    more time and memory the more heads it has": the batched function of the committed CPU sweep."""
    assert "grow $h$-fold in a layer that stores them" in " ".join(section("what-it-costs", CODE).split())
    doc = json.loads((DOCS / "assets" / "bench" / "cpu.json").read_text(encoding="utf-8"))
    same_flops = next(claim for claim in CLAIMS if claim.key == "cpu_same_flops")
    assert evaluate_claim(same_flops, {"cpu": doc})[0]
    batched = sorted((c["heads"], c["median_s"], c["peak_bytes"]) for c in doc["cells"]
                     if c["sweep"] == "heads" and c["variant"] == "batched" and c["status"] == "ok")
    heads = [h for h, _, _ in batched]
    assert heads == [1, 2, 4, 8, 16, 32, 64]
    memory = [peak for _, _, peak in batched]
    assert memory == sorted(set(memory)), "peak memory does not grow with h"
    time = {h: t for h, t, _ in batched}
    assert time[1] < time[8] < time[64]


# --- where the layer sits ----------------------------------------------------------------------


def test_the_block_page_opens_with_the_block():
    headings = re.findall(r"^## [^\n]*\{ #([\w-]+) \}", BLOCK, flags=re.M)
    assert headings[0] == "transformer-block"
    block = section("transformer-block", BLOCK)
    assert "(assets/lesson/transformer-block.svg)" in block
    alt = re.search(r"!\[([^\]]+)\]\(assets/lesson/transformer-block\.svg\)", block)[1]
    assert "residual stream" in alt and "LayerNorm" in alt
    assert alt.index("multi-head attention") < alt.index("MLP")


def test_the_prose_names_the_figures_stages_in_order_and_both_norm_placements():
    prose = " ".join(section("transformer-block", BLOCK).split())
    names = [name for name, _ in BLOCK_STAGES]
    assert names == ["multi-head attention", "MLP"]
    assert prose.index("first the multi-head attention layer") < prose.index("then the **MLP**")
    assert "**pre-LN** arrangement of GPT-2 (Radford et al. 2019) and Llama" in prose
    assert "The original transformer (Vaswani et al. 2017) was **post-LN**" in prose
    # the two formulas in the prose, as PyTorch's block computes them (the page's example runs the full check)
    assert "`x + attention(norm(x))`" in prose and "`norm(x + attention(x))`" in prose
    assert nn.TransformerEncoderLayer(8, 2).norm_first is False  # PyTorch's default is the original post-LN


def test_only_attention_moves_information_between_tokens():
    """"Multi-head attention layer, the only place where tokens exchange information, then the MLP
    [...] applied to each token on its own": change token 0 and see which outputs move."""
    torch.manual_seed(0)
    block = nn.TransformerEncoderLayer(16, 4, dim_feedforward=64, dropout=0.0, batch_first=True).eval()
    x = torch.randn(1, 5, 16)
    nudged = x.clone()
    nudged[0, 0] += 1.0
    with torch.no_grad():
        for per_token in (block.norm1, lambda s: block.linear2(torch.relu(block.linear1(s)))):
            assert torch.equal(per_token(x)[0, 1:], per_token(nudged)[0, 1:])
        moved = block.self_attn(nudged, nudged, nudged)[0] - block.self_attn(x, x, x)[0]
    assert bool((moved[0, 1:].abs().amax(dim=-1) > 1e-4).all())
    assert "the only place where tokens exchange information" in FLAT


def test_the_original_mlp_is_four_times_the_model_width():
    """"2048 wide inside for the original transformer's d_model = 512" (Vaswani et al. 2017, d_ff),
    which is also PyTorch's default for its block."""
    assert "(2048 wide inside for the original transformer's $d_{\\text{model}} = 512$)" in FLAT
    assert nn.TransformerEncoderLayer(512, 8).linear1.out_features == 2048 == 4 * 512


# --- why attention and not recurrence (Vaswani et al. 2017, Table 1) -----------------------------

#: The page's table as data: layer -> (operations per layer, steps in order, most steps between two tokens).
TABLE_1 = {
    "self-attention": ("$O(T^2 d)$", "$O(1)$", "$O(1)$"),
    "recurrent": ("$O(T d^2)$", "$O(T)$", "$O(T)$"),
    "convolutional": ("$O(k T d^2)$", "$O(1)$", "$O(\\log_k T)$"),
}


def _table(text: str) -> dict[str, tuple[str, ...]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    header, rule, *body = rows
    assert re.fullmatch(r"[|\-: ]+", rule), rule
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in body]
    return {row[0]: tuple(row[1:]) for row in cells}


def test_the_recurrence_table_holds_table_1s_entries():
    why = section("why-not-recurrence", BLOCK)
    assert _table(why) == TABLE_1
    headings = re.findall(r"^## [^\n]*\{ #([\w-]+) \}", PAGES["index.md"], flags=re.M)
    assert "why-not-recurrence" not in headings  # on its own page, not between one head and many
    assert "Vaswani et al. (2017, Table 1)" in why
    assert "(for dilated kernels; plain ones need $O(T / k)$ layers)" in " ".join(why.split())


def _flops(run) -> int:
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        run()
    return counter.get_total_flops()


def _layer_flops(kind: str, tokens: int, width: int, kernel: int = 3) -> int:
    x = torch.zeros(1, tokens, width)
    if kind == "self-attention":  # the scores and the weighted sum; the projections are the same for every kind
        return _flops(lambda: scaled_dot_product_attention(x, x, x))
    if kind == "recurrent":
        layer = nn.RNN(width, width, batch_first=True)
        return _flops(lambda: layer(x))
    layer = nn.Conv1d(width, width, kernel, padding=kernel - 1)
    return _flops(lambda: layer(x.transpose(1, 2))[..., :tokens])


@pytest.mark.parametrize(
    "kind, t_power, d_power", [("self-attention", 2, 1), ("recurrent", 1, 2), ("convolutional", 1, 2)]
)
def test_operations_per_layer_grow_as_the_table_says(kind, t_power, d_power):
    """PyTorch's FLOP counter on each kind of layer: doubling T or d multiplies the count by 2 to the
    power the table's first column gives (within the conv's padding, which adds k - 1 positions)."""
    base = _layer_flops(kind, 64, 32)
    assert _layer_flops(kind, 128, 32) / base == pytest.approx(2**t_power, rel=0.05)
    assert _layer_flops(kind, 64, 64) / base == pytest.approx(2**d_power, rel=0.05)
    if kind == "convolutional":
        assert _layer_flops(kind, 64, 32, kernel=6) / _layer_flops(kind, 64, 32, kernel=3) == pytest.approx(2, rel=0.05)


def test_attention_scores_cost_more_than_a_recurrent_layer_once_t_exceeds_d():
    d = 64
    for tokens, relation in ((32, -1), (64, 0), (128, 1)):
        attention, recurrent = _layer_flops("self-attention", tokens, d), _layer_flops("recurrent", tokens, d)
        assert (attention > recurrent) - (attention < recurrent) == relation, tokens  # 4 T^2 d against 4 T d^2
    assert "attention's scores take more arithmetic than a recurrent layer once $T$ exceeds $d$" in FLAT


def test_a_recurrent_layer_is_t_steps_in_order():
    """nn.RNN gives what a loop over the tokens gives, each step fed the state of the one before."""
    torch.manual_seed(0)
    rnn = nn.RNN(8, 8, batch_first=True)
    cell = nn.RNNCell(8, 8)
    cell.load_state_dict({name.removesuffix("_l0"): value for name, value in rnn.state_dict().items()})
    x = torch.randn(1, 7, 8)
    state = torch.zeros(1, 8)
    states = []
    with torch.no_grad():
        for t in range(7):  # 7 steps, none can start before the previous one ends
            state = cell(x[:, t], state)
            states.append(state)
        torch.testing.assert_close(torch.stack(states, dim=1), rnn(x)[0])


def _reaches_first_token(layers: list[nn.Conv1d], tokens: int) -> bool:
    """Whether the last position's output of stacked causal convolutions depends on token 0."""
    x = torch.randn(1, 4, tokens, requires_grad=True)
    out = x
    for conv in layers:
        reach = conv.dilation[0] * (conv.kernel_size[0] - 1)
        out = conv(nn.functional.pad(out, (reach, 0)))  # causal: look back only
    out[0, :, -1].sum().backward()
    return bool(x.grad[0, :, 0].abs().sum() > 0)


@pytest.mark.parametrize("k", [2, 3])
def test_a_path_through_convolutions_is_log_k_t_layers_dilated_and_t_over_k_plain(k):
    torch.manual_seed(0)
    tokens = 27 if k == 3 else 16
    dilated = [nn.Conv1d(4, 4, k, dilation=k**i) for i in range(5)]
    plain = [nn.Conv1d(4, 4, k) for _ in range(tokens)]
    log_k_t = round(torch.log(torch.tensor(float(tokens))).item() / torch.log(torch.tensor(float(k))).item())
    assert not _reaches_first_token(dilated[: log_k_t - 1], tokens)
    assert _reaches_first_token(dilated[:log_k_t], tokens)  # log_k T dilated layers
    needed = -(-(tokens - 1) // (k - 1))  # (T - 1) / (k - 1) plain layers, O(T / k)
    assert not _reaches_first_token(plain[: needed - 1], tokens)
    assert _reaches_first_token(plain[:needed], tokens)


def test_one_attention_layer_links_every_pair_of_tokens():
    torch.manual_seed(0)
    x = torch.randn(1, 50, 16, requires_grad=True)
    out = multi_head_attention(x, *torch.randn(4, 16, 16), 4)
    out[0, -1].sum().backward()
    assert bool((x.grad[0].abs().sum(dim=-1) > 0).all())  # the last token's output depends on every token


def test_the_page_shows_the_expanded_snippet_signature_as_code_not_run():
    text = expand_snippets(section("full-reference", CODE))
    assert "``` { .python .no-run }\ndef multi_head_attention(" in text


def test_the_explorers_position_code_scores_6_against_minus_a_half_and_the_previous_head_22_15_against_minus_1_85():
    """positions.md#explorer-code: the numbers it states, from mha_ref.demo_heads."""
    from mha_ref import demo_heads

    codes = demo_heads.position_features(len(demo_heads.TOKENS))
    products = codes @ codes.T
    torch.testing.assert_close(products.diagonal(), torch.full((len(codes),), 6.0))
    off = products[~torch.eye(len(codes), dtype=torch.bool)]
    torch.testing.assert_close(off, torch.full_like(off, -0.5), atol=1e-5, rtol=0)
    assert demo_heads.POSITION_PERIOD == 13 and demo_heads.NUM_FREQUENCIES == 6
    w, x = demo_heads.head_weights(), demo_heads.token_features()[0]
    head = slice(0, demo_heads.D_K)  # head 0: previous
    assert demo_heads.HEAD_NAMES[0] == "previous"
    qk = (x @ w["w_q"][:, head]) @ (x @ w["w_k"][:, head]).T  # (T, T), before the 1/sqrt(d_k)
    for t in range(1, len(x)):
        assert f"{qk[t, t - 1].item():.2f}" == "22.15"
        assert {f"{v:.2f}" for j, v in enumerate(qk[t].tolist()) if j != t - 1} == {"-1.85"}
    text = " ".join(PAGES["positions.md"].split())
    assert "$q \\cdot k = 22.15$ for the previous token and $-1.85$ for each of the others" in text
    assert "6 when $t = s$, and exactly $-\\tfrac12$ for any two different positions" in text
