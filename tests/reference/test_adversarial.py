"""Issue 23, first half: inputs that used to give a silent wrong answer or a confusing error.

Each test either checks the right answer or checks that the error has a clear type and
a message naming the argument and the value it received.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from mha_ref import (
    AttentionWeights,
    KVCache,
    MultiHeadAttention,
    causal_mask,
    multi_head_attention,
    rotary_attention,
    scaled_dot_product_attention,
    split_heads,
    tiled_attention,
)

F64 = torch.float64


def _weights(d_model: int = 16, dtype: torch.dtype = F64, seed: int = 0, **biases: bool) -> AttentionWeights:
    gen = torch.Generator().manual_seed(seed)
    w = [torch.randn(d_model, d_model, generator=gen, dtype=dtype) / d_model**0.5 for _ in range(4)]
    b = {name: torch.randn(d_model, generator=gen, dtype=dtype) for name, given in biases.items() if given}
    return AttentionWeights(*w, **b)


# ---- from_weights with some biases but not all ----

@pytest.mark.parametrize(
    "given", [("b_q",), ("b_k",), ("b_v", "b_o"), ("b_k", "b_v", "b_o"), ("b_q", "b_k", "b_v", "b_o")],
    ids=lambda names: "+".join(names),
)
def test_from_weights_treats_missing_biases_as_zeros(given):
    weights = _weights(**{name: True for name in given})
    layer = MultiHeadAttention.from_weights(weights, num_heads=4)
    x = torch.randn(2, 5, 16, dtype=F64)
    with torch.no_grad():
        ours = layer(x)
    expected = multi_head_attention(x, **weights.as_kwargs(), num_heads=4)  # the functions: missing = zeros
    torch.testing.assert_close(ours, expected, atol=1e-12, rtol=0)
    for name in {"b_q", "b_k", "b_v", "b_o"} - set(given):
        assert getattr(layer, name).abs().max() == 0, f"{name} must be zeros, not uninitialised memory"


def test_from_weights_names_a_bias_of_the_wrong_shape():
    weights = AttentionWeights(*_weights().as_kwargs().values(), b_k=torch.zeros(8, dtype=F64))
    with pytest.raises(ValueError, match=r"b_k must have shape \(16,\), got \(8,\)"):
        MultiHeadAttention.from_weights(weights, num_heads=4)


# ---- load_torch_weights copies weights, not the layout ----

def test_load_torch_weights_keeps_this_modules_batch_first():
    torch.manual_seed(0)
    reference = torch.nn.MultiheadAttention(16, 4).eval()  # torch's default: batch_first=False
    ours = MultiHeadAttention(16, 4).load_torch_weights(reference)
    assert ours.batch_first is True
    x = torch.randn(3, 5, 16)  # (B, T, d_model): this module's layout
    with torch.no_grad():
        expected = reference(*(x.transpose(0, 1),) * 3)[0].transpose(0, 1)  # torch wants (T, B, d_model)
        torch.testing.assert_close(ours(x), expected, atol=1e-6, rtol=1e-5)
    assert MultiHeadAttention.from_torch(reference).batch_first is False  # a new module takes torch's layout


# ---- the module's forward ----

def test_module_forward_takes_empty_rows_and_gives_b_o_there():
    torch.manual_seed(2)
    layer = MultiHeadAttention(8, 2).double()
    with torch.no_grad():
        layer.b_o.copy_(torch.arange(8.0))
    x = torch.randn(2, 5, 8, dtype=F64)
    real = torch.tensor([[False, False, True, True, True], [True] * 5])  # item 0 is left-padded by 2
    mask = causal_mask(5) & real[:, None, None, :]  # (B, 1, T, T)
    with torch.no_grad():
        with pytest.raises(ValueError, match=r"allows no key for 2 query row\(s\)"):
            layer(x, mask=mask)
        output = layer(x, mask=mask, empty_rows="zero")
        expected = multi_head_attention(x, **layer.weights().as_kwargs(), num_heads=2, mask=mask, empty_rows="zero")
    torch.testing.assert_close(output, expected, atol=0, rtol=0)
    torch.testing.assert_close(output[0, :2], layer.b_o.expand(2, 8), atol=0, rtol=0)  # b_o, not 0
    with pytest.raises(ValueError, match=r"empty_rows must be one of \('raise', 'zero'\), got 'zeros'"):
        layer(x, mask=mask, empty_rows="zeros")


def test_mask_passed_where_context_goes_is_named():
    layer = MultiHeadAttention(8, 2)
    with pytest.raises(TypeError, match=r"context got a boolean tensor of shape \(4, 4\): a mask was passed where "
                                        r"context goes .*pass it as mask="):
        layer(torch.randn(1, 4, 8), causal_mask(4))


def test_module_check_finite_option():
    x = torch.randn(1, 3, 8)
    x[0, 1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"x holds 1 non-finite value\(s\)"):
        MultiHeadAttention(8, 2)(x)
    unchecked = MultiHeadAttention(8, 2, check_finite=False)
    assert repr(unchecked) == "MultiHeadAttention(d_model=8, num_heads=2, d_k=4, bias=True, check_finite=False)"
    assert torch.isnan(unchecked(x)).any()
    with pytest.raises(TypeError, match=r"check_finite must be a bool, got str \('no'\)"):
        MultiHeadAttention(8, 2, check_finite="no")


@pytest.mark.slow  # 5 to 10 s on a shared 2-core machine, most of it dynamo starting up
def test_the_default_module_and_rotary_attention_compile_as_one_graph():
    # backend="eager": dynamo must capture one whole graph (fullgraph=True is what the data-dependent
    # checks broke); the checks step aside while dynamo traces and still run on every eager call.
    torch._dynamo.reset()
    layer = MultiHeadAttention(16, 4).eval()
    assert layer.check_finite
    compiled = torch.compile(layer, fullgraph=True, backend="eager")
    x = torch.randn(2, 5, 16)
    mask = causal_mask(5)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), layer(x), atol=0, rtol=0)
        torch.testing.assert_close(compiled(x, mask=mask), layer(x, mask=mask), atol=0, rtol=0)
    x[0, 1, 2] = float("nan")
    with pytest.raises(ValueError, match=r"x holds 1 non-finite value\(s\)"):
        layer(x)
    weights = [torch.randn(16, 16), torch.randn(16, 8), torch.randn(16, 8), torch.randn(16, 16)]
    x = torch.randn(1, 6, 16)
    rope = torch.compile(rotary_attention, fullgraph=True, backend="eager")
    for got, expected in zip(rope(x, *weights, num_heads=4, num_kv_heads=2, mask=causal_mask(6), base=500.0,
                                  return_weights=True),
                             rotary_attention(x, *weights, num_heads=4, num_kv_heads=2, mask=causal_mask(6),
                                              base=500.0, return_weights=True), strict=True):
        torch.testing.assert_close(got, expected, atol=0, rtol=0)


@pytest.mark.slow  # about 20 s on a 2-core machine with a cold cache: inductor writes and builds C++
def test_the_default_module_compiles_under_inductor():
    import torch._inductor.config  # here, not at the top: every xdist worker imports this module

    torch._dynamo.reset()
    torch._inductor.config.compile_threads = 1  # one compile in the test: no worker pool to start
    layer = MultiHeadAttention(16, 4).eval()
    compiled = torch.compile(layer, fullgraph=True)
    x, mask = torch.randn(2, 5, 16), causal_mask(5)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, mask=mask), layer(x, mask=mask), atol=1e-6, rtol=1e-5)


# ---- split_heads ----

@pytest.mark.parametrize("num_heads", [2.0, "2", True])
def test_split_heads_refuses_a_non_int_num_heads(num_heads):
    with pytest.raises(TypeError, match=rf"num_heads must be an int, got {num_heads!r}"):
        split_heads(torch.randn(1, 3, 8), num_heads)


# ---- tiled attention in float16 and bfloat16 ----

def _tiled_and_torch_errors(dtype: torch.dtype, keys: int, block: int) -> tuple[float, float]:
    """Largest error of tiled_attention and of torch's kernel, both in ``dtype``, against float64."""
    gen = torch.Generator().manual_seed(keys + block)
    q = torch.randn(1, 1, 16, 8, generator=gen, dtype=F64).to(dtype)  # (B, h, T_q, d): small, so fast
    k, v = (torch.randn(1, 1, keys, 8, generator=gen, dtype=F64).to(dtype) for _ in range(2))
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())  # the same rounded inputs
    ours = tiled_attention(q, k, v, block_size=block)
    assert ours.dtype == dtype
    theirs = F.scaled_dot_product_attention(q, k, v)
    return float((ours.double() - exact).abs().max()), float((theirs.double() - exact).abs().max())


