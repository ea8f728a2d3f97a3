"""mha_ref against PyTorch, against itself, and against bad input."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_ref import (
    MultiHeadAttention,
    causal_mask,
    head_dim,
    merge_heads,
    multi_head_attention,
    multi_head_attention_core,
    multi_head_attention_loop,
    scaled_dot_product_attention,
    split_heads,
)

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}


@st.composite
def layer_shapes(draw):
    """(batch, tokens, d_model, num_heads) with h ranging over all divisors, h = 1 and h = d_model included."""
    d_model = draw(st.sampled_from([1, 2, 4, 6, 8, 12, 16, 32]))
    num_heads = draw(st.sampled_from([n for n in range(1, d_model + 1) if d_model % n == 0]))
    batch = draw(st.integers(1, 3))
    tokens = draw(st.integers(1, 9))
    return batch, tokens, d_model, num_heads


def random_mask(generator: torch.Generator, batch: int, num_heads: int, tokens: int, kind: str) -> torch.Tensor | None:
    """None, a causal (T, T) mask, or a random (B, h, T, T) mask with the diagonal kept (no empty rows)."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(tokens)
    mask = torch.rand(batch, num_heads, tokens, tokens, generator=generator) < 0.5
    return mask | torch.eye(tokens, dtype=torch.bool)


def torch_layer(d_model: int, num_heads: int, dtype: torch.dtype, seed: int) -> torch.nn.MultiheadAttention:
    torch.manual_seed(seed)
    layer = torch.nn.MultiheadAttention(d_model, num_heads, batch_first=True, dtype=dtype).eval()
    with torch.no_grad():  # non-zero biases, so the bias path is compared too
        layer.in_proj_bias.normal_()
        layer.out_proj.bias.normal_()
    return layer


@settings(max_examples=60, deadline=None)
@given(shape=layer_shapes(), dtype=st.sampled_from([torch.float32, torch.float64]),
       mask_kind=st.sampled_from(["none", "causal", "random"]), seed=st.integers(0, 2**16))
def test_matches_torch_multihead_attention(shape, dtype, mask_kind, seed):
    batch, tokens, d_model, num_heads = shape
    reference = torch_layer(d_model, num_heads, dtype, seed)
    ours = MultiHeadAttention.from_torch(reference)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=generator, dtype=dtype)
    mask = random_mask(generator, batch, num_heads, tokens, mask_kind)

    # torch's attn_mask uses True = *blocked* and wants (B*h, T, T) for per-head masks.
    torch_mask = None if mask is None else ~mask.expand(batch, num_heads, tokens, tokens).reshape(-1, tokens, tokens)
    with torch.no_grad():
        expected, expected_weights = reference(x, x, x, attn_mask=torch_mask, average_attn_weights=False)
        output, weights = ours(x, mask=mask, return_weights=True)

    tol = TOLERANCE[dtype]
    torch.testing.assert_close(output, expected, atol=tol, rtol=tol)
    torch.testing.assert_close(weights, expected_weights, atol=tol, rtol=tol)
    torch.testing.assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)), atol=tol, rtol=0)


@settings(max_examples=60, deadline=None)
@given(shape=layer_shapes(), dtype=st.sampled_from([torch.float32, torch.float64]),
       mask_kind=st.sampled_from(["none", "causal", "random"]), seed=st.integers(0, 2**16))
def test_matches_torch_functional_sdpa(shape, dtype, mask_kind, seed):
    batch, tokens, d_model, num_heads = shape
    d_k = d_model // num_heads
    generator = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(batch, num_heads, tokens, d_k, generator=generator, dtype=dtype) for _ in range(3))
    mask = random_mask(generator, batch, num_heads, tokens, mask_kind)

    output, weights = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # torch: True = may attend, as here

    tol = TOLERANCE[dtype]
    torch.testing.assert_close(output, expected, atol=tol, rtol=tol)
    torch.testing.assert_close(weights.sum(-1), torch.ones(batch, num_heads, tokens, dtype=dtype), atol=tol, rtol=0)
    if mask is not None:
        assert bool((weights.masked_select(~mask.expand_as(weights)) == 0).all()), "a masked key got weight"


def test_is_causal_matches_causal_mask():
    q, k, v = torch.randn(3, 2, 2, 7, 4, dtype=torch.float64).unbind(0)
    output, _ = scaled_dot_product_attention(q, k, v, causal_mask(7))
    torch.testing.assert_close(output, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-12, rtol=0)


