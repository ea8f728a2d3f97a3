"""Numerics and contracts at the edges: float16 overflow, non-finite input, torch conversion, devices, tracing."""

from __future__ import annotations

import sys
import time
import weakref

import pytest
import torch
import torch.nn.functional as F

import mha_ref.attention as attention
from mha_ref import (
    AttentionWeights,
    MultiHeadAttention,
    causal_mask,
    head_dim,
    merge_heads,
    multi_head_attention,
    multi_head_attention_loop,
    scaled_dot_product_attention,
    split_heads,
    tiled_attention,
)


# ---- float16: the product q @ k^T must not overflow before the scale ----

def test_float16_large_logits_stay_finite_like_torch():
    q = torch.zeros(1, 2, 64).half()
    k = torch.zeros(1, 3, 64).half()
    q[0, 0] = 40
    k[0, 0] = 40
    k[0, 1] = 39
    v = torch.arange(3 * 4, dtype=torch.float16).view(1, 3, 4)
    assert torch.isinf((q @ k.transpose(-2, -1))).any(), "the example must overflow when unscaled"
    ours, weights = scaled_dot_product_attention(q, k, v)
    expected = F.scaled_dot_product_attention(q, k, v)
    assert torch.isfinite(ours).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(ours, expected, atol=1e-2, rtol=1e-2)
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    torch.testing.assert_close(ours.double(), exact, atol=1e-2, rtol=1e-2)


def test_float16_layer_with_tied_query_and_key_weights_matches_float64():
    torch.manual_seed(0)
    d_model, num_heads = 64, 2
    x = (35 * torch.sign(torch.randn(2, 6, d_model))).half()  # |x| = 35 everywhere
    w = torch.eye(d_model)
    weights = AttentionWeights(w, w, w, w)  # W_Q = W_K: each token scores itself at 32 * 35^2 > 65504
    assert torch.isinf(x[0, :1] @ x[0, :1].transpose(-2, -1)).all()
    ours = multi_head_attention(x, **weights.to(torch.float16).as_kwargs(), num_heads=num_heads)
    exact = multi_head_attention(x.double(), **weights.to(torch.float64).as_kwargs(), num_heads=num_heads)
    assert int(torch.isnan(ours).sum()) == 0
    torch.testing.assert_close(ours.double(), exact, atol=0.05, rtol=1e-2)


# ---- non-finite input: refused by default, allowed on request ----

@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_sdpa_refuses_non_finite_input_naming_tensor_and_index(name):
    tensors = {n: torch.randn(2, 3, 4) for n in "qkv"}
    tensors[name][1, 2, 0] = float("nan") if name != "k" else float("inf")
    with pytest.raises(ValueError, match=rf"{name} holds 1 non-finite value\(s\) .*first at index \(1, 2, 0\); "
                                         "pass check_finite=False"):
        scaled_dot_product_attention(tensors["q"], tensors["k"], tensors["v"])
    output, _ = scaled_dot_product_attention(tensors["q"], tensors["k"], tensors["v"], check_finite=False)
    assert not torch.isfinite(output).all()  # skipping the check gives torch's own result


def test_layer_and_tiled_refuse_non_finite_input():
    x = torch.randn(1, 4, 8)
    x[0, 3, 5] = float("nan")
    ws = [torch.randn(8, 8) for _ in range(4)]
    for fn in (multi_head_attention, multi_head_attention_loop):
        with pytest.raises(ValueError, match=r"x holds 1 non-finite value\(s\).*\(0, 3, 5\)"):
            fn(x, *ws, num_heads=2)
        assert torch.isnan(fn(x, *ws, num_heads=2, check_finite=False)).any()
    bad_w = ws[1].clone()
    bad_w[2, 2] = float("-inf")
    with pytest.raises(ValueError, match=r"w_k holds 1 non-finite"):
        multi_head_attention(torch.randn(1, 4, 8), ws[0], bad_w, ws[2], ws[3], num_heads=2)
    with pytest.raises(ValueError, match=r"q holds 1 non-finite"):
        tiled_attention(x, x.nan_to_num(), x.nan_to_num())
    with pytest.raises(ValueError, match="empty_rows must be one of"):
        multi_head_attention(torch.randn(1, 4, 8), *ws, num_heads=2, empty_rows="nan")


# ---- from_torch / to_torch ----

