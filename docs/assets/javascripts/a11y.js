// Keyboard access to what scrolls sideways: wide formulas, tables and figures, long code
// lines on a narrow screen. A keyboard user can scroll only a region that can take focus, so
// the build gives every such region tabindex="0" (mha_site/build/page_assets.py): each one is reachable
// before any script runs, wherever it is on the page. This script refines that once a region
// is laid out near the screen: one that overflows is named for screen readers (and a figure
// says in words that it scrolls, extra.css); one that fits gives its tab stop back.
//
// A region is measured when it comes within a screen of the viewport, not at load:
// measuring every region of a long page up front is a long task of its own.
(() => {
  "use strict";

  const REGIONS = [
    ["div.arithmatex", (el) => {
      const tex = el.querySelector("annotation");
      return tex ? `formula: ${tex.textContent}` : "formula";
    }],
    [".md-typeset__scrollwrap", () => "table (scrolls sideways)"],
    [".figure-scroll", () => "figure (scrolls sideways)"],
    [".jp-OutputArea-output pre", () => "output (scrolls sideways)"],
    [".highlight pre > code", () => "code (scrolls sideways)"],
  ];
  const labels = new Map();   // region -> function giving its name
  const nearby = new Set();   // regions within a screen of the viewport

  // All measurements first, then all attribute changes: reading scrollWidth after a write
  // would lay the page out again, once per region.
  function mark(regions) {
    const overflowing = regions.map((region) => region.scrollWidth > region.clientWidth + 1);
    regions.forEach((region, i) => {
      if (overflowing[i] && !region.dataset.scrollA11y) {
        region.setAttribute("tabindex", "0");
        region.setAttribute("role", "region");
        region.setAttribute("aria-label", labels.get(region)(region));
        region.dataset.scrollA11y = "true";
      } else if (!overflowing[i] && (region.dataset.scrollA11y || region.getAttribute("tabindex") === "0")) {
        ["tabindex", "role", "aria-label", "data-scroll-a11y"].forEach((name) => region.removeAttribute(name));
      }
    });
    document.documentElement.dataset.scrollChecked = ""; // a pass has run (tests wait for it)
  }

  // Material's bundle needs IntersectionObserver too (it polyfills only ResizeObserver).
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) nearby[entry.isIntersecting ? "add" : "delete"](entry.target);
    mark(entries.filter((entry) => entry.isIntersecting).map((entry) => entry.target));
  }, { rootMargin: "100% 0px" });

  function collect(root) {
    labels.clear();
    nearby.clear();
    observer.disconnect();
    for (const [selector, label] of REGIONS) {
      root.querySelectorAll(selector).forEach((region) => labels.set(region, label));
    }
    labels.forEach((_, region) => observer.observe(region));
    if (!labels.size) mark([]);  // nothing to observe: the pass is done now
  }

  document$.subscribe(({ body }) => collect(body));

  // Material's bundle manages the tab stop of a code block too: as the block first comes into
  // view (content.lazy), and whenever its width changes, it sets tabindex="0" if the code
  // scrolls and the device has hover (matchMedia("(hover)")), and removes it otherwise. On a
  // touch phone that took the stop away from code this script had named a scrolling region:
  // a keyboard (or a switch device) could not reach it (axe: scrollable-region-focusable, on
  // every page). A region found scrolling takes its stop back; one that stops scrolling is
  // released by the next pass (on resize, below), as before.
  new MutationObserver((records) => {
    for (const { target } of records) {
      if (target.dataset.scrollA11y && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "0");
    }
  }).observe(document.documentElement, { subtree: true, attributeFilter: ["tabindex"] });

  let pending = null;
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(() => mark([...nearby]), 150);
  });

  // When the reader last gave input (wheel, touch, key, pointer), and when the page last jumped
  // to a section (a link, a hash in the address). Read by the two parts below.
  const reader = { input: -Infinity, jump: -Infinity };
  for (const type of ["wheel", "touchstart", "touchmove", "keydown", "pointerdown"]) {
    addEventListener(type, () => { reader.input = performance.now(); }, { capture: true, passive: true });
  }

  // Links to a section land on it. A widget above the target can change height after the browser
  // has jumped: the live-heads box on tiny-model/ swaps its 507 px static figure for its 260 px
  // controls, then grows by about 900 px once its model loads, and Chromium does not move the
  // scroll position to follow (it anchors scrolling only after the reader's own scroll): a link
  // to #pruning left the heading 180 px above the screen, or 900 px below it. Until the reader
  // gives input, or for 5 s, the jump is finished again whenever the article resizes.
  function finishJump() {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id && document.getElementById(id);
    if (!target) return;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      const margin = parseFloat(getComputedStyle(target).scrollMarginTop) || 0;
      const off = target.getBoundingClientRect().top - margin;
      const room = document.documentElement.scrollHeight - innerHeight - scrollY;
      if (Math.abs(off) > 2 && room > 1) {
        reader.jump = performance.now();
        target.scrollIntoView();
      }
    }));
  }

  let holdUntil = 0;
  function hold() {
    reader.jump = performance.now();
    holdUntil = reader.jump + 5000;
  }
  const article = document.querySelector("article");
  if (article && "ResizeObserver" in window) {
    new ResizeObserver(() => {
      if (performance.now() < holdUntil && reader.input < reader.jump) finishJump();
    }).observe(article);
  }

  // After an in-page jump: at once (an instant scroll has ended before "hashchange"), and
  // when a smooth scroll ends; if none ends within a second, the reader's own scrolling
  // is left alone.
  addEventListener("hashchange", () => {
    hold();
    finishJump();
    addEventListener("scrollend", finishJump, { once: true });
    setTimeout(() => removeEventListener("scrollend", finishJump), 1000);
  });
  if (location.hash) hold();
  finishJump();

  // Material shows its "Back to top" button when the page scrolls up. Finishing a jump (above) can
  // scroll the page up by itself, and the button then covered the heading just reached.
  // So the button shows only after the reader's own input within the last 1.5 s, and not while
  // the page is finishing a jump that came after that input (a click on a table-of-contents link
  // is input too, but the scrolling after it is not the reader's).
  const button = document.querySelector(".md-top");
  if (!button) return;
  const guard = () => {
    const readers = performance.now() - reader.input <= 1500 && reader.input > reader.jump;
    if (!button.hidden && !readers) {
      button.hidden = true;
      button.setAttribute("tabindex", "-1");
    }
  };
  new MutationObserver(guard).observe(button, { attributes: true, attributeFilter: ["hidden"] });
  guard();  // Material may have shown it before this script ran
})();

// Search: Material hands the box's text to lunr, whose query syntax reads "^" as a boost, so
// "W^O" was an error and found nothing. The index holds the maths as KaTeX renders it (W^O as
// "WO", QK^T as "QK⊤"), so the box reports each word with a "^" in that form, as an exact
// term. The reader still sees what they typed; only the value Material reads changes (a reliance
// on Material's internals: mha_site/build/material_internals.py lists it, test_build_hooks.py checks it).
(() => {
  "use strict";
  const box = document.querySelector("input.md-search__input");
  if (!box) return;
  const { get, set } = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  const rendered = (word) => "+" + word.replace(/\^\{?T\}?$/, "⊤").replace(/[\^{}]/g, "");
  Object.defineProperty(box, "value", {
    get() { return get.call(this).replace(/\S*\^\S*/g, rendered); },
    set(value) { set.call(this, value); },
  });
})();
