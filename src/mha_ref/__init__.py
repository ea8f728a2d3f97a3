"""A small, readable reference implementation of multi-head attention.

Every formula, figure and number on the mha-lesson site is computed by, or checked
against, this package.
"""

from mha_ref.attention import (
    causal_mask, merge_heads, multi_head_attention, multi_head_attention_core, multi_head_attention_loop, project,
    scaled_dot_product_attention, split_heads,
)
from mha_ref.cache import KVCache
from mha_ref.module import MultiHeadAttention
from mha_ref.rotary import rotary, rotary_attention
from mha_ref.tiled import tiled_attention
from mha_ref.validation import head_dim
from mha_ref.weights import AttentionWeights

__all__ = [
    "AttentionWeights", "KVCache", "MultiHeadAttention", "causal_mask", "head_dim", "merge_heads",
    "multi_head_attention", "multi_head_attention_core", "multi_head_attention_loop", "project", "rotary",
    "rotary_attention", "scaled_dot_product_attention", "split_heads", "tiled_attention"
]

