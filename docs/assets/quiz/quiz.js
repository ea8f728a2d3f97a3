// Quizzes on the lesson page. The markup works without this script (answers sit in
// <details> boxes); the script adds checking. Re-runs on every Material page swap.
(() => {
  "use strict";

  const MARK = { right: "\u2713 Correct.", wrong: "\u2717 Not quite." };

  function say(quiz, verdict, text) {
    const feedback = quiz.querySelector(".quiz-feedback");
    feedback.dataset.verdict = verdict;
    feedback.textContent = `${MARK[verdict] || ""} ${text}`.trim();
  }

  function initNumeric(quiz) {
    const form = quiz.querySelector("[data-quiz-form]");
    const input = form.querySelector("input");
    const answer = Number(quiz.dataset.answer);
    form.hidden = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const raw = input.value.trim();
      const value = Number(raw);
      if (raw === "" || !Number.isFinite(value)) {
        input.setAttribute("aria-invalid", "true");
        say(quiz, "invalid", "Type a number first.");
        return;
      }
      input.removeAttribute("aria-invalid");
      if (value === answer) {
        say(quiz, "right", `d_k = ${quiz.dataset.dModel} / ${quiz.dataset.heads} = ${answer}.`);
        quiz.querySelector(".quiz-answer").open = true;
      } else {
        say(quiz, "wrong", `${raw} is not it. Hint: the ${quiz.dataset.heads} heads share the ${quiz.dataset.dModel} dimensions equally.`);
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
      quiz.querySelectorAll(".quiz-option").forEach((option) => option.removeAttribute("data-verdict"));
      if (!chosen) {
        say(quiz, "invalid", "Choose an answer first.");
        return;
      }
      const note = notes.get(chosen.value);
      const right = note.dataset.correct === "true";
      chosen.closest(".quiz-option").dataset.verdict = right ? "right" : "wrong";
      // The note starts with its own "X: yes/no." label; repeat only the reasoning.
      const reason = note.textContent.replace(/^[A-D]: (yes|no)\.\s*/, "");
      say(quiz, right ? "right" : "wrong", reason);
      if (right) quiz.querySelector(".quiz-answer").open = true;
    });
  }

  function initRecall(quiz) {
    const details = quiz.querySelector(".quiz-answer");
    const selfCheck = quiz.querySelector("[data-quiz-self-check]");
    details.addEventListener("toggle", () => {
      if (details.open) selfCheck.hidden = false;
    });
    selfCheck.querySelectorAll("button").forEach((button) =>
      button.addEventListener("click", () => {
        if (button.dataset.verdict === "had-it") {
          say(quiz, "right", "Split, attend, concatenate and project: that is the whole layer.");
        } else {
          say(quiz, "wrong", "Reread the section \u201cSplit, attend, concatenate, project\u201d above, then try again later.");
        }
      })
    );
  }

  const INIT = { numeric: initNumeric, choice: initChoice, recall: initRecall };

  function initAll(root) {
    root.querySelectorAll(".quiz[data-quiz]").forEach((quiz) => {
      if (quiz.dataset.quizReady) return;
      const init = INIT[quiz.dataset.quiz];
      if (!init) return;
      init(quiz);
      quiz.dataset.quizReady = "true";
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(() => initAll(document));
  } else {
    document.addEventListener("DOMContentLoaded", () => initAll(document));
  }
})();
