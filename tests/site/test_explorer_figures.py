"""The demo-head figures, heads.json, the build script's --check, and the page text that cites them."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mha_site.explorer import arc_figure, explorer_files, head_arcs, query_arcs
from mha_ref.demo_heads import D_K, D_MODEL, HEAD_NAMES, NUM_HEADS, TOKENS, attention_patterns, top_keys, top_weights
from mha_site.style import HEAD_STYLES

from sitekit import ROOT, load_file_module

ASSETS = ROOT / "docs" / "assets" / "explorer"
SCRIPT = ROOT / "scripts" / "build_figures.py"
PAGE = ROOT / "docs" / "_includes" / "explorer.md"


def load_script():
    return load_file_module(str(SCRIPT.relative_to(ROOT)))


@pytest.fixture(scope="module")
def rendered() -> dict[str, bytes]:
    return {path.name: content for path, content in explorer_files(ASSETS).items()}


def test_rendering_twice_gives_the_same_bytes(rendered: dict[str, bytes]) -> None:
    again = {path.name: content for path, content in explorer_files(ASSETS).items()}
    assert again == rendered


def test_committed_files_are_current() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_check_names_stale_and_missing_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rendered: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = load_script()
    # The script's own argument handling and write/check logic, fed the already rendered files.
    monkeypatch.setattr(script, "explorer_files", lambda out: {Path(out) / name: b for name, b in rendered.items()})
    assert script.main(["--check", "--out", str(tmp_path)]) == 1
    assert "missing:" in capsys.readouterr().err

    assert script.main(["--out", str(tmp_path)]) == 0
    assert script.main(["--check", "--out", str(tmp_path)]) == 0
    capsys.readouterr()

    heads = tmp_path / "heads.json"
    heads.write_text(heads.read_text().replace('"it"', '"he"'))
    (tmp_path / "pattern-verb.svg").unlink()
    assert script.main(["--check", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"stale: {heads}" in err and f"missing: {tmp_path / 'pattern-verb.svg'}" in err
    assert "arcs-it.svg" not in err  # untouched files are not reported


def test_svgs_are_titled_and_undated(rendered: dict[str, bytes]) -> None:
    svgs = {name: content.decode() for name, content in rendered.items() if name.endswith(".svg")}
    assert sorted(svgs) == sorted(["arcs-it.svg", "heatmaps.svg", *(f"pattern-{h}.svg" for h in HEAD_NAMES)])
    for name, svg in svgs.items():
        assert re.search(r"<dc:title>[^<]{10,}</dc:title>", svg), name
        assert "<dc:date>" not in svg, name


def test_heads_json_holds_tokens_styles_and_rounded_weights(rendered: dict[str, bytes]) -> None:
    data = json.loads(rendered["heads.json"])
    assert data["tokens"] == list(TOKENS)
    assert data["tokens"][data["default_query"]] == "it"
    assert [h["name"] for h in data["heads"]] == list(HEAD_NAMES)
    patterns = attention_patterns()
    for i, head in enumerate(data["heads"]):
        style = HEAD_STYLES[head["name"]]
        assert (head["label"], head["colour"], head["dash"]) == (style["label"], style["colour"], style["dash"])
        for q, row in enumerate(head["weights"]):
            assert all(round(w, 4) == w for w in row)
            assert max(range(len(row)), key=row.__getitem__) == top_keys(patterns)[head["name"]][q]
            assert math.isclose(sum(row), 1.0, abs_tol=1e-3)
            assert all(abs(w - float(p)) <= 5e-5 for w, p in zip(row, patterns[i, q]))


def test_heads_differ_by_more_than_colour() -> None:
    dashes = [HEAD_STYLES[h]["dash"] for h in HEAD_NAMES]
    assert len(set(dashes)) == len(dashes)
    script = (ASSETS / "explorer.js").read_text()
    for dash in dashes:  # the explorer knows how to draw, and how to name, every dash pattern
        assert re.search(rf"\b{dash}: \"", script), dash


def test_arc_lists() -> None:
    patterns = attention_patterns()
    assert query_arcs(patterns, TOKENS.index("it")) == [
        ("previous", 7, 6), ("subject", 7, 1), ("verb", 7, 8), ("coreference", 7, 1),
    ]
    assert query_arcs(patterns, 2, heads=("verb", "subject")) == [("subject", 2, 1)]
    assert head_arcs(patterns, "previous") == [("previous", q, q - 1) for q in range(1, 11)]
    assert len(head_arcs(patterns, "subject")) == 10
    with pytest.raises(ValueError, match="query must index one of the 11 tokens, got 11"):
        query_arcs(patterns, 11)
    with pytest.raises(ValueError, match="unknown head 'noun'"):
        head_arcs(patterns, "noun")


def test_arc_figure_refuses_arcs_it_cannot_draw() -> None:
    with pytest.raises(ValueError, match="points outside the 2 tokens"):
        arc_figure(["a", "b"], [("previous", 0, 2)])
    with pytest.raises(ValueError, match="names head 'blue'"):
        arc_figure(["a", "b"], [("blue", 1, 0)])
    with pytest.raises(ValueError, match=r"token indices \[5\] \(query or silent\) are outside the 2 tokens"):
        arc_figure(["a", "b"], [("previous", 1, 0)], silent=[5])


# The page (docs/_includes/explorer.md) states these; they must follow the code.


def page_text() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_page_cites_the_layer_sizes() -> None:
    assert f"The demo layer is {D_MODEL} wide, with {NUM_HEADS} heads of {D_K}" in " ".join(page_text().split())


def test_page_cites_the_minimum_top_weight() -> None:
    floor = min(min(row) for row in top_weights().values())
    stated = re.search(r"at least (\d+)% of the weight", " ".join(page_text().split()))
    assert stated and int(stated.group(1)) == math.floor(100 * floor)


def test_page_names_each_tokens_verb() -> None:
    text = " ".join(page_text().split())
    verbs = top_keys()["verb"]
    main = [TOKENS[q] for q, k in enumerate(verbs) if TOKENS[k] == "sat" and k != q]
    because = [TOKENS[q] for q, k in enumerate(verbs) if TOKENS[k] == "was" and k != q]
    assert main == ["The", "cat", "on", "the", "mat"] and because == ["because", "it", "tired", "."]
    assert '"The", "cat", "on", "the" and "mat" send their green arc to "sat"' in text
    assert '"because", "it", "tired" and the full stop send it to "was"' in text
    assert 'the arc out of "it" lands on "was"' in text


def test_page_shows_every_figure_with_alt_text(rendered: dict[str, bytes]) -> None:
    images = re.findall(r"!\[([^\]]*)\]\((assets/explorer/[^)]+)\)", page_text())
    shown = {Path(src).name for _, src in images}
    assert shown == {name for name in rendered if name.endswith(".svg")}
    assert all(len(alt) > 60 for alt, _ in images)
    assert 'data-explorer-src="assets/explorer/heads.json"' in page_text()
