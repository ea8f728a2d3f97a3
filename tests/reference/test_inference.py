"""What real models run, against torch: grouped-query and cross-attention, bottom-right causal masks, the KV cache,
tiled attention."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right
from torch.utils._python_dispatch import TorchDispatchMode

from mha_ref import (
    KVCache,
    MultiHeadAttention,
    causal_mask,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    project,
    scaled_dot_product_attention,
    split_heads,
    tiled_attention,
)
from mha_ref.cache import kv_cache_bytes_per_token

F64 = torch.float64


@st.composite
def grouped_shapes(draw):
    """(batch, tokens, source tokens, d_model, num_heads, num_kv_heads) with num_kv_heads dividing num_heads."""
    d_model = draw(st.sampled_from([2, 4, 8, 12, 16]))
    num_heads = draw(st.sampled_from([n for n in range(1, d_model + 1) if d_model % n == 0]))
    num_kv_heads = draw(st.sampled_from([n for n in range(1, num_heads + 1) if num_heads % n == 0]))
    return (draw(st.integers(1, 3)), draw(st.integers(1, 7)), draw(st.integers(1, 9)), d_model, num_heads,
            num_kv_heads)


@settings(max_examples=50, deadline=None)
@given(shape=grouped_shapes(), cross=st.booleans(), seed=st.integers(0, 2**16))
def test_grouped_query_attention_matches_torch_enable_gqa(shape, cross, seed):
    batch, tokens, source_tokens, d_model, num_heads, num_kv_heads = shape
    d_k = d_model // num_heads
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=gen, dtype=F64)
    context = torch.randn(batch, source_tokens, d_model, generator=gen, dtype=F64) if cross else None
    source = x if context is None else context
    w_q, w_o = (torch.randn(d_model, d_model, generator=gen, dtype=F64) for _ in range(2))
    w_k, w_v = (torch.randn(d_model, num_kv_heads * d_k, generator=gen, dtype=F64) for _ in range(2))
    b_k = torch.randn(num_kv_heads * d_k, generator=gen, dtype=F64)
    mask = torch.rand(batch, 1, tokens, source.shape[1], generator=gen) < 0.7
    mask[..., 0] = True  # every query keeps a key

    q = split_heads(project(x, w_q), num_heads)  # (B, h, T, d_k)
    k = split_heads(project(source, w_k, b_k), num_kv_heads)  # (B, h_kv, S, d_k)
    v = split_heads(project(source, w_v), num_kv_heads)
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    expected = project(merge_heads(heads), w_o)

    for fn in (multi_head_attention, multi_head_attention_loop):
        output = fn(x, w_q, w_k, w_v, w_o, num_heads, mask, context=context, num_kv_heads=num_kv_heads, b_k=b_k)
        torch.testing.assert_close(output, expected, atol=1e-10, rtol=1e-10)


def test_multi_query_layer_module_and_errors():
    layer = MultiHeadAttention(8, 4, num_kv_heads=1).double()
    x = torch.randn(2, 5, 8, dtype=F64)
    out, weights = layer(x, return_weights=True)
    assert out.shape == (2, 5, 8) and weights.shape == (2, 4, 5, 5)
    assert "num_kv_heads=1" in repr(layer)
    with pytest.raises(ValueError, match="num_kv_heads=3 must divide num_heads=4"):
        multi_head_attention(torch.randn(1, 2, 8), *(torch.randn(8, 8) for _ in range(4)), 4, num_kv_heads=3)
    with pytest.raises(ValueError, match=r"w_k must have shape \(d_model, num_kv_heads \* d_k\) = \(8, 4\)"):
        multi_head_attention(torch.randn(1, 2, 8), *(torch.randn(8, 8) for _ in range(4)), 4, num_kv_heads=2)
    with pytest.raises(ValueError, match=r"context must have shape \(B, S, d_model\) = \(1, S, 8\)"):
        multi_head_attention(torch.randn(1, 2, 8), *(torch.randn(8, 8) for _ in range(4)), 4,
                             context=torch.randn(1, 3, 6))


@settings(max_examples=30, deadline=None)
@given(batch=st.integers(1, 3), tokens=st.integers(1, 6), source_tokens=st.integers(1, 8),
       heads=st.sampled_from([1, 2, 4]), seed=st.integers(0, 2**16))
def test_cross_attention_with_key_padding_matches_torch(batch, tokens, source_tokens, heads, seed):
    torch.manual_seed(seed)
    d_model = 8
    reference = torch.nn.MultiheadAttention(d_model, heads, batch_first=True, dtype=F64).eval()
    ours = MultiHeadAttention.from_torch(reference)
    gen = torch.Generator().manual_seed(seed)
    query = torch.randn(batch, tokens, d_model, generator=gen, dtype=F64)  # the decoder's tokens
    memory = torch.randn(batch, source_tokens, d_model, generator=gen, dtype=F64)  # the encoder's
    padding = torch.rand(batch, source_tokens, generator=gen) < 0.4  # torch: True = ignore this key
    padding[:, 0] = False
    with torch.no_grad():
        expected, expected_weights = reference(query, memory, memory, key_padding_mask=padding,
                                               average_attn_weights=False)
        # ours: True = may attend, so the polarity flips; (B, 1, 1, S) broadcasts over heads and queries
        output, weights = ours(query, context=memory, mask=~padding[:, None, None, :], return_weights=True)
    torch.testing.assert_close(output, expected, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(weights, expected_weights, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("num_queries, num_keys", [(1, 5), (3, 7), (4, 4)])
def test_causal_mask_is_bottom_right_and_is_causal_is_top_left(num_queries, num_keys):
    torch.manual_seed(num_keys)
    q = torch.randn(2, num_queries, 4, dtype=F64)
    k, v = torch.randn(2, 2, num_keys, 4, dtype=F64)
    mask = causal_mask(num_queries, num_keys)
    assert bool(mask[-1].all())  # the last query sees every key
    ours, _ = scaled_dot_product_attention(q, k, v, mask)
    lower_right = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(num_queries, num_keys))
    torch.testing.assert_close(ours, lower_right, atol=1e-12, rtol=0)
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if num_queries == num_keys:
        torch.testing.assert_close(top_left, ours, atol=1e-12, rtol=0)
    else:  # is_causal lets the queries see only the first keys: a different answer
        shifted, _ = scaled_dot_product_attention(q, k, v, torch.ones(num_queries, num_keys, dtype=torch.bool).tril())
        torch.testing.assert_close(top_left, shifted, atol=1e-12, rtol=0)
        assert (top_left - ours).abs().max() > 1e-3


def test_causal_mask_refuses_fewer_keys_than_queries():
    with pytest.raises(ValueError, match="num_keys must be at least 3, got 2"):
        causal_mask(3, 2)


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
@pytest.mark.parametrize("prefill", [1, 3, 6])
def test_prefill_then_decode_with_cache_equals_one_causal_pass(num_kv_heads, prefill):
    torch.manual_seed(prefill)
    tokens = 9
    layer = MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads).double()
    with torch.no_grad():
        for bias in (layer.b_q, layer.b_k, layer.b_v, layer.b_o):
            bias.normal_()
    x = torch.randn(2, tokens, 16, dtype=F64)
    with torch.no_grad():
        full = layer(x, mask=causal_mask(tokens))
        cache = KVCache()
        pieces = [layer(x[:, :prefill], mask=causal_mask(prefill), cache=cache)]
        for t in range(prefill, tokens):
            pieces.append(layer(x[:, t : t + 1], cache=cache))  # one new token sees every cached one
    assert len(cache) == tokens
    assert cache.keys.shape == (2, num_kv_heads, tokens, 4)
    assert cache.nbytes() == 2 * 2 * num_kv_heads * tokens * 4 * 8
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, atol=1e-10, rtol=1e-10)


def test_cache_chunks_need_bottom_right_masks_and_matching_layers():
    layer = MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 6, 8, dtype=F64)
    with torch.no_grad():
        cache = KVCache()
        first = layer(x[:, :2], mask=causal_mask(2), cache=cache)
        second = layer(x[:, 2:], mask=causal_mask(4, 6), cache=cache)  # 4 queries after 2 cached keys
        torch.testing.assert_close(torch.cat([first, second], 1), layer(x, mask=causal_mask(6)), atol=1e-10, rtol=0)
        with pytest.raises(ValueError, match=r"mask of shape \(1, 3\) does not broadcast .* \(1, 2, 1, 7\)"):
            layer(x[:, :1], mask=causal_mask(1, 3), cache=cache)
        with pytest.raises(ValueError, match=r"the cache holds \(B, h_kv, d_k\) = \(1, 2, 4\) but this call has"):
            MultiHeadAttention(8, 4).double()(x[:, :1], cache=cache)
        with pytest.raises(TypeError, match="cache must be a KVCache or None, got dict"):
            multi_head_attention(x, *(torch.randn(8, 8, dtype=F64) for _ in range(4)), 2, cache={})
    cache = KVCache()
    cache.append(torch.ones(1, 2, 3, 4), torch.ones(1, 2, 3, 4))
    with pytest.raises(TypeError, match=r"^the cache holds torch.float32 on cpu but k has torch.float64 on cpu; "
                                        r"convert k or start a new KVCache$"):
        cache.append(torch.ones(1, 2, 1, 4, dtype=F64), torch.ones(1, 2, 1, 4, dtype=F64))


def test_kv_cache_bytes_per_token_formula():
    assert kv_cache_bytes_per_token(32, 8, 128) == 131072  # 2 x 32 x 8 x 128 x 2 bytes
    with pytest.raises(ValueError, match="num_layers must be at least 1, got 0"):
        kv_cache_bytes_per_token(0, 8, 128)


@st.composite
def tiled_cases(draw):
    batch, heads = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    tokens, keys, d_k = draw(st.integers(1, 9)), draw(st.integers(1, 12)), draw(st.sampled_from([1, 4, 8]))
    block = draw(st.sampled_from([1, 2, 3, 5, keys, keys + 4, 128]))
    return batch, heads, tokens, keys, d_k, block, draw(st.sampled_from(["none", "random", "causal"]))


@settings(max_examples=80, deadline=None)
@given(case=tiled_cases(), dtype=st.sampled_from([torch.float32, F64]), seed=st.integers(0, 2**16))
def test_tiled_attention_matches_torch_for_every_block_size(case, dtype, seed):
    batch, heads, tokens, keys, d_k, block, mask_kind = case
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, tokens, d_k, generator=gen, dtype=dtype) * 3
    k, v = (torch.randn(batch, heads, keys, d_k, generator=gen, dtype=dtype) * 3 for _ in range(2))
    mask = None
    if mask_kind == "random":
        mask = torch.rand(batch, heads, tokens, keys, generator=gen) < 0.5
        mask[..., -1] = True  # the last block alone keeps some rows alive: -inf until then
    elif mask_kind == "causal" and keys >= tokens:
        mask = causal_mask(tokens, keys)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(tiled_attention(q, k, v, mask, block_size=block), expected, atol=tol, rtol=tol)


class _Shapes(TorchDispatchMode):
    """Records the shape of every floating-point tensor an aten operation returns."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        for item in result if isinstance(result, (tuple, list)) else [result]:
            if isinstance(item, torch.Tensor) and item.is_floating_point():
                self.shapes.append(tuple(item.shape))
        return result


def test_tiled_attention_never_forms_the_full_score_matrix():
    q, k, v = torch.randn(3, 1, 2, 64, 8)
    mask = causal_mask(64)
    with _Shapes() as seen:
        tiled_attention(q, k, v, mask, block_size=16)
    assert (1, 2, 64, 16) in seen.shapes  # a block of scores
    assert all(shape[-2:] != (64, 64) for shape in seen.shapes), "a (T, T) tensor of scores was formed"
    with _Shapes() as reference:
        scaled_dot_product_attention(q, k, v, mask)
    assert (1, 2, 64, 64) in reference.shapes


def test_tiled_attention_refuses_bad_block_size_and_empty_rows():
    q = torch.randn(1, 3, 4)
    with pytest.raises(ValueError, match="block_size must be at least 1, got 0"):
        tiled_attention(q, q, q, block_size=0)
    with pytest.raises(ValueError, match=r"allows no key for 1 query row"):
        tiled_attention(q, q, q, torch.tensor([[True, False, False], [False] * 3, [True] * 3]))