def test_from_torch_follows_batch_first_false():
    torch.manual_seed(1)
    reference = torch.nn.MultiheadAttention(8, 2).eval()  # default: (T, B, d_model)
    ours = MultiHeadAttention.from_torch(reference)
    x = torch.randn(5, 3, 8)  # (T, B, d_model)
    with torch.no_grad():
        expected, expected_weights = reference(x, x, x, average_attn_weights=False)
        output, weights = ours(x, return_weights=True)
    torch.testing.assert_close(output, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-5)
    assert ours.to_torch().batch_first is False


@pytest.mark.parametrize(
    "layer, error, message",
    [
        (torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=6), ValueError, r"kdim=4, vdim=6 but embed_dim=8"),
        (torch.nn.Linear(4, 4), TypeError, r"reference must be a torch.nn.MultiheadAttention, got Linear"),
        (torch.nn.MultiheadAttention(8, 2, add_bias_kv=True), ValueError, "add_bias_kv or add_zero_attn"),
    ],
    ids=["kdim-vdim", "linear", "bias-kv"],
)
def test_from_torch_refuses_what_it_cannot_copy(layer, error, message):
    with pytest.raises(error, match=message):
        MultiHeadAttention.from_torch(layer)


def test_from_torch_and_to_torch_leave_the_global_rng_alone():
    reference = torch.nn.MultiheadAttention(16, 4, batch_first=True)
    state = torch.random.get_rng_state()
    ours = MultiHeadAttention.from_torch(reference)
    back = ours.to_torch()
    MultiHeadAttention.from_weights(ours.weights(), num_heads=4)
    assert torch.equal(torch.random.get_rng_state(), state)
    for name in ("in_proj_weight", "in_proj_bias"):
        torch.testing.assert_close(getattr(back, name), getattr(reference, name), atol=0, rtol=0)
    torch.testing.assert_close(back.out_proj.weight, reference.out_proj.weight, atol=0, rtol=0)


def test_grouped_layer_cannot_become_a_torch_layer():
    with pytest.raises(ValueError, match="num_kv_heads=1 < num_heads=4"):
        MultiHeadAttention(8, 4, num_kv_heads=1).to_torch()


# ---- devices, helpers, head_dim, tracing ----

def test_mask_on_another_device_is_refused_naming_both():
    x = torch.randn(1, 3, 8)
    ws = [torch.randn(8, 8) for _ in range(4)]
    meta_mask = torch.ones(3, 3, dtype=torch.bool, device="meta")
    with pytest.raises(ValueError, match=r"mask is on meta but the \(B, h, T, S\) scores are on cpu"):
        multi_head_attention(x, *ws, num_heads=2, mask=meta_mask)
    with pytest.raises(ValueError, match=r"mask is on meta but the scores are on cpu"):
        scaled_dot_product_attention(x, x, x, meta_mask)
    with pytest.raises(ValueError, match=r"mask is on meta but the scores are on cpu"):
        tiled_attention(x, x, x, meta_mask)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: split_heads(torch.randn(2, 5, 8), 3), ValueError,
         r"num_heads dividing d_model; got x of shape \(2, 5, 8\) and num_heads=3"),
        (lambda: split_heads(torch.randn(5, 8), 2), ValueError, r"got x of shape \(5, 8\) and num_heads=2"),
        (lambda: split_heads(torch.randn(2, 5, 8), 0), ValueError, r"got x of shape \(2, 5, 8\) and num_heads=0"),
        (lambda: merge_heads(torch.randn(2, 5, 8)), ValueError, r"merge_heads needs x \(B, h, T, d_k\), got shape \(2, 5, 8\)"),
    ],
    ids=["split-indivisible", "split-rank", "split-zero-heads", "merge-rank"],
)
def test_public_helpers_validate_their_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_head_dim_suggestion_is_bounded_for_huge_d_model():
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"d_model=10000000001 is not divisible by num_heads=2; pick num_heads from "
                                         r"\[1, 101, 3541, .*, 10000000001\]"):
        head_dim(10**10 + 1, 2)
    with pytest.raises(ValueError, match=r"divisors of 1000000000000000001 \(e.g. \[1, 101"):
        head_dim(10**18 + 1, 2)
    assert time.perf_counter() - start < 30  # the old divisor list over range(d_model) took hours


