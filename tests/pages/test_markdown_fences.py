"""The fence collector itself: which fences run, and snippet expansion."""

from __future__ import annotations

from pathlib import Path

import pytest
from sybil import Sybil

from markdown_fences import ExpandedMarkdown, PythonFenceParser, expand_snippets

PAGE = '''# A page

```python
x = 1
```

```py title="two.py"
x += 1
```

```python3
x += 1
```

``` { .python }
x += 1
```

``` { .python .no-run }
raise SystemExit("must not run")
```

```bash
exit 1
```

```text
not python
```

```python
--8<-- "mha_ref/attention.py:helpers"
```
'''


def regions(tmp_path: Path, text: str):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return list(ExpandedMarkdown.parse(str(page), PythonFenceParser()))


def test_collects_every_python_spelling_and_skips_only_no_run(tmp_path):
    sources = [str(region.parsed) for region in regions(tmp_path, PAGE)]
    assert [source.strip().splitlines()[0] for source in sources] == [
        "x = 1", "x += 1", "x += 1", "x += 1", "def project(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:",
    ]


def test_snippet_lines_expand_like_mkdocs_and_markers_vanish():
    expanded = expand_snippets('--8<-- "mha_ref/attention.py:helpers"')
    assert "def split_heads(x: Tensor, num_heads: int) -> Tensor:" in expanded
    assert "--8<--" not in expanded


def test_a_failing_fence_fails(tmp_path):
    page = tmp_path / "bad.md"
    page.write_text("```python\nassert 1 + 1 == 3, 'arithmetic'\n```\n", encoding="utf-8")
    document = Sybil(parsers=[PythonFenceParser()], document_types={".md": ExpandedMarkdown}).parse(page)
    (example,) = list(document)
    with pytest.raises(AssertionError, match="arithmetic"):
        example.evaluate()


def test_fences_share_one_namespace_per_page(tmp_path):
    page = tmp_path / "shared.md"
    page.write_text("```python\nvalue = 41\n```\n\ntext\n\n```py\nvalue += 1\nassert value == 42\n```\n", encoding="utf-8")
    document = Sybil(parsers=[PythonFenceParser()], document_types={".md": ExpandedMarkdown}).parse(page)
    for example in document:
        example.evaluate()
    assert document.namespace["value"] == 42
