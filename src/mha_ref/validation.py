"""Argument checks shared by the public functions of :mod:`mha_ref`.

Each check raises :class:`TypeError` for a value of the wrong kind (not a tensor,
an integer dtype, two dtypes that differ) and :class:`ValueError` for a value of
the right kind with the wrong size or value, and every message names the values it saw,
so a reader can fix the call without opening a debugger.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import torch
from torch import Tensor

__all__ = [
    "check_bool", "check_device", "check_dropout", "check_dtype", "check_int", "check_number", "check_tensor",
    "check_num_heads", "check_same_dtype_and_device", "check_mask", "check_mask_rows", "check_finite", "checked_by",
    "has_values", "head_dim", "is_compiling"
]

_Function = TypeVar("_Function", bound=Callable[..., object])


def check_tensor(name: str, value: object, ndim: int | None = None, min_ndim: int | None = None) -> Tensor:
    """Return ``value`` if it is a floating-point tensor of the required rank.

    >>> check_tensor("x", [1.0, 2.0])
    Traceback (most recent call last):
    ...
    TypeError: x must be a torch.Tensor, got list
    """
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {value.dtype}")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got {value.ndim} (shape {tuple(value.shape)})")
    if min_ndim is not None and value.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimensions, got {value.ndim} (shape {tuple(value.shape)})"
        )
    if any(size == 0 for size in value.shape):
        raise ValueError(f"{name} must not be empty, got shape {tuple(value.shape)}")
    return value


def _check_ids(name: str, value: object, holds: str = "integer token ids") -> Tensor:
    """Return ``value`` if it is a tensor of integers (token ids, positions), where :func:`check_tensor` wants floats."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dtype == torch.bool or value.is_floating_point() or value.is_complex():
        raise TypeError(f"{name} must hold {holds}, got {value.dtype}")
    return value


def check_int(name: str, value: object, minimum: int = 1) -> int:
    """Return ``value`` if it is an ``int`` (``bool`` is refused) of at least ``minimum``.

    >>> check_int("steps", 0)
    Traceback (most recent call last):
    ...
    ValueError: steps must be at least 1, got 0
    >>> check_int("steps", 2.0)
    Traceback (most recent call last):
    ...
    TypeError: steps must be an int, got float (2.0)
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool``: a truthy string or number would pass a plain ``if`` silently.

    >>> check_bool("return_weights", "no")
    Traceback (most recent call last):
    ...
    TypeError: return_weights must be a bool, got str ('no')
    """
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} ({value!r})")
    return value