@settings(max_examples=40, deadline=None)
@given(shape=layer_shapes(), mask_kind=st.sampled_from(["none", "causal", "random"]), seed=st.integers(0, 2**16))
def test_loop_equals_batched(shape, mask_kind, seed):
    batch, tokens, d_model, num_heads = shape
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=generator, dtype=torch.float64)
    weights = [torch.randn(d_model, d_model, generator=generator, dtype=torch.float64) for _ in range(4)]
    biases = dict(zip(("b_q", "b_k", "b_v", "b_o"), torch.randn(4, d_model, generator=generator, dtype=torch.float64)))
    mask = random_mask(generator, batch, num_heads, tokens, mask_kind)

    batched, batched_weights = multi_head_attention(x, *weights, num_heads, mask, True, **biases)
    looped, looped_weights = multi_head_attention_loop(x, *weights, num_heads, mask, True, **biases)
    torch.testing.assert_close(looped, batched, atol=1e-10, rtol=1e-10)
    torch.testing.assert_close(looped_weights, batched_weights, atol=1e-10, rtol=1e-10)


@settings(max_examples=40, deadline=None)
@given(shape=layer_shapes(), seed=st.integers(0, 2**16), dtype=st.sampled_from([torch.float32, torch.float64]))
def test_the_lessons_short_core_equals_the_full_function(shape, seed, dtype):
    """The lesson's first listing (multi_head_attention_core) is the full function without its options."""
    batch, tokens, d_model, num_heads = shape
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=generator, dtype=dtype)
    weights = [torch.randn(d_model, d_model, generator=generator, dtype=dtype) / math.sqrt(d_model) for _ in range(4)]
    core = multi_head_attention_core(x, *weights, num_heads)
    torch.testing.assert_close(core, multi_head_attention(x, *weights, num_heads), atol=TOLERANCE[dtype], rtol=TOLERANCE[dtype])


def test_the_short_core_refuses_bad_input_by_name():
    x, weights = torch.randn(1, 3, 8), torch.randn(4, 8, 8)
    with pytest.raises(ValueError, match="num_heads=3"):
        multi_head_attention_core(x, *weights, 3)
    with pytest.raises(ValueError, match="x"):
        multi_head_attention_core(torch.randn(3, 8), *weights, 2)
    with pytest.raises(ValueError, match="w_o"):
        multi_head_attention_core(x, *weights[:3], torch.randn(8, 6), 2)


@settings(max_examples=40, deadline=None)
@given(shape=layer_shapes(), seed=st.integers(0, 2**16))
def test_permuting_tokens_permutes_output(shape, seed):
    batch, tokens, d_model, num_heads = shape
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, tokens, d_model, generator=generator, dtype=torch.float64)
    weights = [torch.randn(d_model, d_model, generator=generator, dtype=torch.float64) for _ in range(4)]
    order = torch.randperm(tokens, generator=generator)

    output = multi_head_attention(x, *weights, num_heads)
    permuted = multi_head_attention(x[:, order], *weights, num_heads)
    torch.testing.assert_close(permuted, output[:, order], atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("head", [0, 2, 3])
def test_changing_one_heads_queries_changes_only_that_head(head):
    torch.manual_seed(head)
    batch, tokens, d_model, num_heads = 2, 6, 16, 4
    d_k = d_model // num_heads
    x = torch.randn(batch, tokens, d_model, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(d_model, d_model, dtype=torch.float64) for _ in range(3))
    identity = torch.eye(d_model, dtype=torch.float64)  # W^O = I exposes the concatenation: the slice before W^O
    nudged = w_q.clone()
    nudged[:, head * d_k:(head + 1) * d_k] += torch.randn(d_model, d_k, dtype=torch.float64)

    before, weights_before = multi_head_attention(x, w_q, w_k, w_v, identity, num_heads, return_weights=True)
    after, weights_after = multi_head_attention(x, nudged, w_k, w_v, identity, num_heads, return_weights=True)

    changed = (after - before).abs().amax(dim=(0, 1)) > 1e-12
    assert changed.nonzero().flatten().tolist() == list(range(head * d_k, (head + 1) * d_k))
    changed_heads = (weights_after - weights_before).abs().amax(dim=(0, 2, 3)) > 1e-12
    assert changed_heads.nonzero().flatten().tolist() == [head]


def test_split_and_merge_are_inverse_and_slice_columns():
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    torch.testing.assert_close(heads[:, 1], x[:, :, 2:4])  # head 1 = columns 2..3
    torch.testing.assert_close(merge_heads(heads), x)


def test_weights_rows_sum_to_one_and_scale_is_sqrt_dk():
    q = torch.tensor([[[3.0, 0.0, 0.0, 0.0]]])
    k = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]])
    v = torch.tensor([[[1.0], [0.0]]])
    _, weights = scaled_dot_product_attention(q, k, v)
    expected_first = 1 / (1 + math.exp(-3.0 / math.sqrt(4)))
    assert weights[0, 0, 0].item() == pytest.approx(expected_first)
    assert weights.sum().item() == pytest.approx(1.0)


