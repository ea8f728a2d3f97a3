// Render arithmatex's \( \) and \[ \] spans with the vendored KaTeX.
// Material swaps page bodies on instant navigation, so render on every document$ emission.
document$.subscribe(({ body }) => {
  renderMathInElement(body, {
    delimiters: [
      { left: "$$", right: "$$", display: true },
      { left: "\\[", right: "\\]", display: true },
      { left: "$", right: "$", display: false },
      { left: "\\(", right: "\\)", display: false },
    ],
    ignoredClasses: ["highlight", "jp-CodeCell"],
    throwOnError: false,
  });
});
