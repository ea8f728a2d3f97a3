"""How the benchmark pages print a measured number: milliseconds, MiB, ratios, powers of ten.

One rounding rule per kind of number, shared by the claims (:mod:`mha_site.bench.claims`), the
tables (:mod:`mha_site.bench.tables`, :mod:`mha_site.bench.gpu_section`) and the placeholder values
(:mod:`mha_site.bench.report`), so a number reads the same in a sentence and in a table.
"""

from __future__ import annotations

import re

__all__ = ["mib", "ms", "ratio", "sci"]


def sci(value: float, digits: int = 1) -> str:
    """Scientific notation without padded exponents.

    >>> sci(1e-4, 0), sci(1.27e-6)
    ('1e-4', '1.3e-6')
    """
    return re.sub(
        r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), f"{value:.{digits}e}"
    )


def ms(seconds: float) -> str:
    """Seconds as milliseconds: three significant figures, whole milliseconds from 100 up.

    >>> ms(0.0012345), ms(0.25)
    ('1.23', '250')
    """
    value = seconds * 1e3
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def ratio(value: float) -> str:
    """A ratio: two decimals below 10, whole numbers from 10 up.

    >>> ratio(1.5), ratio(12.4)
    ('1.50', '12')
    """
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def mib(n_bytes: int) -> str:
    """Bytes as MiB: two significant figures below 10 MiB, whole MiB from there.

    >>> mib(3 * 2**19), mib(300 * 2**20)
    ('1.5', '300')
    """
    value = n_bytes / 2**20
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"