def test_fully_masked_row_raises_instead_of_nan():
    q = k = v = torch.randn(1, 3, 4)
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    with pytest.raises(ValueError, match=r"allows no key for 1 query row\(s\), first at index \(1,\)"):
        scaled_dot_product_attention(q, k, v, mask)


def test_module_rejects_mismatched_torch_layer():
    with pytest.raises(ValueError, match="embed_dim=8, num_heads=4.*d_model=8, num_heads=2"):
        MultiHeadAttention(8, 2).load_torch_weights(torch.nn.MultiheadAttention(8, 4))
    with pytest.raises(ValueError, match="bias mismatch: reference has bias=False, this module has bias=True"):
        MultiHeadAttention(8, 2).load_torch_weights(torch.nn.MultiheadAttention(8, 2, bias=False))
    with pytest.raises(TypeError, match="must be a torch.nn.MultiheadAttention, got Linear"):
        MultiHeadAttention(8, 2).load_torch_weights(torch.nn.Linear(8, 8))


def test_module_without_bias_matches_torch_without_bias():
    reference = torch.nn.MultiheadAttention(12, 3, bias=False, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference)
    assert ours.b_q is None
    x = torch.randn(2, 5, 12)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), reference(x, x, x)[0], atol=1e-5, rtol=1e-5)


# ---- bad input: each case names the exception type and the values the message must carry ----

def _x(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


W8 = [torch.randn(8, 8) for _ in range(4)]

BAD_INPUTS = [
    ("d_model not divisible", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=3),
     ValueError, "d_model=8 is not divisible by num_heads=3"),
    ("zero heads", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=0),
     ValueError, "num_heads must be at least 1, got 0"),
    ("float heads", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=2.0),
     TypeError, r"num_heads must be an int, got float \(2.0\)"),
    ("x of rank 2", lambda: multi_head_attention(_x(3, 8), *W8, num_heads=2),
     ValueError, r"x must have 3 dimensions, got 2 \(shape \(3, 8\)\)"),
    ("w_k wrong shape", lambda: multi_head_attention(_x(1, 3, 8), W8[0], torch.randn(8, 4), W8[2], W8[3], 2),
     ValueError, r"w_k must have shape \(d_model, d_model\) = \(8, 8\) .*got \(8, 4\)"),
    ("w_v float64 vs x float32", lambda: multi_head_attention(_x(1, 3, 8), W8[0], W8[1], W8[2].double(), W8[3], 2),
     TypeError, "w_v has dtype torch.float64 but x has dtype torch.float32"),
    ("integer x", lambda: multi_head_attention(torch.ones(1, 3, 8, dtype=torch.int64), *W8, num_heads=2),
     TypeError, "x must have a floating-point dtype, got torch.int64"),
    ("list instead of tensor", lambda: multi_head_attention([[1.0] * 8], *W8, num_heads=2),
     TypeError, "x must be a torch.Tensor, got list"),
    ("float mask", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=2, mask=torch.ones(3, 3)),
     TypeError, "mask must have dtype torch.bool .*got torch.float32"),
    ("mask wrong shape", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=2, mask=causal_mask(4)),
     ValueError, r"mask of shape \(4, 4\) does not broadcast to the \(B, h, T, S\) scores of shape \(1, 2, 3, 3\)"),
    ("mask not a tensor", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=2, mask=[[True]]),
     TypeError, "mask must be a torch.Tensor or None, got list"),
    ("bias wrong shape", lambda: multi_head_attention(_x(1, 3, 8), *W8, num_heads=2, b_o=torch.zeros(7)),
     ValueError, r"b_o must have shape \(8,\), got \(7,\)"),
    ("q/k width mismatch", lambda: scaled_dot_product_attention(_x(2, 4), _x(2, 5), _x(2, 3)),
     ValueError, r"q and k must share their last dimension, got q \(2, 4\) and k \(2, 5\)"),
    ("k/v token mismatch", lambda: scaled_dot_product_attention(_x(2, 4), _x(3, 4), _x(2, 4)),
     ValueError, r"k and v must have the same number of tokens, got k \(3, 4\) and v \(2, 4\)"),
    ("q/k/v batch mismatch", lambda: scaled_dot_product_attention(_x(2, 3, 4), _x(1, 3, 4), _x(1, 3, 4)),
     ValueError, r"same leading \(batch/head\) dimensions, got q \(2, 3, 4\), k \(1, 3, 4\) and v \(1, 3, 4\)"),
    ("q of rank 1", lambda: scaled_dot_product_attention(_x(4), _x(3, 4), _x(3, 4)),
     ValueError, r"q must have at least 2 dimensions, got 1 \(shape \(4,\)\)"),
    ("q/v dtype mismatch", lambda: scaled_dot_product_attention(_x(2, 4), _x(2, 4), _x(2, 4, dtype=torch.float64)),
     TypeError, "v has dtype torch.float64 but q has dtype torch.float32"),
    ("empty sequence", lambda: scaled_dot_product_attention(_x(0, 4), _x(0, 4), _x(0, 4)),
     ValueError, r"q must not be empty, got shape \(0, 4\)"),
    ("module heads not dividing", lambda: MultiHeadAttention(12, 5),
     ValueError, r"d_model=12 is not divisible by num_heads=5; pick num_heads from \[1, 2, 3, 4, 6, 12\]"),
    ("causal mask of zero tokens", lambda: causal_mask(0), ValueError, "num_queries must be at least 1, got 0"),
    ("head_dim with bool", lambda: head_dim(512, True), TypeError, r"num_heads must be an int, got bool \(True\)"),
]


