"""What docs/inference.md and docs/causal-mask.md state about caches, kernels and credit, checked.

Every cell of the KV-cache table is recomputed from the table's own sizes with
``kv_cache_bytes_per_token``; what PyTorch's kernels do with grouped heads is read from the
profiler; the rest holds the words a researcher would quote. Each test names its claim.
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import profile

from mha_ref.cache import kv_cache_bytes_per_token
from sitekit import DOCS

INFERENCE = " ".join((DOCS / "inference.md").read_text(encoding="utf-8").split())
CAUSAL = " ".join((DOCS / "causal-mask.md").read_text(encoding="utf-8").split())
TABLE_ROW = re.compile(r"^\| ([^|]+) \| (\d+) × (\d+) × (\d+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", re.MULTILINE)


def _size(num_bytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if num_bytes >= scale:
            assert num_bytes % scale == 0, num_bytes
            return f"{num_bytes // scale} {unit}"
    raise AssertionError(num_bytes)


def _rows() -> list[tuple[str, ...]]:
    source = (DOCS / "inference.md").read_text(encoding="utf-8")
    return [tuple(cell.strip() for cell in row) for row in TABLE_ROW.findall(source)]


def test_every_cell_of_the_kv_cache_table_follows_from_its_sizes():
    """Per token: 2 x L x h_kv x d_k x 2 bytes; the 4,096 and 8,192 columns multiply, except where a
    window caps the cache (Mistral 7B: 4,096 tokens kept) or the length is past the context."""
    rows = _rows()
    assert [row[0] for row in rows] == [
        "Transformer base (decoder self-attention)", "Llama 2 7B", "Mistral 7B v0.1 (window of 4,096)", "Llama 3 8B",
    ]
    for name, layers, kv_heads, d_k, per_token, at_4k, at_8k in rows:
        size = kv_cache_bytes_per_token(int(layers), int(kv_heads), int(d_k))  # 2 bytes a number
        assert per_token == _size(size), name
        assert at_4k == _size(size * 4096), name
        context = re.search(r"past its ([\d,]+)-token context", at_8k)
        if context:
            assert int(context.group(1).replace(",", "")) < 8192
            continue
        window = re.search(r"window of ([\d,]+)", name)
        kept = 8192 if window is None else min(8192, int(window.group(1).replace(",", "")))
        assert at_8k == _size(size * kept), name


def test_the_window_sentence_and_the_cross_attention_cache():
    """'the cache stops growing there, half of Llama 3 8B's at 8,192 tokens'; the base decoder's
    cross-attention cache: 'another 12 KiB per source token (48 MiB for a 4,096-token source)'."""
    mistral = kv_cache_bytes_per_token(32, 8, 128) * 4096
    llama3 = kv_cache_bytes_per_token(32, 8, 128) * 8192
    assert 2 * mistral == llama3
    assert "a rolling buffer of 4,096 positions" in INFERENCE and "half of Llama 3 8B's at 8,192 tokens" in INFERENCE
    cross = kv_cache_bytes_per_token(6, 8, 64)  # the decoder's 6 layers, 8 heads of 64, per source token
    assert f"another {_size(cross)} per source token ({_size(cross * 4096)} for a 4,096-token source)" in INFERENCE
    assert "computed once per source sentence" in INFERENCE


def test_the_cache_formula_is_short_enough_for_a_phone():
    """At 375 px the formula went off screen; its symbols are now defined in the sentence before it."""
    source = (DOCS / "inference.md").read_text(encoding="utf-8")
    formula = re.search(r"\$\$\n(2 \\cdot L[^$]*)\n\$\$", source)
    assert formula and len(formula.group(1)) < 60
    assert "$L$ layers that cache, $h_{kv}$ key/value heads per layer and $b$ bytes per number" in INFERENCE


def test_math_backend_repeats_grouped_heads_and_the_cpu_flash_kernel_does_not():
    """'PyTorch's math backend does the same when enable_gqa=True' and 'PyTorch's flash kernel for
    the CPU ... is one of them' (no copies), read from the operators each one runs."""
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(2, 8, 7, 4, generator=generator, dtype=torch.float64)
    k = torch.randn(2, 2, 7, 4, generator=generator, dtype=torch.float64)

    def operators(backend=None) -> set[str]:
        with profile() as prof:
            if backend is None:
                F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
            else:
                with sdpa_kernel(backend):
                    F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
        return {event.name for event in prof.events()}

    math_ops, default_ops = operators(SDPBackend.MATH), operators()
    assert "aten::repeat_interleave" in math_ops
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in default_ops
    assert "aten::repeat_interleave" not in default_ops
    assert "cost time but not cache memory" not in INFERENCE
    assert "the copies cost time and temporary memory" in INFERENCE


def test_online_softmax_and_flashattention_are_credited_for_what_each_did():
    section = INFERENCE[INFERENCE.index("## Tiled attention"):]
    milakov, rabe, dao = (section.index(name) for name in ("Milakov and Gimelshein 2018", "Rabe and Staats (2021)", "Dao et al. 2022"))
    assert milakov < rabe < dao
    assert "arxiv.org/abs/1805.02867" in section and "arxiv.org/abs/2112.05682" in section
    assert "*IO-aware* tiling" in section and "recomputed in the backward pass" in section
    assert "run this inside one GPU kernel (FlashAttention)" not in INFERENCE


def test_appending_to_the_cache_copies_it_and_the_page_says_why_the_step_grows():
    """'`append` as written above uses `torch.cat`, which allocates a new tensor at every step
    and copies the whole cache into it'."""
    from mha_ref import KVCache

    cache = KVCache()
    first, _ = cache.append(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    for step in range(3):
        before = first.data_ptr()
        first, _ = cache.append(torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 4))
        assert first.data_ptr() != before and len(cache) == 4 + step
    assert "copies the whole cache into it" in INFERENCE and "about $n^2 / 2$" in INFERENCE


def test_causal_mask_page_says_which_kernels_the_mask_speeds_up():
    """The mask saves nothing where every score is computed and then masked (mha_ref, the math
    path); fused kernels given is_causal=True skip the blocks above the diagonal."""
    assert "The mask does not make anything faster" not in CAUSAL and "just as fast" not in CAUSAL
    section = CAUSAL[CAUSAL.index("## Why this makes parallel training valid"):]
    for needed in ("PyTorch's plain \"math\" path, it saves nothing", "with `is_causal=True`",
                   "a block that lies entirely above the diagonal", "so they skip it",
                   "[Dao et al. 2022](https://arxiv.org/abs/2205.14135)"):
        assert needed in section, needed
