// The bank-conflict explorer's view. Appended to banks.js into one ES module (anywidget's _esm):
// every number it shows is computed here, in the page, so it also works in the static HTML book.
// Its settings (and the phase and puzzle shown) live in the page's URL: #bank-explorer:access=...&layout=...
// (#bank-explorer:puzzle=...&access=... with a puzzle: bank_puzzle_panel.js).

const SETTINGS = ["access", "layout", "elem_bytes", "row_elems", "pad_bytes", "B", "M", "S", "unit", "expr", "cute"];
const NUMBERS = new Set(["elem_bytes", "row_elems", "pad_bytes", "B", "M", "S"]);
// Settings whose model trait has another name (DOMWidget.layout belongs to ipywidgets).
const TRAIT = { layout: "smem_layout" };
const trait = (name) => TRAIT[name] || name;
const HASH = "#bank-explorer:";
const MAX_TILE_COLS = 256;  // columns drawn of the tile; more scroll out of reason
const MAX_LINES = 64;       // 128-byte lines drawn of shared memory
const LINE_BYTES = 128;

function select(name, options, value) {
  const node = element("select", { name });
  for (const [key, label] of options) {
    const option = element("option", { value: String(key), text: label });
    if (String(key) === String(value)) option.selected = true;
    node.append(option);
  }
  return node;
}

function control(label, input, name) {
  return element("label", { class: "tcgemm-control", "data-setting": name }, [element("span", { text: label }), input]);
}

function controls(model, catalog) {
  const get = (key) => model.get(trait(key));
  const number = (name, min, max) => element("input", { name, type: "number", min, max, step: 1, value: get(name) });
  const text = (name, size) => element("input", { name, type: "text", size, value: get(name), spellcheck: "false" });
  const presets = [["", "your own settings"], ...Object.entries(catalog.presets).map(([key, p]) => [key, p.label])];
  return element("div", { class: "tcgemm-controls" }, [
    control("preset", select("preset", presets, ""), "preset"),
    control("access", select("access", Object.entries(catalog.accesses), get("access")), "access"),
    control("layout", select("layout", Object.entries(catalog.layouts), get("layout")), "layout"),
    control("element", select("elem_bytes", [[1, "1 B (int8)"], [2, "2 B (fp16)"], [4, "4 B (fp32)"]], get("elem_bytes")), "elem_bytes"),
    control("row length (elements)", number("row_elems", 1, 1024), "row_elems"),
    control("padding (bytes)", number("pad_bytes", 0, 256), "pad_bytes"),
    control("B", number("B", 0, 5), "B"),
    control("M", number("M", 0, 7), "M"),
    control("S", number("S", -7, 7), "S"),
    control("swizzle on", select("unit", [["element", "element offsets (CuTe)"], ["byte", "byte offsets"]], get("unit")), "unit"),
    control("byte offset =", text("expr", 40), "expr"),
    control("CuTe layout", text("cute", 34), "cute"),
  ]);
}

function readSettings(root) {
  const settings = {};
  for (const name of SETTINGS) {
    const input = root.querySelector(`[name="${name}"]`);
    settings[name] = NUMBERS.has(name) ? Number(input.value) : input.value;
  }
  return settings;
}

// ---- the URL ------------------------------------------------------------------------------------

function hashText(catalog, settings, phase, puzzle) {
  const names = ["access", "layout", "elem_bytes", ...catalog.layout_settings[settings.layout] || []];
  const params = new URLSearchParams([...puzzle ? [["puzzle", puzzle]] : [], ...names.map((name) => [name, String(settings[name])])]);
  params.set("phase", String(phase));
  return HASH + params.toString();
}

function hashSettings() {
  if (!window.location.hash.startsWith(HASH)) return null;
  const params = new URLSearchParams(window.location.hash.slice(HASH.length));
  const settings = {};
  for (const [name, value] of params) if (SETTINGS.includes(name) || name === "phase" || name === "puzzle") settings[name] = value;
  return settings;
}

// ---- what is drawn ------------------------------------------------------------------------------

// The words (summaryText, phaseText, phaseRowLabel, phaseName) are banks.js's, the twins of bank_cases'.

// A light face per bank (32 hues, neighbours far apart) that black text reads on.
const bankFace = (bank) => `hsl(${(bank * 11 * 360) / BANKS % 360} 80% 82%)`;

