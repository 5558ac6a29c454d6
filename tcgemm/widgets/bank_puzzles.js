// The explorer's puzzles judged in the page: the twin of tcgemm/smem/bank_puzzles.py (puzzle_solved), word
// for word (tests/test_bank_puzzles.py). Appended to banks.js, whose model it uses; a puzzle is the
// catalog's data (catalog.puzzles[name]).

// A refusal of the model (a plain Error) in words; anything else is a bug and goes on up.
function refusal(error) {
  if (!(error instanceof Error) || error.constructor !== Error) throw error;
  return error.message;
}

const cell = ([r, c]) => `(${r}, ${c})`;

// Banks [0, 1, 2, 3, 8, 12, 13] as "banks 0-3, 8 and 12-13".
export function bankList(numbers) {
  const runs = [];
  for (const n of numbers) {
    if (runs.length && n === runs[runs.length - 1][1] + 1) runs[runs.length - 1][1] = n;
    else runs.push([n, n]);
  }
  const parts = runs.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`));
  const words = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
  return `${numbers.length === 1 ? "bank" : "banks"} ${words}`;
}

// The banks of a phase that hold more than one word, the most crowded first.
export function crowdedBanks(wordsPerBank) {
  const counts = [...new Set(wordsPerBank.filter((n) => n > 1))].sort((a, b) => b - a);
  return counts.map((n) => {
    const held = wordsPerBank.flatMap((words, bank) => (words === n ? [bank] : []));
    const verb = held.length === 1 ? "holds" : "hold";
    return `${bankList(held)} ${verb} ${n} words${held.length === 1 ? "" : " each"}`;
  }).join(", ");
}

const allowance = (pad) => (pad === 0 ? "with no padding" : `with at most ${pad} bytes of padding per row`);

// Elements that share bytes, or a tile larger than its rows and padding allow.
function tileProblems(puzzle, cells) {
  const { rows, row_elems: cols, elem_bytes: eb } = puzzle.tile;
  const owner = new Map();
  for (const [r, c, address] of cells) {
    for (let b = address; b < address + eb; b++) {
      if (owner.has(b)) {
        return [`elements ${cell(owner.get(b))} and ${cell([r, c])} share byte ${b}: each element needs bytes of its own`];
      }
      owner.set(b, [r, c]);
    }
  }
  const limit = rows * (cols * eb + puzzle.max_pad_bytes);
  const end = Math.max(...cells.map(([, , address]) => address)) + eb;
  if (end > limit) {
    return [`the tile reaches byte ${end - 1}; ${allowance(puzzle.max_pad_bytes)} it must fit in bytes 0-${limit - 1}`];
  }
  return [];
}

// The first lane whose bytes are not the elements it names, in order, or null.
function splitRequest(s, access, lay) {
  const eb = s.elem_bytes;
  const span = Math.max(1, Math.floor(access.width / eb));
  for (let lane = 0; lane < access.rows.length; lane++) {
    const [r, c0, start] = [access.rows[lane], access.cols[lane], access.addresses[lane]];
    for (let i = 0; i < span; i++) {
      const at = lay.at(r, c0 + i); // the whole tile had an address: no refusal here
      if (at !== start + i * eb) {
        return `lane ${lane} reads bytes ${start}-${start + access.width - 1} as elements `
          + `${cell([r, c0])}-${cell([r, c0 + span - 1])}, but element ${cell([r, c0 + i])} is at byte ${at}, `
          + `not ${start + i * eb}`;
      }
    }
  }
  return null;
}

function accessProblem(label, s, lay) {
  let access;
  try {
    access = buildAccess(s);
  } catch (error) {
    return `${label}: ${refusal(error)}`;
  }
  const split = splitRequest(s, access, lay);
  if (split) return `${label}: ${split}`;
  const report = analyzeAccess(access);
  if (!report.conflicts) return null;
  const crowded = report.phases.flatMap((phase, p) => (phase.wavefronts > 1 ? [p] : []));
  const more = crowded.length - 1;
  const tail = more ? ` (and ${more} more conflicting phase${more > 1 ? "s" : ""})` : "";
  return `${label}: ${report.wavefronts} wavefronts where ${report.ideal} would do; `
    + `phase ${crowded[0]}: ${crowdedBanks(report.phases[crowded[0]].wordsPerBank)}${tail}`;
}

// Whether the explorer settings s solve the puzzle, and if not, what is wrong: {solved, problems}.
export function puzzleSolved(puzzle, s) {
  const verdict = (problems) => ({ solved: problems.length === 0, problems });
  const { tile } = puzzle;
  const elem = ELEMENT_NAMES[tile.elem_bytes];
  if (s.elem_bytes !== tile.elem_bytes) {
    return verdict([`the tile is ${elem}: set the element to ${tile.elem_bytes} B (${elem})`]);
  }
  let lay;
  try {
    lay = buildLayout(s);
  } catch (error) { // the layout as a whole, or (below) at an element of the tile
    return verdict([`the layout is refused: ${refusal(error)}`]);
  }
  if (lay.rowElems !== tile.row_elems) {
    return verdict([`a row of the tile holds ${tile.row_elems} ${elem} elements; this layout's rows hold ${lay.rowElems}`]);
  }
  const cells = [];
  try {
    for (let r = 0; r < tile.rows; r++) for (let c = 0; c < tile.row_elems; c++) cells.push([r, c, lay.at(r, c)]);
  } catch (error) {
    return verdict([`the layout is refused: ${refusal(error)}`]);
  }
  const problems = tileProblems(puzzle, cells);
  for (const [access, label] of Object.entries(puzzle.accesses)) {
    const problem = accessProblem(label, { ...s, access }, lay);
    if (problem) problems.push(problem);
  }
  return verdict(problems);
}

// The settings a puzzle opens with: its first access on its tile, row-major (bank_puzzles.start_settings).
export function puzzleStart(puzzle) {
  return {
    access: Object.keys(puzzle.accesses)[0], layout: "row-major",
    elem_bytes: puzzle.tile.elem_bytes, row_elems: puzzle.tile.row_elems,
  };
}