@pytest.mark.parametrize(
    "dtype, keys, block",
    [(torch.float16, 2048, block) for block in (1, 2, 7, 64, 128, 2048)]
    + [(torch.bfloat16, 1024, block) for block in (1, 2, 7, 64, 128, 1024)]
    + [(torch.float16, 4096, 128)],
    ids=lambda value: str(value).replace("torch.", ""),
)
def test_tiled_half_precision_error_is_within_4x_of_torch(dtype, keys, block):
    # With m, l and o kept in the input's dtype (before issue 23) these were 2.4x to 520x torch's
    # error: 194x for float16 at block 1, 116x for bfloat16. 2,048 keys, not the 4,096,
    # keep the one-key-per-block loop fast; they show the drift as plainly.
    ours, theirs = _tiled_and_torch_errors(dtype, keys, block)
    assert ours <= 4 * theirs, f"tiled error {ours:.3g} vs torch's {theirs:.3g}"


def test_tiled_float16_running_sum_past_65504_stays_finite():
    q = torch.zeros(1, 1, 2, 8, dtype=torch.float16)  # every score is 0: 70,000 equal weights
    k = torch.randn(1, 1, 70_000, 8).half()
    v = torch.ones(1, 1, 70_000, 4, dtype=torch.float16)
    ours = tiled_attention(q, k, v, block_size=1024)
    assert torch.equal(ours, torch.ones_like(ours))  # a sum of 70,000 ones passes float16's 65504 on the way
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v), atol=2e-3, rtol=0)  # torch: 1.001


