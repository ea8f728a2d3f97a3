"""The site's own light/dark switch (overrides/main.html), as a reader meets it.

With one palette in mkdocs.yml Material mounts no palette component (which adds
``<meta name="color-scheme">`` at run time, a full restyle each time). Ours must still follow the
system, remember a choice, work by mouse and keyboard, and set the scheme before the header is
parsed (no flash of a light page on a dark system).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# Before any page script runs: note the body's scheme as the <header> element arrives, the
# first content the page shows. Read in a microtask, after every mutation observer called for
# that insertion (the page's own included) and before anything can paint.
RECORD_SCHEME_AT_HEADER = """
new MutationObserver((records, observer) => {
  if (document.querySelector('header')) {
    observer.disconnect();
    queueMicrotask(() => { window.mhaSchemeAtHeader = document.body.dataset.mdColorScheme; });
  }
}).observe(document, { childList: true, subtree: true });
"""


@pytest.mark.parametrize("scheme, expected", [("dark", "slate"), ("light", "default")])
def test_scheme_follows_the_system_before_the_header_is_parsed(new_page, scheme, expected) -> None:
    page = new_page(color_scheme=scheme)
    page.add_init_script(RECORD_SCHEME_AT_HEADER)
    page.goto("")
    assert page.evaluate("window.mhaSchemeAtHeader") == expected
    assert page.evaluate("document.body.dataset.mdColorScheme") == expected
    assert page.evaluate("document.documentElement.style.colorScheme") == scheme
    # The switch sits in the header, before search, named for the scheme it offers, showing one icon.
    other = "light" if scheme == "dark" else "dark"
    switch = page.locator(".md-header__inner > .mha-scheme-switch + label[for=__search]")
    assert switch.count() == 1
    button = page.get_by_role("button", name=f"Switch to {other} mode")
    assert button.get_attribute("title") == f"Switch to {other} mode"
    assert page.locator(".mha-scheme-switch svg:visible").count() == 1
    assert page.locator("meta[name=color-scheme]").count() == 0, "Material's palette component ran"
    assert page.console_errors == []


def test_switch_by_mouse_and_keyboard_and_the_choice_is_remembered(new_page) -> None:
    page = new_page(color_scheme="light")
    page.goto("causal-mask/")
    page.get_by_role("button", name="Switch to dark mode").click()
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    assert page.evaluate("document.documentElement.style.colorScheme") == "dark"
    assert page.get_by_role("button", name="Switch to light mode").is_visible()

    page.emulate_media(color_scheme="light")  # a system change no longer overrides the choice
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    page.add_init_script(RECORD_SCHEME_AT_HEADER)
    page.goto("")  # another page: the choice beats the light system
    assert page.evaluate("window.mhaSchemeAtHeader") == "slate"

    button = page.locator(".mha-scheme-switch button")  # its name changes with the scheme
    assert button.get_attribute("aria-label") == "Switch to light mode"
    button.focus()
    page.keyboard.press("Enter")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    assert button.evaluate("button => button === document.activeElement"), "focus left the switch"
    page.keyboard.press("Space")
    assert page.evaluate("document.body.dataset.mdColorScheme") == "slate"
    page.keyboard.press("Space")
    page.reload()
    assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
    assert page.console_errors == []


def test_until_the_reader_chooses_the_scheme_follows_the_system_as_it_changes(new_page) -> None:
    page = new_page(color_scheme="light")
    page.goto("causal-mask/")
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
    assert page.get_by_role("button", name="Switch to light mode").is_visible()
    page.emulate_media(color_scheme="light")
    page.wait_for_function("document.body.dataset.mdColorScheme === 'default'")
    assert page.console_errors == []
