"""Dense float16/bfloat16 tensor-core peaks of known GPUs, for a kernel's "% of peak". Plain data, no torch.

NVIDIA's datasheets give two half-precision tensor figures per GPU; the larger assumes 2:4
structured sparsity, which attention does not use, so the dense one (half of it) is the
roof that attention papers divide by. A GPU missing from the table gets no percentage
rather than a guessed one.
"""

from __future__ import annotations

__all__ = ["DENSE_PEAKS", "dense_peak"]

#: (name, substrings all found in torch's device name, substrings none of which may be, dense TFLOP/s).
#: The first match wins, so a variant (PCIe, NVL) comes before its family's default.
DENSE_PEAKS: tuple[tuple[str, tuple[str, ...], tuple[str, ...], float], ...] = (
    ("H100 PCIe", ("H100", "PCIe"), (), 756.0),
    ("H100 SXM", ("H100", "HBM3"), ("NVL",), 989.0),  # torch names it "NVIDIA H100 80GB HBM3"
    ("GH200", ("GH200",), (), 989.0),
    ("H200 SXM", ("H200",), ("NVL", "GH200"), 989.0),  # "NVIDIA H200"
    ("A100", ("A100",), (), 312.0),  # SXM4 and PCIe alike
)


def dense_peak(device_name: str) -> dict[str, object] | None:
    """The table's entry for a device name as torch reports it, or None when it has none.

    >>> dense_peak("NVIDIA H100 80GB HBM3")["flops_per_s"], dense_peak("NVIDIA A100-SXM4-80GB")["name"]
    (989000000000000.0, 'A100')
    >>> dense_peak("NVIDIA H100 NVL") is None, dense_peak("Intel Xeon") is None
    (True, True)
    """
    for name, needed, excluded, tflops in DENSE_PEAKS:
        if all(part in device_name for part in needed) and not any(part in device_name for part in excluded):
            return {
                "name": name,
                "flops_per_s": tflops * 1e12,
                "source": "NVIDIA datasheet, dense float16/bfloat16 tensor core (half the figure with sparsity)",
            }
    return None