// Which lanes touch each element of the tile: "row,col" -> [{lane, phase}].
function lanesByElement(access, report) {
  const touched = new Map();
  const span = Math.max(1, Math.floor(access.width / access.layout.elemBytes));
  report.phases.forEach((phase, p) => {
    for (const lane of phase.lanes) {
      for (let i = 0; i < span; i++) {
        const key = `${access.rows[lane]},${access.cols[lane] + i}`;
        if (!touched.has(key)) touched.set(key, []);
        touched.get(key).push({ lane, phase: p });
      }
    }
  });
  return touched;
}

// Every element of the tile drawn: its byte address, or the refusal of the layout there.
function tileElements(access, rows) {
  const lay = access.layout;
  const cols = Math.min(lay.rowElems, MAX_TILE_COLS);
  const cells = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      try {
        cells.push({ row: r, col: c, address: lay.at(r, c) });
      } catch (error) {
        cells.push({ row: r, col: c, error: error.message });
      }
    }
  }
  return { cells, cols };
}

function describeElement(cell, touched) {
  if (cell.error) return `element (${cell.row}, ${cell.col}): ${cell.error}`;
  const by = (touched.get(`${cell.row},${cell.col}`) || []).map((t) => `lane ${t.lane} in ${phaseName(t.phase)}`);
  return `element (${cell.row}, ${cell.col}): byte address ${cell.address}, bank ${bankOf(cell.address)}; ` +
    (by.length ? `accessed by ${by.join(", ")}` : "not accessed");
}

function tileView(access, report, tile, phase, touched) {
  const table = element("table", { class: "tcgemm-tile" });
  const header = element("tr", {}, [element("th", { text: "row \\ col" })]);
  for (let c = 0; c < tile.cols; c++) header.append(element("th", { text: String(c) }));
  table.append(header);
  let row = null;
  for (const cell of tile.cells) {
    if (cell.col === 0) {
      row = element("tr", {}, [element("th", { text: String(cell.row) })]);
      table.append(row);
    }
    const td = element("td", { class: "tcgemm-element", "data-row": cell.row, "data-col": cell.col });
    if (cell.error) {
      td.classList.add("refused");
    } else {
      td.dataset.address = cell.address;
      td.dataset.bank = bankOf(cell.address);
      td.style.background = bankFace(bankOf(cell.address));
    }
    const mine = (touched.get(`${cell.row},${cell.col}`) || []).filter((t) => t.phase === phase);
    if (mine.length) {
      td.classList.add("in-phase");
      td.dataset.lanes = mine.map((t) => t.lane).join(" ");
      const first = mine.filter((t) => access.cols[t.lane] === cell.col && access.rows[t.lane] === cell.row);
      if (first.length) td.textContent = first.map((t) => t.lane).join(",");
    }
    row.append(td);
  }
  return table;
}

// Shared memory in address order: 128-byte lines, a column per bank, each word labelled with the
// tile element at its lowest address (its row above its column).
function memoryView(access, tile, phase, report) {
  const words = new Map(); // word -> the elements stored in it, lowest address first
  for (const cell of tile.cells) {
    if (cell.error) continue;
    const word = Math.floor(cell.address / 4);
    if (!words.has(word)) words.set(word, []);
    words.get(word).push(cell);
  }
  for (const cells of words.values()) cells.sort((a, b) => a.address - b.address);
  const phaseWords = new Set();
  for (const lane of report.phases[phase]?.lanes || []) {
    const first = Math.floor(access.addresses[lane] / 4);
    for (let i = 0; i < Math.max(1, access.width / 4); i++) phaseWords.add(first + i);
  }
  const lines = [...new Set([...words.keys()].map((w) => Math.floor(w / BANKS)))].sort((a, b) => a - b);
  const table = element("table", { class: "tcgemm-memory" });
  const header = element("tr", {}, [element("th", { text: "byte \\ bank" })]);
  for (let bank = 0; bank < BANKS; bank++) header.append(element("th", { text: String(bank) }));
  table.append(header);
  for (const line of lines.slice(0, MAX_LINES)) {
    const tr = element("tr", {}, [element("th", { text: String(line * LINE_BYTES) })]);
    for (let bank = 0; bank < BANKS; bank++) {
      const word = line * BANKS + bank;
      const held = words.get(word);
      const td = element("td", { class: "tcgemm-word", "data-address": word * 4 });
      if (held) {
        const [{ row, col }] = held;
        td.append(element("span", { text: String(row) }), element("br"), element("span", { text: String(col) }));
        td.style.background = bankFace(bank);
        Object.assign(td.dataset, { row, col });
        td.title = `bytes ${word * 4}-${word * 4 + 3}, bank ${bank}: ` + held.map((c) => `(${c.row}, ${c.col})`).join(" ");
      }
      if (phaseWords.has(word)) td.classList.add("in-phase");
      tr.append(td);
    }
    table.append(tr);
  }
  const note = lines.length > MAX_LINES ? `, the first ${MAX_LINES} of ${lines.length} lines drawn` : "";
  return { table, note };
}

