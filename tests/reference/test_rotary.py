"""mha_ref.rotary: against transformers' own RoPE (committed vectors), and the properties the lesson states."""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_ref import causal_mask, multi_head_attention, split_heads
from mha_ref.rotary import rotary, rotary_attention
from sitekit import ROOT

VECTORS = ROOT / "tests" / "data" / "rotary-vectors.json"


def _cases():
    return json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", [case for case in _cases() if case["dtype"] == "float32"],
                         ids=lambda case: f"d{case['head_dim']}-base{case['base']:g}")
def test_rotary_matches_transformers_llama_rope(case):
    """scripts/make_rotary_vectors.py ran transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb in float32."""
    positions = torch.tensor(case["positions"])
    for name in ("q", "k"):
        x = torch.tensor(case[name], dtype=torch.float32)
        expected = torch.tensor(case[f"{name}_rotated"], dtype=torch.float64)
        ours = rotary(x, positions, base=case["base"]).double()
        # Measured: at most 1.1e-5 (position 500: float32 angles of ~500 rad are rounded to 3e-5),
        # 8e-7 where positions stay below 50.
        assert (ours - expected).abs().max() < 3e-5
        # In float64 the gap is transformers' own float32 rounding, the same size.
        exact = rotary(x.double(), positions, base=case["base"])
        assert (exact - expected).abs().max() < 3e-5


def test_the_vectors_cover_smollm2s_head_size_and_base():
    assert {(case["head_dim"], case["base"]) for case in _cases()} >= {(64, 100000.0)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), half=st.integers(1, 16), m=st.integers(0, 300), n=st.integers(0, 300),
       shift=st.integers(-200, 200))
def test_scores_depend_only_on_the_offset(seed, half, m, n, shift):
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 2 * half, generator=generator, dtype=torch.float64).unbind(0)

    def score(i: int, j: int) -> float:
        return float(rotary(q, torch.tensor([i])) @ rotary(k, torch.tensor([j])).T)

    if min(m, n) + shift >= 0:
        assert score(m, n) == pytest.approx(score(m + shift, n + shift), abs=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), half=st.integers(1, 16), length=st.integers(1, 12))
def test_rotation_keeps_lengths_and_position_zero_is_the_identity(seed, half, length):
    x = torch.randn(3, length, 2 * half, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    rotated = rotary(x)
    assert torch.allclose(rotated.norm(dim=-1), x.norm(dim=-1))
    assert torch.equal(rotated[:, 0], x[:, 0])


def test_without_positions_attention_is_permutation_equivariant_and_rotary_breaks_it():
    torch.manual_seed(0)
    x = torch.randn(1, 7, 16, dtype=torch.float64)
    w_q, w_k, w_v, w_o = (torch.randn(16, 16, dtype=torch.float64) for _ in range(4))
    order = torch.randperm(7)
    out = multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads=2)
    assert torch.allclose(multi_head_attention(x[:, order], w_q, w_k, w_v, w_o, num_heads=2), out[:, order])

    def with_rope(tokens):
        q, k = rotary(tokens @ w_q), rotary(tokens @ w_k)
        weights = (q @ k.transpose(-2, -1) / 4).softmax(-1)
        return weights @ (tokens @ w_v)

    assert not torch.allclose(with_rope(x[:, order]), with_rope(x)[:, order])


@pytest.mark.parametrize(("x", "positions", "message"), [
    (torch.ones(4, 3), None, "even feature size, got d=3"),
    (torch.ones(4, 2), torch.arange(5), r"positions must have shape \(4,\) to match x of shape \(4, 2\), got \(5,\)"),
    (torch.ones(2, 2), [0.0, float("nan")], r"positions must be finite, got \[0.0, nan\]"),
])
def test_rotary_refuses_bad_arguments(x, positions, message):
    with pytest.raises(ValueError, match=message):
        rotary(x, positions)
    with pytest.raises(TypeError, match="floating-point dtype"):
        rotary(torch.ones(4, 2, dtype=torch.int64))


@pytest.mark.parametrize("base", [0, -1e4, float("nan"), float("inf"), 1.0])
def test_rotary_refuses_a_base_that_is_not_a_finite_number_above_1(base):
    # Measured before the check: 0, -1e4 and NaN turned pairs by NaN angles and returned NaN columns.
    with pytest.raises(ValueError, match=rf"base must be a finite number above 1 .*got {base!r}"):
        rotary(torch.ones(3, 4), base=base)
    with pytest.raises(TypeError, match=r"base must be a number, got str \('1e4'\)"):
        rotary(torch.ones(3, 4), base="1e4")


