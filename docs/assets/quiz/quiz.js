// Quizzes on the lesson and its follow-up pages. The markup works without this script
// (answers, and a note on every wrong option or typical wrong value, sit in <details>
// boxes); the script adds checking. Re-runs on every Material page swap.
//
// Feedback is built by cloning the explanation's DOM nodes, never from textContent:
// a formula stays whatever the page holds (KaTeX's HTML plus its MathML for screen
// readers, whether rendered in the browser or at build time), so it reads once,
// correctly, both on screen and in the aria-live region. No KaTeX code is needed here.
(() => {
  "use strict";

  // "later": a reader's own verdict on a recall card, which is not graded as wrong.
  const MARK = { right: "\u2713 Correct.", wrong: "\u2717 Not quite.", later: "\u21bb Worth another pass." };
  const OPTION_LABEL = { right: "\u2713 correct", wrong: "\u2717 not this one" };

  const tag = (name, className, textContent) => Object.assign(document.createElement(name), { className, textContent });

  // Child nodes of `source`, deep-cloned, without ids (an id must stay unique on the page).
  function cloneContent(source, skipLeading = false) {
    const nodes = [...source.childNodes];
    if (skipLeading) {
      // Drop the leading "X: yes/no." label and the whitespace after it.
      while (nodes.length && nodes[0].nodeType === Node.TEXT_NODE && !nodes[0].textContent.trim()) nodes.shift();
      if (nodes[0]?.nodeName === "STRONG") nodes.shift();
    }
    const fragment = document.createDocumentFragment();
    fragment.append(...nodes.map((node) => node.cloneNode(true)));
    fragment.querySelectorAll("[id]").forEach((el) => el.removeAttribute("id"));
    const first = fragment.firstChild;
    if (first?.nodeType === Node.TEXT_NODE) first.textContent = first.textContent.replace(/^\s+/, "");
    return fragment;
  }

  // Replace the feedback with a verdict mark and `content` (strings and nodes/fragments).
  function say(quiz, verdict, ...content) {
    const feedback = quiz.querySelector(".quiz-feedback");
    feedback.dataset.verdict = verdict;
    const mark = MARK[verdict] ? [tag("strong", "quiz-mark", MARK[verdict]), " "] : [];
    feedback.replaceChildren(...mark, ...content);
  }

  function initNumeric(quiz) {
    const form = quiz.querySelector("[data-quiz-form]");
    const input = form.querySelector("input");
    const answer = Number(quiz.dataset.answer);
    // Notes on typical wrong values: <li data-value="512 512.0">, one or more numbers each.
    const notes = new Map();
    quiz.querySelectorAll(".quiz-values li[data-value]").forEach((li) =>
      li.dataset.value.split(/\s+/).filter(Boolean).forEach((v) => notes.set(Number(v.replace(/[,_]/g, "")), li))
    );
    form.hidden = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const raw = input.value.trim();
      // Accept digit grouping: 1,050,624 / 1 050 624 / 1_050_624.
      const value = Number(raw.replace(/[,_\s\u00a0\u202f]/g, ""));
      if (raw === "" || !Number.isFinite(value)) {
        input.setAttribute("aria-invalid", "true");
        say(quiz, "invalid", raw === "" ? "Type a number first." : "Type the number in digits only, such as 4096 (no units or letters; commas or spaces between groups are fine).");
        return;
      }
      input.removeAttribute("aria-invalid");
      if (value === answer) {
        say(quiz, "right", cloneContent(quiz.querySelector(".quiz-why")));
      } else if (notes.has(value)) {
        // A value with its own note: say which mistake gives it (the note starts with the value).
        say(quiz, "wrong", cloneContent(notes.get(value)));
      } else {
        say(quiz, "wrong", `${raw} is not it. `, cloneContent(quiz.querySelector(".quiz-hint")));
      }
    });
  }

  function initChoice(quiz) {
    const check = quiz.querySelector("[data-quiz-check]");
    const notes = new Map(
      [...quiz.querySelectorAll(".quiz-explanations li")].map((li) => [li.dataset.option, li])
    );
    check.hidden = false;
    check.addEventListener("click", () => {
      const chosen = quiz.querySelector("input[type=radio]:checked");
      // Clear the last verdict: the option's mark, and the space before it.
      quiz.querySelectorAll(".quiz-option[data-verdict]").forEach((option) => option.removeAttribute("data-verdict"));
      quiz.querySelectorAll(".quiz-option-verdict").forEach((mark) => {
        if (mark.previousSibling?.nodeValue === " ") mark.previousSibling.remove();
        mark.remove();
      });
      if (!chosen) {
        say(quiz, "invalid", "Choose an answer first.");
        return;
      }
      const note = notes.get(chosen.value);
      const verdict = note.dataset.correct === "true" ? "right" : "wrong";
      const option = chosen.closest(".quiz-option");
      option.dataset.verdict = verdict;
      option.querySelector("label").append(" ", tag("span", "quiz-option-verdict", OPTION_LABEL[verdict]));
      say(quiz, verdict, cloneContent(note, true));
      if (verdict === "right") quiz.querySelector(".quiz-answer").open = true;
    });
  }

  function initRecall(quiz) {
    const details = quiz.querySelector(".quiz-answer");
    const selfCheck = quiz.querySelector("[data-quiz-self-check]");
    details.addEventListener("toggle", () => {
      if (details.open && !details.hasAttribute("data-print-opened")) selfCheck.hidden = false;
    });
    selfCheck.querySelectorAll("button").forEach((button) =>
      button.addEventListener("click", () => (button.dataset.verdict === "had-it"
        ? say(quiz, "right", "Split, attend, concatenate and project: that is the whole layer.")
        : say(quiz, "later", "Reread the section \u201cSplit, attend, concatenate, project\u201d above, then try again later.")))
    );
  }

  const INIT = { numeric: initNumeric, choice: initChoice, recall: initRecall };

  function initAll(root) {
    root.querySelectorAll(".quiz[data-quiz]").forEach((quiz) => {
      const init = INIT[quiz.dataset.quiz];
      if (quiz.dataset.quizReady || !init) return;
      init(quiz);
      quiz.dataset.quizReady = "true";
    });
  }

  // Printing: show every answer box, so the printed page carries each explanation.
  const openedForPrint = [];
  window.addEventListener("beforeprint", () => {
    document.querySelectorAll(".quiz details.quiz-answer:not([open])").forEach((details) => {
      details.setAttribute("data-print-opened", "");
      details.open = true;
      openedForPrint.push(details);
    });
  });
  window.addEventListener("afterprint", () => {
    openedForPrint.splice(0).forEach((details) => {
      details.open = false;
      details.removeAttribute("data-print-opened");
    });
  });

  // Material's bundle defines document$ and emits on every page; subscribe when it is there.
  // If this script runs first (scripts may load in either order, after the first paint), set
  // up from the parsed document instead: initAll skips a quiz it has already set up.
  const start = () => initAll(document);
  if (window.document$) window.document$.subscribe(start);
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
  else start();
})();
