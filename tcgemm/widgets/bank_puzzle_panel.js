// The explorer's puzzle panel: a menu of the catalog's puzzles, the chosen one's goal, its verdict on the
// settings on screen (puzzleSolved, in the page), and a hint and a solution, each folded. Concatenated
// after bank_puzzles.js and before bank_explorer.js, whose view places it, tells it every change (check)
// and is told the reader's choices: choose(name, withSolution).

function solvedText(puzzle) {
  const labels = Object.values(puzzle.accesses);
  const checked = labels.length === 1 ? labels[0] : `${labels.slice(0, -1).join(", ")} and ${labels[labels.length - 1]}`;
  return `Solved: ${checked} ${labels.length === 1 ? "is" : "are"} conflict-free, and the tile fits `
    + `${allowance(puzzle.max_pad_bytes)}.`;
}

function puzzlePanel(catalog, choose) {
  const puzzles = catalog.puzzles || {};
  const order = (catalog.puzzle_order || Object.keys(puzzles)).filter((key) => key in puzzles);
  const options = [["", "none: explore freely"], ...order.map((key, i) => [key, `${i + 1}. ${puzzles[key].title}`])];
  const menu = select("puzzle", options, "");
  const goal = element("p", { class: "tcgemm-puzzle-goal" });
  const verdict = element("div", { class: "tcgemm-puzzle-verdict" });
  const hint = element("p");
  const solution = element("p");
  const apply = element("button", { type: "button", name: "puzzle-solution", text: "show it in the explorer" });
  const folds = [
    element("details", { class: "tcgemm-puzzle-hint" }, [element("summary", { text: "hint" }), hint]),
    element("details", { class: "tcgemm-puzzle-solution" }, [element("summary", { text: "a solution" }), solution, apply]),
  ];
  const body = element("div", { class: "tcgemm-puzzle-body" }, [goal, verdict, ...folds]);
  const node = element("div", { class: "tcgemm-puzzle" }, [control("puzzle", menu, "puzzle"), body]);
  menu.addEventListener("change", () => choose(menu.value, false));
  apply.addEventListener("click", () => choose(menu.value, true));

  return {
    node,
    get name() { return menu.value; },
    // Show this puzzle (or none: "" or a name the catalog lacks), its hint and solution folded.
    show(name) {
      const puzzle = puzzles[name];
      menu.value = puzzle ? name : "";
      body.hidden = !puzzle;
      for (const fold of folds) fold.open = false;
      if (!puzzle) return;
      goal.textContent = puzzle.goal;
      hint.textContent = puzzle.hint;
      solution.textContent = puzzle.solution_text;
    },
    // The verdict on these settings.
    check(settings) {
      const puzzle = puzzles[menu.value];
      verdict.replaceChildren();
      for (const key of Object.keys(verdict.dataset)) delete verdict.dataset[key];
      if (!puzzle) return;
      const { solved, problems } = puzzleSolved(puzzle, settings);
      verdict.className = `tcgemm-puzzle-verdict ${solved ? "solved" : "unsolved"}`;
      Object.assign(verdict.dataset, { puzzle: menu.value, solved: String(solved), settings: JSON.stringify(settings) });
      if (solved) {
        verdict.append(element("span", { text: solvedText(puzzle) }));
        return;
      }
      verdict.append(element("span", { text: "Not yet:" }),
        element("ul", {}, problems.map((problem) => element("li", { text: problem }))));
    },
  };
}
