"""The import boundary: mha_ref needs torch and the standard library only; JSON-only site code needs neither.

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide
an import, and a blocker makes the forbidden packages fail to import at all.
"""

from __future__ import annotations

import ast
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
                                    "mha_site.bench.claims", "mha_site.bench.tables",
                                    "mha_site.bench.gpu_section",
                                    "mha_site.bench.labels", "mha_site.tiny_model.report", "mha_site.files",
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


def _imported(path) -> set[str]:
    """The absolute module names a file imports, at any depth of its code."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _module_name(path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_imports_go_one_way_without_cycles():
    """scripts and hooks -> mha_site -> mha_ref, and the build-time package (mha_site.build) is
    imported by the hook alone: it reads pages, never models or figures, and the pages' data and
    figures never need MkDocs. Within mha_site no two modules import each other, at any remove."""
    site = {_module_name(path): path for path in (ROOT / "src" / "mha_site").rglob("*.py")}
    imports = {name: _imported(path) for name, path in site.items()}  # each file parsed once
    graph = {name: {other for other in site if other != name and other in imports[name]} for name in site}
    for name, imported in imports.items():
        if name.startswith("mha_site.build"):
            assert not {m.split(".")[0] for m in imported} & {"torch", "numpy", "matplotlib", "mha_ref"}, name
            # (mha_site.files: the atomic write every generated file shares)
            assert all(m.startswith("mha_site.build") or m == "mha_site.files" for m in graph[name]), (name, graph[name])
        else:
            assert not any(m.startswith("mha_site.build") for m in imported), f"{name} imports the build package"
    hook = _imported(ROOT / "hooks" / "site.py")
    assert not any(m.split(".")[0] in {"mha_ref", "torch"} for m in hook) and any(m.startswith("mha_site.build") for m in hook)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(nxt == goal or (nxt not in seen and not seen.add(nxt) and reaches(nxt, goal, seen)) for nxt in graph[start])

    cycles = sorted(name for name in graph if reaches(name, name, set()))
    assert cycles == [], f"modules on an import cycle: {cycles}"