def test_jit_trace_matches_eager():
    torch.manual_seed(2)
    layer = MultiHeadAttention(8, 2).eval()
    example = torch.randn(2, 5, 8)
    with pytest.warns(torch.jit.TracerWarning):  # shape checks become constants of the trace
        traced = torch.jit.trace(layer, example)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(traced(x), layer(x), atol=1e-6, rtol=1e-6)


# ---- the loop keeps one head's weights at a time unless asked for all ----

@pytest.mark.parametrize("return_weights", [False, True])
def test_loop_keeps_weights_only_when_asked(monkeypatch, return_weights):
    live: list[weakref.ref] = []
    most_alive_at_a_call = []
    original = attention.scaled_dot_product_attention

    def recording(*args, **kwargs):
        most_alive_at_a_call.append(sum(ref() is not None for ref in live))
        output, weights = original(*args, **kwargs)
        live.append(weakref.ref(weights))
        return output, weights

    monkeypatch.setattr(attention, "scaled_dot_product_attention", recording)
    x = torch.randn(1, 6, 16)
    result = multi_head_attention_loop(x, *(torch.randn(16, 16) for _ in range(4)), 8, return_weights=return_weights)
    assert len(most_alive_at_a_call) == 8
    if return_weights:
        assert most_alive_at_a_call == list(range(8))  # every earlier head's weights kept for the result
        assert result[1].shape == (1, 8, 6, 6)
    else:
        assert max(most_alive_at_a_call) <= 1  # only the previous head's, about to be replaced


# ---- empty rows: raise by default, zeros on request ----

def test_left_padded_causal_batch_with_empty_rows_zero():
    torch.manual_seed(3)
    d_model, num_heads, tokens = 8, 2, 5
    ws = [torch.randn(d_model, d_model, dtype=torch.float64) for _ in range(4)]
    x = torch.randn(2, tokens, d_model, dtype=torch.float64)
    real = torch.tensor([[False, False, True, True, True], [True] * tokens])  # item 0 is left-padded by 2
    mask = causal_mask(tokens) & real[:, None, None, :]  # (B, 1, T, T): no query sees padding
    with pytest.raises(ValueError, match=r"allows no key for 2 query row\(s\), first at index \(0, 0, 0\)"):
        multi_head_attention(x, *ws, num_heads, mask)
    for fn in (multi_head_attention, multi_head_attention_loop):
        output, weights = fn(x, *ws, num_heads, mask, True, empty_rows="zero")
        assert output[0, :2].abs().max() == 0 and weights[0, :, :2].abs().max() == 0
        alone = multi_head_attention(x[:1, 2:], *ws, num_heads, causal_mask(3))  # item 0 without its padding
        torch.testing.assert_close(output[0, 2:], alone[0], atol=1e-12, rtol=0)
        full = multi_head_attention(x[1:], *ws, num_heads, causal_mask(tokens))
        torch.testing.assert_close(output[1], full[0], atol=1e-12, rtol=0)


def _checks_run(call) -> dict[str, int]:
    """How many times each argument check of mha_ref ran during ``call()``."""
    counts: dict[str, int] = {}

    def profile(frame, event, arg):
        name = frame.f_code.co_name
        if event == "call" and name.startswith(("check_", "_check_")) and "mha_ref" in frame.f_code.co_filename:
            counts[name] = counts.get(name, 0) + 1

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return counts


def test_a_layer_checks_its_arguments_once_not_again_in_each_helper():
    # The loop calls project 25 times and scaled_dot_product_attention 8 times at 8 heads:
    # its own check covers what they are given, so theirs do not run again.
    x, ws = torch.randn(1, 16, 64), [torch.randn(64, 64) for _ in range(4)]
    for layer in (attention.multi_head_attention_loop, attention.multi_head_attention):
        counts = _checks_run(lambda: layer(x, *ws, 8))
        assert counts.get("_check_layer_call") == 1
        assert "_check_project" not in counts and "check_sdpa_arguments" not in counts, counts
    # The reader's own call of a helper is checked, every time.
    assert _checks_run(lambda: attention.project(x, ws[0]))["_check_project"] == 1
    with pytest.raises(ValueError, match="weight must have shape"):
        attention.project(x, torch.randn(3, 3))
    with pytest.raises(TypeError, match=r"multi_head_attention_loop\(\) got an unexpected keyword argument 'cache'"):
        attention.multi_head_attention_loop(x, *ws, 8, cache=None)