def check_number(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number (``bool`` is refused).

    >>> check_number("scale", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: scale must be a finite number, got nan
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} ({value!r})")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_dtype(name: str, value: object) -> torch.dtype | None:
    """Return ``value`` if it is None or a floating-point ``torch.dtype`` (attention's weights take fractions).

    >>> check_dtype("dtype", torch.int64)
    Traceback (most recent call last):
    ...
    TypeError: dtype must be a floating-point torch.dtype, got torch.int64
    """
    if value is None:
        return None
    if not isinstance(value, torch.dtype):
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {type(value).__name__} ({value!r})")
    if not value.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {value}")
    return value


def check_device(name: str, value: object) -> torch.device | None:
    """Return ``value`` as a ``torch.device`` (None stays None) if torch knows it.

    >>> check_device("device", "gpu0")
    Traceback (most recent call last):
    ...
    ValueError: device must be a torch.device or a device string such as 'cpu', got 'gpu0'
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (torch.device, str, int)):
        raise TypeError(
            f"{name} must be a torch.device or a device string such as 'cpu', got {type(value).__name__} ({value!r})"
        )
    try:
        return torch.device(value)
    except (RuntimeError, ValueError) as error:  # torch lists every device type it knows, not which argument
        raise ValueError(f"{name} must be a torch.device or a device string such as 'cpu', got {value!r}") from error


#: True while a checked function runs: the arguments it passes on were made from checked ones.
_INSIDE_CHECKED_CALL = contextvars.ContextVar("mha_ref_inside_checked_call", default=False)


def checked_by(check: Callable[..., object]) -> Callable[[_Function], _Function]:
    """Decorate a function so that ``check`` sees its arguments first, on the outermost call only.

    For a function whose body a page shows in full: the decorator sits above the
    listing's first line, so the page shows the computation and the call still checks.
    The function keeps its name, signature and docstring.

    A checked function called from inside another one skips its check: its caller checked
    the arguments these were made from. (The one-head-at-a-time loop at 8 heads calls
    ``project`` 25 times and ``scaled_dot_product_attention`` 8 times; checked each time,
    a call ran 191 checks instead of 20.) A call from the reader's own code is always checked.

    >>> @checked_by(lambda n: check_int("n", n))
    ... def double(n):
    ...     return 2 * n
    >>> double(0)
    Traceback (most recent call last):
    ...
    ValueError: n must be at least 1, got 0
    >>> @checked_by(lambda n: check_int("n", n))
    ... def quadruple(n):
    ...     return double(double(n))  # the inner calls skip the check
    >>> quadruple(3)
    12
    """

    def decorate(function: _Function) -> _Function:
        keywords = set(inspect.signature(function).parameters)

        def check_call(args: tuple, kwargs: dict) -> None:
            # A call that does not fit the function's signature is refused by the function itself,
            # naming it, before the check (whose signature may be wider) sees the arguments.
            if not keywords.issuperset(kwargs):
                function(*args, **kwargs)
            try:
                check(*args, **kwargs)
            except TypeError as error:
                if error.__traceback__ is not None and error.__traceback__.tb_next is None:
                    function(*args, **kwargs)  # the arguments did not bind: the function says why
                raise

        @functools.wraps(function)
        def checked(*args: object, **kwargs: object) -> object:
            if is_compiling():  # torch.compile cannot trace a ContextVar: check every call, as before
                check(*args, **kwargs)
                return function(*args, **kwargs)
            if _INSIDE_CHECKED_CALL.get():
                return function(*args, **kwargs)
            check_call(args, kwargs)
            token = _INSIDE_CHECKED_CALL.set(True)
            try:
                return function(*args, **kwargs)
            finally:
                _INSIDE_CHECKED_CALL.reset(token)

        return checked  # type: ignore[return-value]

    return decorate


def check_num_heads(num_heads: object) -> int:
    """Return ``num_heads`` if it is a positive ``int`` (``bool`` is refused).

    >>> check_num_heads(0)
    Traceback (most recent call last):
    ...
    ValueError: num_heads must be at least 1, got 0
    """
    return check_int("num_heads", num_heads)


def head_dim(d_model: int, num_heads: int) -> int:
    """The width of one head's subspace, ``d_k = d_model / num_heads``.

    The original transformer used 512 dimensions split across 8 heads:

    >>> head_dim(512, 8)
    64
    >>> head_dim(10, 3)
    Traceback (most recent call last):
    ...
    ValueError: d_model=10 is not divisible by num_heads=3; pick num_heads from [1, 2, 5, 10]
    """
    check_num_heads(num_heads)
    check_int("d_model", d_model)
    if d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}; pick num_heads from {_divisors(d_model)}"
        )
    return d_model // num_heads


def _divisors(number: int, limit: int = 24) -> str:
    """Up to ``limit`` divisors of ``number``, found in O(sqrt(number)) steps (at most 200,000 of them)."""
    root = math.isqrt(number)
    small = [candidate for candidate in range(1, min(root, 2 * 10**5) + 1) if number % candidate == 0]
    if root > 2 * 10**5:  # search stopped early: say so rather than list a wrong set
        return f"divisors of {number} (e.g. {small[:limit]})"
    found = small + [number // candidate for candidate in reversed(small) if candidate * candidate != number]
    if len(found) > limit:
        return str(found[: limit // 2])[:-1] + ", ..., " + str(found[-limit // 2 :])[1:]
    return str(found)


def _check_weight_names(name: str, w: object) -> Mapping[str, object]:
    """Return ``w`` if it maps exactly the names ``w_q``, ``w_k``, ``w_v``, ``w_o`` (a missing one is a bare KeyError)."""
    if not isinstance(w, Mapping):
        raise TypeError(f"{name} must be a mapping of w_q, w_k, w_v and w_o to tensors, got {type(w).__name__}")
    if sorted(w) != ["w_k", "w_o", "w_q", "w_v"]:
        raise ValueError(f"{name} must have exactly the keys ['w_k', 'w_o', 'w_q', 'w_v'], got {sorted(w)}")
    return w


def check_same_dtype_and_device(named: Sequence[tuple[str, Tensor]]) -> None:
    """Raise unless every tensor shares the first one's dtype and device.

    >>> check_same_dtype_and_device([("q", torch.ones(1)), ("k", torch.ones(1, dtype=torch.float64))])
    Traceback (most recent call last):
    ...
    TypeError: k has dtype torch.float64 but q has dtype torch.float32; convert them to one dtype
    """
    first_name, first = named[0]
    for name, tensor in named[1:]:
        if tensor.dtype != first.dtype:
            raise TypeError(
                f"{name} has dtype {tensor.dtype} but {first_name} has dtype {first.dtype}; "
                "convert them to one dtype"
            )
        if tensor.device != first.device:
            raise ValueError(f"{name} is on {tensor.device} but {first_name} is on {first.device}")


def check_mask(
    mask: object, target_shape: Sequence[int], target_name: str = "the scores", device: torch.device | None = None
) -> Tensor:
    """Return ``mask`` if it is a boolean tensor that broadcasts to ``target_shape``.

    >>> check_mask(torch.ones(3, 3), (1, 2, 3, 3))
    Traceback (most recent call last):
    ...
    TypeError: mask must have dtype torch.bool (True = may attend), got torch.float32
    >>> check_mask(torch.ones(4, 4, dtype=torch.bool), (1, 2, 3, 3))
    Traceback (most recent call last):
    ...
    ValueError: mask of shape (4, 4) does not broadcast to the scores of shape (1, 2, 3, 3)
    >>> check_mask(torch.ones(3, 3, dtype=torch.bool, device="meta"), (3, 3), device=torch.device("cpu"))
    Traceback (most recent call last):
    ...
    ValueError: mask is on meta but the scores are on cpu; move the mask with mask.to(cpu)
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
    if device is not None and mask.device != device:
        raise ValueError(f"mask is on {mask.device} but {target_name} are on {device}; move the mask with mask.to({device})")
    target, shape = tuple(target_shape), tuple(mask.shape)
    # torch.broadcast_shapes's rule, written out: its first call imports torch.fx's symbolic shapes
    # (sympy), 1.5 s of every fresh process that masks (measured here).
    if len(shape) > len(target) or any(size not in (1, full) for size, full in zip(shape[::-1], target[::-1])):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to {target_name} of shape {target}"
        )
    return mask