def test_rotary_takes_positions_as_a_sequence_and_refuses_what_is_not_numbers():
    x = torch.randn(3, 4)
    assert torch.equal(rotary(x, [0, 5, 9]), rotary(x, torch.tensor([0, 5, 9])))
    assert torch.equal(rotary(x, (0.0, 0.5, 1.0)), rotary(x, torch.tensor([0.0, 0.5, 1.0])))
    with pytest.raises(TypeError, match=r"positions must be a tensor or a sequence of numbers, got str \('abc'\)"):
        rotary(x, "abc")
    with pytest.raises(TypeError, match=r"positions must hold real numbers, got dtype torch.bool"):
        rotary(x, [True, False, True])


def _rotary_in_the_inputs_dtype(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """The angles computed in x's own dtype: what rotary did before it computed them in float32 at least."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angle = positions.to(x.dtype)[:, None] * theta
    cos, sin = angle.cos(), angle.sin()
    first, second = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float32_and_float64_are_unchanged_bit_for_bit(dtype):
    x = torch.randn(2, 40, 64, generator=torch.Generator().manual_seed(1), dtype=dtype)
    positions = torch.arange(1000, 1040)
    for base in (10000.0, 100000.0):
        assert torch.equal(rotary(x, positions, base=base), _rotary_in_the_inputs_dtype(x, positions, base))


def test_half_precision_angles_are_computed_wide():
    x = torch.randn(1, 8, 64, generator=torch.Generator().manual_seed(2))
    exact = rotary(x.double(), base=100000.0)
    # float16 cannot hold the base 100000: in float16 every frequency but the first was 0.
    before = (_rotary_in_the_inputs_dtype(x.half(), torch.arange(8), 100000.0).double() - exact).abs().max()
    after = (rotary(x.half(), base=100000.0).double() - exact).abs().max()
    assert before > 1 and after < 0.01
    # Positions past float16's largest number (65504) were infinite angles: NaN rows.
    far = torch.arange(70000, 70008)
    assert rotary(x.half(), far, base=100000.0).isfinite().all()
    assert (rotary(x.half(), far).double() - rotary(x.double(), far)).abs().max() < 0.01


@pytest.mark.parametrize("case", [case for case in _cases() if case["dtype"] != "float32"],
                         ids=lambda case: f"{case['dtype']}-d{case['head_dim']}-base{case['base']:g}")
def test_half_precision_error_is_within_3x_of_transformers(case):
    """The same rotation in float16 or bfloat16, its error against float64 held to 3x transformers' own."""
    dtype, positions = getattr(torch, case["dtype"]), torch.tensor(case["positions"])
    for name in ("q", "k"):
        x = torch.tensor(case[name], dtype=torch.float64)
        exact = rotary(x, positions, base=case["base"])
        theirs = (torch.tensor(case[f"{name}_rotated"], dtype=torch.float64) - exact).abs().max()
        ours = (rotary(x.to(dtype), positions, base=case["base"]).double() - exact).abs().max()
        assert ours <= 3 * theirs


def test_rotary_attention_returns_weights_on_request_as_multi_head_attention_does():
    """Same argument name, default and return type: the output alone, or (output, weights (B, h, T, T))."""
    torch.manual_seed(0)
    x, ws = torch.randn(2, 5, 8), [torch.randn(8, 8) for _ in range(4)]
    for layer in (multi_head_attention, rotary_attention):
        alone = layer(x, *ws, num_heads=2, mask=causal_mask(5))
        output, weights = layer(x, *ws, num_heads=2, mask=causal_mask(5), return_weights=True)
        assert isinstance(alone, torch.Tensor) and torch.equal(alone, output)
        assert weights.shape == (2, 2, 5, 5)
        torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 5))
    # The rotary weights are the softmax of the turned queries and keys.
    q, k = (rotary(split_heads(x @ w, 2)) for w in ws[:2])
    expected = ((q @ k.transpose(-2, -1)) / 2).masked_fill(~causal_mask(5), float("-inf")).softmax(-1)
    torch.testing.assert_close(rotary_attention(x, *ws, 2, mask=causal_mask(5), return_weights=True)[1], expected)