function bankGrid(report, current) {
  const table = element("table", { class: "tcgemm-banks" });
  const header = element("tr", {}, [element("th", { text: "phase \\ bank" })]);
  for (let bank = 0; bank < BANKS; bank++) header.append(element("th", { text: String(bank) }));
  table.append(header);
  report.phases.forEach((phase, p) => {
    const lanesOfBank = Array.from({ length: BANKS }, () => []);
    phase.lanes.forEach((lane, i) => {
      for (const bank of new Set(phase.banksPerLane[i])) lanesOfBank[bank].push(lane);
    });
    const row = element("tr", { "data-phase": p }, [element("th", { text: phaseRowLabel(p, phase.wavefronts) })]);
    if (p === current) row.classList.add("current");
    lanesOfBank.forEach((lanes, bank) => {
      const words = phase.wordsPerBank[bank];
      const cls = words === 0 ? "idle" : words === 1 ? "ok" : "conflict";
      const cell = element("td", {
        class: `tcgemm-bank ${cls}`, "data-bank": bank, "data-words": words,
        title: `bank ${bank}: lanes ${lanes.join(", ") || "none"}; ${words} distinct word(s)`,
        text: lanes.join(" "),
      });
      if (words > 1) cell.style.setProperty("--way", String(Math.min(words, 8) / 8));
      row.append(cell);
    });
    table.append(row);
  });
  return table;
}

function laneTable(access, report) {
  const table = element("table", { class: "tcgemm-lanes" });
  table.append(element("tr", {}, ["lane", "row", "col", "byte address", "banks"].map((t) => element("th", { text: t }))));
  report.phases.forEach((phase) => {
    phase.lanes.forEach((lane, i) => {
      const banks = phase.banksPerLane[i];
      const span = banks.length > 1 ? `${banks[0]}-${banks[banks.length - 1]}` : String(banks[0]);
      table.append(element("tr", {}, [lane, access.rows[lane], access.cols[lane], access.addresses[lane], span]
        .map((t) => element("td", { text: String(t) }))));
    });
  });
  return table;
}

const count = (n) => n.toLocaleString("en-US");

// Nsight Compute's counts for the kernel a preset comes from, beside the model's prediction.
function measuredView(catalog, measured, preset, report) {
  const box = element("div", { class: "tcgemm-measured" });
  const p = catalog.presets[preset];
  if (!p || !p.kernel) return box;
  const title = catalog.kernels[p.kernel];
  const data = measured?.kernels?.[p.kernel];
  if (!data) {
    box.append(element("p", { text: `${title}: no Nsight Compute counts were recorded with this page ` +
      "(the chapter's profiling cell fills them in on a GPU with ncu)." }));
    return box;
  }
  const counters = catalog.measured_counters[p.op].filter((c) => data[c] && data[c].measured !== null);
  const instructions = data[counters[0]].measured;
  box.append(element("p", { text: `Nsight Compute on the ${measured.device} (${measured.arch}), ${title} at ` +
    `${measured.size}: every instruction of this kind in the launch, measured beside the model's prediction.` }));
  const table = element("table", { class: "tcgemm-measured-counts" });
  table.append(element("tr", {}, ["ncu metric", "predicted", "measured", "per instruction"]
    .map((t) => element("th", { text: t }))));
  for (const c of counters) {
    const { metric, predicted, measured: value } = data[c];
    table.append(element("tr", { "data-counter": c }, [
      element("td", { text: metric }), element("td", { text: count(predicted) }),
      element("td", { text: count(value), "data-measured": value }),
      element("td", { text: (value / instructions).toFixed(4) })]));
  }
  box.append(element("div", { class: "tcgemm-scroll" }, [table]));
  box.append(element("p", { text: `This instruction, by the model: ${plural(report.wavefronts, "wavefront")} ` +
    `(ideal ${report.ideal}), ${plural(report.conflicts, "bank conflict")}.` }));
  return box;
}

// ---- the view -----------------------------------------------------------------------------------