def test_tiled_float16_scaled_scores_past_65504_match_torch():
    q = torch.full((1, 1, 1, 64), 300.0, dtype=torch.float16)
    k = torch.stack([torch.full((64,), 300.0), torch.full((64,), 299.0)]).half()[None, None]  # (1, 1, 2, 64)
    v = torch.tensor([[1.0], [0.0]], dtype=torch.float16)[None, None]  # (1, 1, 2, 1)
    # the scaled scores are 300 * 300 * 64 / 8 = 720,000 and 717,600: past float16's largest, 65504
    assert torch.isinf((q / 8) @ k.transpose(-2, -1)).all()
    ours = tiled_attention(q, k, v)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v), atol=0, rtol=0)
    assert float(ours) == 1.0


# ---- the tiled function takes the keywords of scaled_dot_product_attention ----

@pytest.mark.parametrize("block", [1, 2, 128])
@pytest.mark.parametrize("check_finite", [True, False])
def test_tiled_attention_takes_the_sdpa_keywords(block, check_finite):
    gen = torch.Generator().manual_seed(block)
    q = torch.randn(2, 5, 8, generator=gen, dtype=F64)  # (B, T_q, d)
    k, v = torch.randn(2, 2, 6, 8, generator=gen, dtype=F64)  # (B, T_k, d) each
    mask = torch.rand(2, 5, 6, generator=gen) < 0.5
    mask[..., -1] = True
    mask[0, 1] = False  # query 1 of batch item 0 may see no key
    expected, _ = scaled_dot_product_attention(q, k, v, mask, empty_rows="zero")
    ours = tiled_attention(q, k, v, mask, block_size=block, empty_rows="zero", check_finite=check_finite)
    torch.testing.assert_close(ours, expected, atol=1e-12, rtol=0)
    assert ours[0, 1].abs().max() == 0
    with pytest.raises(ValueError, match=r"allows no key for 1 query row\(s\), first at index \(0, 1\)"):
        tiled_attention(q, k, v, mask, block_size=block, check_finite=check_finite)


def test_tiled_attention_checks_its_keywords():
    q = torch.randn(1, 3, 4)
    with pytest.raises(ValueError, match=r"empty_rows must be one of \('raise', 'zero'\), got 'nan'"):
        tiled_attention(q, q, q, empty_rows="nan")
    with pytest.raises(TypeError, match=r"check_finite must be a bool, got int \(0\)"):
        tiled_attention(q, q, q, check_finite=0)
    bad = q.clone()
    bad[0, 2, 1] = float("inf")
    with pytest.raises(ValueError, match=r"k holds 1 non-finite value\(s\) .*first at index \(0, 2, 1\)"):
        tiled_attention(q, bad, q)


# ---- the key/value cache ----

