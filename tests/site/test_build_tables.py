"""mha_site.build.tables: Markdown tables wrapped as Material's bundle would, and its rules carried over."""

from __future__ import annotations

from mha_site.build.tables import table_rules, wrap_tables


def test_only_tables_without_attributes_are_wrapped():
    assert wrap_tables("<p>x</p><table><tr><td>1</td></tr></table><table class='a'></table>") == (
        '<p>x</p><div class="md-typeset__scrollwrap"><div class="md-typeset__table"><table class="mha-table">'
        "<tr><td>1</td></tr></table></div></div><table class='a'></table>")


def test_table_rules_carry_materials_selectors_over_within_media_queries_too():
    css = "a{x:1}.t table:not([class]) td,.u p{y:2}@media print{.t table:not([class]){z:3}}"
    assert table_rules(css) == ".t table.mha-table td{y:2}\n@media print{.t table.mha-table{z:3}}\n"