def is_compiling() -> bool:
    """True while ``torch.compile`` traces the code.

    The checks that read a tensor's values (NaN, an empty mask row) step aside then, since
    a compiled graph cannot branch on data. The same checks run on every eager call, and
    the compiled function computes the same numbers.

    >>> is_compiling()  # an eager call
    False
    """
    return torch.compiler.is_compiling()


def has_values(tensor: Tensor) -> bool:
    """False where a tensor's values cannot be read.

    That is while ``torch.compile`` traces, or on the ``meta`` device, whose tensors have a
    shape and a dtype but no values. The checks that read values (NaN, an empty mask row)
    step aside then; the result is a meta tensor with no numbers to be wrong.

    >>> has_values(torch.ones(2)), has_values(torch.ones(2, device="meta"))
    (True, False)
    """
    return not is_compiling() and tensor.device.type != "meta"


def check_mask_rows(mask: Tensor) -> None:
    """Refuse a mask in which some query may attend to no key at all.

    Such a row has no distribution to give: softmax over nothing but ``-inf`` is
    ``0/0``, which PyTorch returns as NaN. Rather than hand back a silent NaN we
    stop and say which query it was.

    >>> check_mask_rows(torch.tensor([[True, False], [False, False]]))
    Traceback (most recent call last):
    ...
    ValueError: mask allows no key for 1 query row(s), first at index (1,); every query must be allowed at least one key
    """
    if not has_values(mask):
        return
    empty_rows = ~mask.any(dim=-1)
    if bool(empty_rows.any()):
        first = tuple(int(i) for i in empty_rows.nonzero()[0])
        count = int(empty_rows.sum())
        raise ValueError(
            f"mask allows no key for {count} query row(s), first at index {first}; "
            "every query must be allowed at least one key"
        )


def check_finite(name: str, tensor: Tensor) -> None:
    """Refuse a tensor holding NaN or infinity, naming the first place it occurs.

    One NaN in one token's input reaches every query through that token's key (its
    score, then the softmax) and its value (a zero weight times NaN is still NaN), even
    under a causal mask, and the output projection spreads it to every feature: the whole
    sequence comes back NaN with no hint of where it came from. The public functions call this
    on their inputs unless given ``check_finite=False`` (for speed in a loop you trust).

    >>> check_finite("x", torch.tensor([[0.0, 1.0], [float("nan"), 2.0]]))
    Traceback (most recent call last):
    ...
    ValueError: x holds 1 non-finite value(s) (NaN or inf), first at index (1, 0); pass check_finite=False to skip this check
    """
    if not has_values(tensor):
        return
    finite = torch.isfinite(tensor)
    if not bool(finite.all()):
        bad = ~finite
        first = tuple(int(i) for i in bad.nonzero()[0])
        raise ValueError(
            f"{name} holds {int(bad.sum())} non-finite value(s) (NaN or inf), first at index {first}; "
            "pass check_finite=False to skip this check"
        )


def check_dropout(dropout_p: object, generator: object, device: torch.device, name: str = "dropout_p") -> None:
    """``dropout_p`` a number in ``[0, 1)`` (1 would drop every weight and divide by 0); ``generator`` on ``device``.

    >>> check_dropout(1.0, None, torch.device("cpu"))
    Traceback (most recent call last):
    ...
    ValueError: dropout_p must be in [0, 1), got 1.0
    """
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(dropout_p).__name__} ({dropout_p!r})")
    if not 0 <= dropout_p < 1:  # also refuses NaN
        raise ValueError(f"{name} must be in [0, 1), got {dropout_p!r}")
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
        if torch.device(generator.device).type != device.type:
            raise ValueError(f"generator is on {generator.device} but the tensors are on {device}")
