"""The worked examples of the report and figure functions of ``mha_site``, run on fixture documents.

They were doctests; they need a results document (``fixtures.example_results``, invented, or
``fixtures.tiny_results``, a 2-step training run), and test fixtures do not belong in a package.
Each example runs with its module's globals plus those two fixtures, exactly as a doctest would.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from fixtures import example_results, tiny_results

EXAMPLES = [
    ('mha_site.bench.claims', 'evaluate_claim', '>>> claims = {claim.key: claim for claim in CLAIMS}\n>>> docs = {"cpu": example_results("cpu")}\n>>> holds, fields = evaluate_claim(claims["cpu_fused_faster"], docs)\n>>> holds, fields["t_max"], fields["speedup"]\n(True, \'2048\', \'2.00\')\n>>> evaluate_claim(claims["gpu_heads_parallel"], docs)\nTraceback (most recent call last):\n...\nLookupError: claim \'gpu_heads_parallel\' is about \'cuda\', which has no committed results\n'),
    ('mha_site.bench.claims', 'render_claim', '>>> claims = {claim.key: claim for claim in CLAIMS}\n>>> docs = {"cpu": example_results("cpu")}\n>>> render_claim(claims["cpu_fused_memory"], docs)\n\'one call of the fused layer peaked at 32 MiB of new memory, the batched version at 288 MiB (T = 2048)\'\n>>> render_claim(claims["gpu_heads_parallel"], docs) == claims["gpu_heads_parallel"].missing\nTrue\n>>> for cell in docs["cpu"]["cells"]:\n...     cell["peak_bytes"] *= 100 if cell["variant"] == "sdpa" else 1\n>>> render_claim(claims["cpu_fused_memory"], docs)  # doctest: +ELLIPSIS\nTraceback (most recent call last):\n...\nValueError: the committed cpu results contradict claim \'cpu_fused_memory\': ...\n'),
    ('mha_site.bench.tables', 'results_table', '>>> table = results_table(example_results(), "heads")\n>>> table.splitlines()[0]\n\'Held fixed: B = 1, T = 1024, d_model = 512; float32.\'\n>>> for row in table.splitlines()[2:]:\n...     print(row)\n| h | variant | median ms | fastest–slowest ms | peak MiB | GFLOP/s | % of ceiling | max rel. error |\n|---:|---|---:|---:|---:|---:|---:|---:|\n| 1 | per-head loop | 90 | 85.5–94.5 | 8 | 47.7 | 5 | 2.4e-7 |\n| 1 | batched, explicit softmax | 100 | 95–105 | 24 | 42.9 | 4 | 2.4e-7 |\n| 1 | fused SDPA | 50 | 47.5–52.5 | 16 | 85.9 | 9 | 2.4e-7 |\n| 8 | per-head loop | 90 | 85.5–94.5 | 8 | 47.7 | 5 | 2.4e-7 |\n| 8 | batched, explicit softmax | 100 | 95–105 | 80 | 42.9 | 4 | 2.4e-7 |\n| 8 | fused SDPA | 50 | 47.5–52.5 | 16 | 85.9 | 9 | 2.4e-7 |\n'),
    ('mha_site.bench.tables', 'provenance_table', '>>> for line in provenance_table(example_results("cuda")).splitlines()[:5]:\n...     print(line)\n| Measured | |\n|---|---|\n| Device | a GPU |\n| torch | 2.13.0 |\n| CUDA (torch build) | 12.8 |\n'),
    ('mha_site.bench.report', 'bench_values', '>>> values = bench_values({"cpu": example_results("cpu")})\n>>> values["cpu.ms.sdpa.T2048"], values["cpu.ratio.loop_over_batched.T128"], values["cpu.bound_units.float32"]\n(\'200\', \'1.50\', \'1678\')\n>>> values["cpu.best_variant"], values["gpu.section"].startswith(\'!!! warning "No GPU results yet"\')\n(\'fused SDPA\', True)\n'),
    ('mha_site.bench.gpu_section', 'gpu_section', '>>> gpu_section({}).splitlines()[0]\n\'!!! warning "No GPU results yet"\'\n>>> gpu_section({"cuda": example_results("cuda")}).splitlines()[0]\n\'Measured on a GPU with <code>python scripts/bench.py --device cuda</code>.\'\n'),
    ('mha_site.tiny_model.report', 'seed_summary', '>>> summary = seed_summary(tiny_results()["seeds"][0], threshold=0.1)\n>>> summary["prev_head"], summary["ind_head"], summary["heads"], len(summary["order"])\n(\'L0H1\', \'L1H0\', 4, 4)\n'),
    ('mha_site.tiny_model.report', 'page_values', '>>> values = page_values(tiny_results())\n>>> values["steps"], values["d_k"], values["total_heads"], values["phase_span"]\n(\'2\', \'4\', \'4\', \'never\')\n>>> values["table.pruning"].startswith("| Seed | Loss, all heads (nats) | Heads removed within tolerance |")\nTrue\n'),
    ('mha_site.tiny_model.figures', 'training_figure', ">>> fig = training_figure(tiny_results())\n>>> len(fig.axes), fig.axes[-1].get_xlabel(), fig.axes[0].get_legend_handles_labels()[1]\n(3, 'training step', ['seed 0'])\n"),
    ('mha_site.tiny_model.figures', 'heatmap_figure', ">>> [ax.get_title() for ax in heatmap_figure(tiny_results()).axes[:2]]\n['previous-token head L0H1', 'induction head L1H0']\n"),
    ('mha_site.tiny_model.figures', 'ablation_figure', ">>> ax = ablation_figure(tiny_results()).axes[0]\n>>> ax.get_title(), len(ax.patches)  # one bar per head: 2 layers of 2\n('seed 0', 4)\n"),
    ('mha_site.tiny_model.figures', 'pruning_figure', '>>> ax = pruning_figure(tiny_results()).axes[0]\n>>> [int(x) for x in ax.lines[0].get_xdata()]  # no head removed, then each of the 4 heads in turn\n[0, 1, 2, 3, 4]\n'),
    ('mha_site.tiny_model.figures', 'all_figures', ">>> files = all_figures(tiny_results())\n>>> sorted(files), all(FIGURE_ALT[name].encode() in svg for name, svg in files.items())\n(['ablation.svg', 'heatmaps.svg', 'pruning.svg', 'training.svg'], True)\n"),
]


@pytest.mark.parametrize(("module", "name", "example"), EXAMPLES, ids=[f"{m}.{n}" for m, n, _ in EXAMPLES])
def test_example(module: str, name: str, example: str) -> None:
    globs = {**vars(importlib.import_module(module)), "example_results": example_results, "tiny_results": tiny_results}
    test = doctest.DocTestParser().get_doctest(example, globs, f"{module}.{name}", module, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    output: list[str] = []
    result = runner.run(test, out=output.append)
    assert result.failed == 0, "".join(output)


def test_every_claim_holds_on_the_example_documents() -> None:
    from mha_site.bench.claims import CLAIMS, PAGE_CLAIMS, evaluate_claim

    docs = {"cpu": example_results("cpu"), "cuda": example_results("cuda")}
    assert all(evaluate_claim(claim, docs)[0] for claim in CLAIMS + PAGE_CLAIMS)