def test_cache_refuses_another_dtype_naming_both():
    cache = KVCache()
    cache.append(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    new = torch.ones(1, 2, 1, 4, dtype=F64)
    with pytest.raises(TypeError, match=r"the cache holds torch.float32 on cpu but k has torch.float64 on cpu"):
        cache.append(new, new)
    assert cache.keys.dtype == torch.float32 and len(cache) == 3  # nothing was added


@pytest.mark.parametrize(
    "k_shape, v_shape, message",
    [
        ((1, 4, 1, 4), (1, 4, 1, 4), r"the cache holds \(B, h_kv, d_k\) = \(1, 2, 4\) but k has \(1, 4, 4\)"),
        ((2, 2, 1, 4), (2, 2, 1, 4), r"the cache holds \(B, h_kv, d_k\) = \(1, 2, 4\) but k has \(2, 2, 4\)"),
        ((1, 2, 1, 4), (1, 2, 2, 4), r"k and v must have the same shape .* k \(1, 2, 1, 4\) and v \(1, 2, 2, 4\)"),
        ((1, 2, 4), (1, 2, 4), r"k must have 4 dimensions, got 3 \(shape \(1, 2, 4\)\)"),
    ],
    ids=["heads", "batch", "k-vs-v", "rank"],
)
def test_cache_refuses_keys_of_another_shape(k_shape, v_shape, message):
    cache = KVCache()
    cache.append(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    with pytest.raises(ValueError, match=message):
        cache.append(torch.ones(k_shape), torch.ones(v_shape))


def test_one_cache_for_two_layers_is_refused():
    first, second = MultiHeadAttention(16, 4), MultiHeadAttention(16, 4)  # the same shapes
    x = torch.randn(1, 3, 16)
    cache = KVCache()
    with torch.no_grad():
        first(x, mask=causal_mask(3), cache=cache)
        with pytest.raises(ValueError, match=r"cache belongs to another layer: .*w_k tensor \(shape \(16, 16\)\)"):
            second(x[:, :1], cache=cache)
        first(x[:, :1], cache=cache)  # its own layer still may
    assert len(cache) == 4


def test_cross_attention_cache_is_filled_once_and_never_grows():
    torch.manual_seed(1)
    layer = MultiHeadAttention(16, 4).double()
    decoder = torch.randn(2, 4, 16, dtype=F64)
    encoder = torch.randn(2, 6, 16, dtype=F64)
    cache = KVCache()
    with torch.no_grad():
        steps = [layer(decoder[:, t : t + 1], context=encoder, cache=cache) for t in range(4)]
        expected = layer(decoder, context=encoder)
    assert len(cache) == 6  # S, after four calls
    torch.testing.assert_close(torch.cat(steps, dim=1), expected, atol=1e-12, rtol=0)
    other = encoder.clone()  # equal numbers, but another source as far as the cache can tell
    with pytest.raises(ValueError, match=r"one context of shape \(2, 6, 16\) but this call passes context=another "
                                         r"tensor of shape \(2, 6, 16\); pass the same context tensor"):
        layer(decoder[:, :1], context=other, cache=cache)
    with pytest.raises(ValueError, match=r"but this call passes context=None"):
        layer(decoder[:, :1], cache=cache)
    self_cache = KVCache()
    with torch.no_grad():
        layer(decoder[:, :2], mask=causal_mask(2), cache=self_cache)
    with pytest.raises(ValueError, match=r"cache holds self-attention keys \(2 tokens\) but this call passes context "
                                         r"of shape \(2, 6, 16\)"):
        layer(decoder[:, 2:3], context=encoder, cache=self_cache)


def test_cross_attention_cache_with_batch_first_false_and_views_of_the_same_weights():
    torch.manual_seed(3)
    layer = MultiHeadAttention(16, 4, batch_first=False).double()  # transposes context at every call
    decoder = torch.randn(3, 2, 16, dtype=F64)  # (T, B, d_model)
    encoder = torch.randn(6, 2, 16, dtype=F64)  # (S, B, d_model)
    cache = KVCache()
    with torch.no_grad():
        steps = [layer(decoder[t : t + 1], context=encoder, cache=cache) for t in range(3)]
        torch.testing.assert_close(torch.cat(steps), layer(decoder, context=encoder), atol=1e-12, rtol=0)
    assert len(cache) == 6
    # the functions: a view made afresh at each step (w.T) is still the same layer's w_k
    stored = [torch.randn(16, 16, dtype=F64) for _ in range(4)]  # (out, in), as torch stores them
    x = torch.randn(1, 4, 16, dtype=F64)
    functional_cache = KVCache()
    pieces = [multi_head_attention(x[:, t : t + 1], *(w.T for w in stored), 4, cache=functional_cache)
              for t in range(4)]
    expected = multi_head_attention(x, *(w.T for w in stored), 4, mask=causal_mask(4))
    torch.testing.assert_close(torch.cat(pieces, dim=1), expected, atol=1e-10, rtol=0)
