"""Every public function and class of mha_ref carries a runnable example (a ``>>>`` doctest).

Public means listed in the module's ``__all__``; a module without ``__all__`` counts
every function and class it defines whose name has no leading underscore. The
examples themselves run under ``pytest --doctest-modules src``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import mha_ref


def _modules() -> list[ModuleType]:
    names = [info.name for info in pkgutil.iter_modules(mha_ref.__path__)]
    return [mha_ref] + [importlib.import_module(f"mha_ref.{name}") for name in sorted(names)]


def _public_names(module: ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
    ]


def _without_example() -> list[str]:
    offenders = []
    for module in _modules():
        for name in _public_names(module):
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue  # constants document themselves in comments
            if ">>>" not in (obj.__doc__ or ""):
                offenders.append(f"{module.__name__}.{name}")
    return offenders


def test_the_walk_finds_every_module_and_their_public_callables():
    modules = {module.__name__ for module in _modules()}
    assert {"mha_ref", "mha_ref.attention", "mha_ref.variants", "mha_ref.induction", "mha_ref.causal"} <= modules
    assert not any(name.startswith("mha_site") for name in modules)
    assert "multi_head_attention" in _public_names(mha_ref.attention)


def test_every_public_function_and_class_has_a_doctest():
    offenders = _without_example()
    assert not offenders, "add a >>> example to the docstring of: " + ", ".join(offenders)
