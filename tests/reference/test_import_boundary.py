"""The import boundary: mha_ref needs torch and the standard library only; JSON-only site code needs neither.

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide
an import, and a blocker makes the forbidden packages fail to import at all.
"""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys

import pytest

import mha_ref
from sitekit import ROOT

#: Installs a finder that refuses every package not in ``allowed`` (plus the standard library),
#: then imports ``modules``; prints nothing and exits 0 when all of them import.
_PROBE = """
import sys, importlib, importlib.abc
allowed = set(sys.argv[1].split(","))
stdlib = set(sys.stdlib_module_names)
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in stdlib or top in allowed:
            return None
        raise ModuleNotFoundError(f"forbidden import: {name}", name=name)
sys.meta_path.insert(0, Block())
for module in sys.argv[2:]:
    importlib.import_module(module)
"""


def _probe(allowed: list[str], modules: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(allowed), *modules],
        capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
    )


def _reference_modules() -> list[str]:
    return ["mha_ref"] + [f"mha_ref.{info.name}" for info in pkgutil.iter_modules(mha_ref.__path__)]


# torch's own dependencies (installed with it) are allowed; numpy and matplotlib are not:
# torch imports numpy only if it is there, and the blocker makes it absent.
TORCH_AND_ITS_OWN = ["mha_ref", "torch", "sympy", "mpmath", "networkx", "jinja2", "markupsafe", "fsspec",
                     "filelock", "typing_extensions", "functorch", "torchgen"]


def test_every_reference_module_imports_with_torch_and_the_standard_library_only():
    result = _probe(TORCH_AND_ITS_OWN, _reference_modules())
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("module", ["mha_site.placeholders", "mha_site.bench.schema", "mha_site.bench.report",
                                    "mha_site.bench.labels", "mha_site.heads.report", "mha_site.files",
                                    "mha_site.real_models.schema", "mha_site.real_models.build"])
def test_json_only_site_modules_import_without_torch_or_matplotlib(module):
    result = _probe(["mha_site"], [module])
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_probe_refuses_a_forbidden_import():
    result = _probe(["mha_site"], ["mha_site.bench.figures"])  # draws with matplotlib
    assert result.returncode != 0 and "forbidden import: matplotlib" in result.stderr


def test_the_reference_never_imports_the_site_package():
    pattern = re.compile(r"^\s*(from|import)\s+mha_site\b", re.M)
    for path in (ROOT / "src" / "mha_ref").glob("*.py"):
        assert not pattern.search(path.read_text(encoding="utf-8")), f"{path.name} imports mha_site"