@pytest.mark.parametrize("call, error, message", [case[1:] for case in BAD_INPUTS], ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_gets_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_there_are_at_least_ten_bad_input_cases():
    assert len(BAD_INPUTS) >= 10


# ---- attention dropout: torch's dropout_p, drawn from an optional generator ----


def test_dropout_p_zero_is_the_no_dropout_path_bit_for_bit():
    torch.manual_seed(0)
    x, ws = torch.randn(2, 5, 8), [torch.randn(8, 8) for _ in range(4)]
    plain = multi_head_attention(x, *ws, 2, mask=causal_mask(5), return_weights=True)
    zero = multi_head_attention(x, *ws, 2, mask=causal_mask(5), return_weights=True, dropout_p=0.0)
    assert all(torch.equal(a, b) for a, b in zip(plain, zero, strict=True))
    layer = MultiHeadAttention(8, 2, dropout=0.5)
    with torch.no_grad():
        assert not torch.equal(layer.train()(x), layer.eval()(x))  # training mode drops weights
        assert torch.equal(layer.eval()(x), multi_head_attention(x, **layer.weights().as_kwargs(), num_heads=2))


def test_dropout_zeroes_a_fraction_p_and_keeps_the_mean_of_every_weight():
    """Over 400 draws of a (4, 16, 16) weight tensor (409,600 Bernoulli draws), the fraction zeroed is p
    within 0.005 (more than 9 standard deviations) and each weight's mean within 20% of its own
    size (about 6 standard deviations at p = 0.3)."""
    p, draws = 0.3, 400
    generator = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 4, 16, 8, generator=generator, dtype=torch.float64)
    _, weights = scaled_dot_product_attention(q, k, v)
    dropped = torch.stack([scaled_dot_product_attention(q, k, v, dropout_p=p, generator=generator)[1]
                           for _ in range(draws)])
    zeroed = dropped == 0
    assert abs(float(zeroed.double().mean()) - p) < 0.005
    kept = dropped[~zeroed]
    torch.testing.assert_close(kept, weights.expand_as(dropped)[~zeroed] / (1 - p))  # the rest scaled up
    assert float(((dropped.mean(0) - weights).abs() / weights).max()) < 0.2


def test_dropout_draws_repeat_with_the_same_generator_and_the_output_uses_the_dropped_weights():
    q, k, v = torch.randn(3, 2, 6, 4, generator=torch.Generator().manual_seed(1))
    first = scaled_dot_product_attention(q, k, v, causal_mask(6), dropout_p=0.5,
                                         generator=torch.Generator().manual_seed(7))
    again = scaled_dot_product_attention(q, k, v, causal_mask(6), dropout_p=0.5,
                                         generator=torch.Generator().manual_seed(7))
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    output, weights = first
    torch.testing.assert_close(output, weights @ v)
    assert not bool(weights.masked_select(~causal_mask(6)).any())  # masked keys stay at 0


def test_the_module_keeps_torchs_dropout_and_training_mode():
    reference = torch.nn.MultiheadAttention(8, 2, dropout=0.25, batch_first=True).eval()
    ours = MultiHeadAttention.from_torch(reference)
    assert (ours.dropout, ours.training) == (0.25, False)
    assert ours.to_torch().dropout == 0.25
    x = torch.randn(1, 4, 8)
    torch.testing.assert_close(ours(x), reference(x, x, x)[0], atol=1e-6, rtol=1e-5)