function render({ model, el }) {
  const catalog = model.get("catalog");
  const root = element("div", { class: "tcgemm-widget tcgemm-bank-explorer" });
  const form = controls(model, catalog);
  const summary = element("div", { class: "tcgemm-summary" });
  const cute = element("div", { class: "tcgemm-cute" });
  const measured = element("div");
  const back = element("button", { type: "button", name: "previous", text: "◀" });
  const next = element("button", { type: "button", name: "next", text: "▶" });
  const phaseLabel = element("span", { class: "tcgemm-phase" });
  const stepper = element("div", { class: "tcgemm-steps" }, [back, phaseLabel, next]);
  const tileBox = element("div", { class: "tcgemm-scroll tcgemm-tile-box" });
  const POINT = "Point at or click an element for its address, bank and lanes.";
  const info = element("div", { class: "tcgemm-element-info", text: POINT });
  const memoryCaption = element("div", { class: "tcgemm-caption" });
  const memoryBox = element("div", { class: "tcgemm-scroll tcgemm-memory-box" });
  const grid = element("div", { class: "tcgemm-scroll tcgemm-grid" });
  const details = element("details", {}, [element("summary", { text: "every lane's address and banks" })]);
  const lanes = element("div", { class: "tcgemm-scroll" });
  details.append(lanes);
  const puzzles = puzzlePanel(catalog, choosePuzzle);
  root.append(puzzles.node, form, summary, cute, measured, stepper,
    element("div", { class: "tcgemm-caption", text: "The tile as the kernel indexes it, coloured by bank; "
      + "the phase's elements outlined, each lane's number where its request starts:" }),
    tileBox, info, memoryCaption, memoryBox,
    element("div", { class: "tcgemm-caption", text: "Banks per phase: the lanes in each bank, orange where they need different words:" }),
    grid, details);
  el.append(root);

  let phase = 0;
  let current = null; // { access, report, touched, tile }

  function setSetting(name, value) {
    const input = root.querySelector(`[name="${name}"]`);
    input.value = String(value);
    try {
      model.set(trait(name), NUMBERS.has(name) ? Number(value) : String(value));
      model.save_changes();
    } catch (error) {
      // In the static HTML book there is no kernel to sync with; the view works on its own.
    }
  }

  function update() {
    const settings = readSettings(root);
    const shown = new Set(catalog.layout_settings[settings.layout] || []);
    for (const name of ["row_elems", "pad_bytes", "B", "M", "S", "unit", "expr", "cute"]) {
      form.querySelector(`[data-setting="${name}"]`).hidden = !shown.has(name);
    }
    const preset = presetOf(catalog, settings);
    root.querySelector('[name="preset"]').value = preset;
    for (const box of [tileBox, memoryBox, grid, lanes, measured, cute]) box.replaceChildren();
    info.textContent = POINT;
    for (const key of Object.keys(info.dataset)) delete info.dataset[key];
    try {
      const { access, report } = analyze(settings);
      phase = Math.min(Math.max(phase, 0), report.phases.length - 1);
      summary.textContent = summaryText(catalog, settings, report);
      summary.className = `tcgemm-summary ${report.conflicts ? "conflict" : "ok"}`;
      Object.assign(summary.dataset, {
        conflicts: report.conflicts, wavefronts: report.wavefronts, ideal: report.ideal, maxWay: report.ways,
        error: "", phase, preset,
      });
      const equivalent = cuteEquivalent(settings);
      cute.append(equivalent
        ? element("span", { text: "In CuTe notation: " })
        : element("span", { text: "CuTe has no layout for this one (a custom expression, or padding that is not whole elements)." }));
      if (equivalent) {
        cute.append(element("code", { text: equivalent.cute, "data-unit": equivalent.unit }));
        if (equivalent.cute.startsWith("Swizzle")) cute.append(element("span", { text: ` (swizzle on ${equivalent.unit} offsets)` }));
        if (settings.layout !== "cute") {
          const use = element("button", { type: "button", name: "use-cute", text: "edit as CuTe" });
          use.addEventListener("click", () => {
            setSetting("cute", equivalent.cute);
            setSetting("unit", equivalent.unit);
            setSetting("layout", "cute");
            changed();
          });
          cute.append(use);
        }
      }
      measured.append(measuredView(catalog, model.get("measured"), preset, report));
      const touched = lanesByElement(access, report);
      const tile = tileElements(access, tileRows(settings));
      current = { access, report, touched, tile };
      phaseLabel.textContent = phaseText(access, report, phase);
      back.disabled = phase === 0;
      next.disabled = phase === report.phases.length - 1;
      tileBox.append(tileView(access, report, tile, phase, touched));
      if (tile.cols < access.layout.rowElems) {
        tileBox.append(element("div", { class: "tcgemm-caption", text: `columns 0-${tile.cols - 1} of ${access.layout.rowElems} drawn` }));
      }
      const memory = memoryView(access, tile, phase, report);
      memoryCaption.textContent = "Shared memory in address order, 128 bytes a line, a column per bank: "
        + `the element stored in each word, its row above its column${memory.note}:`;
      memoryBox.append(memory.table);
      grid.append(bankGrid(report, phase));
      lanes.append(laneTable(access, report));
      stepper.hidden = false;
    } catch (error) {
      current = null;
      summary.textContent = `not a valid case: ${error.message}`;
      summary.className = "tcgemm-summary error";
      memoryCaption.textContent = "";
      stepper.hidden = true;
      Object.assign(summary.dataset, {
        conflicts: "", wavefronts: "", ideal: "", maxWay: "", error: error.message, phase: "", preset,
      });
    }
    puzzles.check(settings);
  }

  // The reader chose a puzzle (or none), or asked to see its solution: its settings, from phase 0.
  function choosePuzzle(name, withSolution) {
    puzzles.show(name);
    try {
      model.set("puzzle", puzzles.name);
      model.save_changes();
    } catch (error) {
      // No kernel in the static HTML book.
    }
    const puzzle = catalog.puzzles?.[puzzles.name];
    if (puzzle) {
      const values = { ...puzzleStart(puzzle), ...withSolution ? puzzle.solution : {} };
      for (const [key, value] of Object.entries(values)) setSetting(key, value);
      phase = 0;
    }
    changed();
  }

  // After the reader changed something: redraw and put the settings in the page's URL.
  function changed() {
    update();
    const url = new URL(window.location.href);
    url.hash = hashText(catalog, readSettings(root), phase, puzzles.name);
    try {
      window.history.replaceState(window.history.state, "", url);
    } catch (error) {
      // A host page that forbids it (a sandboxed frame): the view works without its link.
    }
  }

  // Settings from a #bank-explorer: link, shown and scrolled to.
  function applyHash() {
    const fromHash = hashSettings();
    if (!fromHash) return false;
    for (const [name, value] of Object.entries(fromHash)) if (SETTINGS.includes(name)) setSetting(name, value);
    phase = Number(fromHash.phase) || 0;
    puzzles.show(fromHash.puzzle || "");
    update();
    requestAnimationFrame(() => root.scrollIntoView({ block: "start" }));
    return true;
  }

  form.addEventListener("change", (event) => {
    const name = event.target.name;
    if (name === "preset") {
      const p = catalog.presets[event.target.value];
      if (!p) return;
      for (const key of SETTINGS) setSetting(key, p.settings[key]);
      phase = 0;
    } else if (SETTINGS.includes(name)) {
      setSetting(name, readSettings(root)[name]);
    } else {
      return;
    }
    changed();
  });
  form.addEventListener("input", (event) => {
    if (event.target.tagName === "INPUT") update(); // typing; a menu's choice arrives as "change"
  });
  for (const [button, step] of [[back, -1], [next, 1]]) {
    button.addEventListener("click", () => {
      phase += step;
      changed();
    });
  }
  const showElement = (event) => {
    const target = event.target.closest("td.tcgemm-element");
    if (!target || !current) return;
    const cell = current.tile.cells[Number(target.dataset.row) * current.tile.cols + Number(target.dataset.col)];
    info.textContent = describeElement(cell, current.touched);
    Object.assign(info.dataset, { row: cell.row, col: cell.col, address: cell.address ?? "", bank: cell.error ? "" : bankOf(cell.address) });
  };
  tileBox.addEventListener("mouseover", showElement);
  tileBox.addEventListener("click", showElement);
  window.addEventListener("hashchange", applyHash);
  for (const name of SETTINGS) {
    model.on(`change:${trait(name)}`, () => {
      const input = root.querySelector(`[name="${name}"]`);
      if (String(input.value) !== String(model.get(trait(name)))) {
        input.value = model.get(trait(name));
        update();
      }
    });
  }
  model.on("change:measured", update);
  model.on("change:puzzle", () => {
    if (puzzles.name !== (model.get("puzzle") || "")) {
      puzzles.show(model.get("puzzle"));
      update();
    }
  });
  puzzles.show(model.get("puzzle"));
  if (!applyHash()) update();
  return () => window.removeEventListener("hashchange", applyHash);
}

export default { render };
