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

  // All measurements first, then all attribute changes: reading scrollWidth after a write
  // would lay the page out again, once per region (hundreds on the lesson).
  function markScrollable(root) {
    const regions = REGIONS.flatMap(([selector, label]) =>
      [...root.querySelectorAll(selector)].map((region) => [region, label]));
    const overflowing = regions.map(([region]) => region.scrollWidth > region.clientWidth + 1);
    regions.forEach(([region, label], i) => {
      if (overflowing[i] && !region.hasAttribute("tabindex")) {
        region.setAttribute("tabindex", "0");
        region.setAttribute("role", "region");
        region.setAttribute("aria-label", label(region));
        region.dataset.scrollA11y = "true";
      } else if (!overflowing[i] && region.dataset.scrollA11y) {
        ["tabindex", "role", "aria-label", "data-scroll-a11y"].forEach((name) => region.removeAttribute(name));
      }
    });
  }

  // Not part of the first render: run when the browser is idle (within a second at most).
  const whenIdle = window.requestIdleCallback
    ? (task) => requestIdleCallback(task, { timeout: 1000 })
    : (task) => setTimeout(task, 200);
  document$.subscribe(({ body }) => whenIdle(() => {
    markScrollable(body);
    document.documentElement.dataset.scrollChecked = ""; // for tests: the pass has run
  }));

  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => markScrollable(document.body), 150);
  });
})();
