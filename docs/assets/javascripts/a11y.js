// Keyboard access to anything that scrolls sideways: wide formulas, wide tables and
// long code lines on a narrow screen. A keyboard user can only scroll a region that
// can take focus, so exactly the regions that overflow get tabindex="0" and a name.
// Formulas are rendered at build time (hooks/katex.py), so they are in place when this runs.
(() => {
  "use strict";

  const REGIONS = [
    ["div.arithmatex, .katex-display", (el) => {
      const tex = el.querySelector("annotation");
      return tex ? `formula: ${tex.textContent}` : "formula";
    }],
    [".md-typeset__scrollwrap", () => "table (scrolls sideways)"],
    [".figure-scroll", () => "figure (scrolls sideways)"],
    [".jp-OutputArea-output pre", () => "output (scrolls sideways)"],
    [".highlight pre > code", () => "code (scrolls sideways)"],
  ];

  function markScrollable(root) {
    for (const [selector, label] of REGIONS) {
      root.querySelectorAll(selector).forEach((region) => {
        const overflows = region.scrollWidth > region.clientWidth + 1;
        if (overflows && !region.hasAttribute("tabindex")) {
          region.setAttribute("tabindex", "0");
          region.setAttribute("role", "region");
          region.setAttribute("aria-label", label(region));
          region.dataset.scrollA11y = "true";
        } else if (!overflows && region.dataset.scrollA11y) {
          ["tabindex", "role", "aria-label", "data-scroll-a11y"].forEach((name) => region.removeAttribute(name));
        }
      });
    }
  }

  document$.subscribe(({ body }) => markScrollable(body));

  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => markScrollable(document.body), 150);
  });
})();
