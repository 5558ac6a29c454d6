// The register-bank stepper's view. Every case arrives simulated by tcgemm.regbank (trait
// "cases"); this module only displays one step of one case, so it works in the static HTML book.

const SETTINGS = ["numbering", "order", "register_file", "reuse"];
const LABELS = { numbering: "registers", order: "order", register_file: "register file", reuse: "reuse cache" };
const SIZE = 8;
const SLOTS = ["a", "b", "c"];

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

// The case's k-th step (0-based) as one object; the case holds one list per field.
function stepAt(data, k) {
  return {
    i: data.i[k], j: data.j[k], registers: data.registers[k], banks: data.banks[k],
    hits: [...data.hits[k]], extra: data.extra[k],
  };
}

function soFar(data, number) {
  const seen = data.extra.slice(0, number);
  return {
    conflicts: seen.filter((extra) => extra > 0).length,
    hits: data.hits.slice(0, number).join("").length,
  };
}

function describe(step, number, counts) {
  const [a, b, c] = step.registers;
  const banks = SLOTS.map((slot, k) => `${slot} ${step.banks[k]}`).join(", ");
  const reused = step.hits.length ? `${step.hits.join(" and ")} from reuse cache` : "no reuse hit";
  const conflict = step.extra ? `conflict, ${plural(step.extra, "extra cycle")}` : "no conflict";
  return `step ${number}: FFMA R${c}, R${a}, R${b}, R${c} — banks ${banks} — ${reused} — ${conflict}; ` +
    `so far: ${plural(counts.conflicts, "conflict")}, ${plural(counts.hits, "reuse hit")}`;
}

function totalsText(totals) {
  const hits = (totals.reuse_hits.a || 0) + (totals.reuse_hits.b || 0);
  return `all 64 FFMAs: ${plural(totals.conflicts, "conflict")} (${plural(totals.extra_cycles, "extra cycle")}); ` +
    `${hits} of 128 a/b reads from the reuse cache (${Math.round(100 * totals.hit_rate)}%)`;
}

// The bank's colour and the text that reads on it, for widgets.css to use.
function paint(cell, palette, bank) {
  cell.style.setProperty("--face", palette[bank].face);
  cell.style.setProperty("--ink", palette[bank].ink);
  cell.dataset.bank = bank;
}

function buildGrid() {
  const table = element("table", { class: "tcgemm-regbank-grid" });
  const top = element("tr", {}, [element("th", { class: "tcgemm-regbank-corner", text: "a \\ b" })]);
  for (let j = 0; j < SIZE; j++) top.append(element("th", { class: "tcgemm-regbank-b", "data-j": j }));
  table.append(top);
  for (let i = 0; i < SIZE; i++) {
    const row = element("tr", {}, [element("th", { class: "tcgemm-regbank-a", "data-i": i })]);
    for (let j = 0; j < SIZE; j++) row.append(element("td", { class: "tcgemm-regbank-c", "data-i": i, "data-j": j }));
    table.append(row);
  }
  return table;
}

function showGrid(table, palette, data, number) {
  const current = stepAt(data, number - 1);
  data.extra.forEach((_, k) => {
    const step = stepAt(data, k);
    const [a, b, c] = step.registers;
    const cell = table.querySelector(`td[data-i="${step.i}"][data-j="${step.j}"]`);
    cell.textContent = `R${c}`;
    paint(cell, palette, step.banks[2]);
    const visited = k < number;
    cell.classList.toggle("visited", visited);
    cell.classList.toggle("current", k === number - 1);
    cell.classList.toggle("conflict", visited && step.extra > 0);
    cell.title = `c${step.i}${step.j} = R${c}, bank ${step.banks[2]}; FFMA number ${k + 1}`;
    const aCell = table.querySelector(`th[data-i="${step.i}"]`);
    const bCell = table.querySelector(`th[data-j="${step.j}"]`);
    aCell.textContent = `a${step.i} R${a}`;
    bCell.textContent = `b${step.j} R${b}`;
    paint(aCell, palette, step.banks[0]);
    paint(bCell, palette, step.banks[1]);
  });
  for (const header of table.querySelectorAll("th[data-i], th[data-j]")) {
    const isA = header.dataset.i !== undefined;
    const inUse = isA ? Number(header.dataset.i) === current.i : Number(header.dataset.j) === current.j;
    header.classList.toggle("in-use", inUse);
    header.classList.toggle("reused", inUse && current.hits.includes(isA ? "a" : "b"));
  }
}

function render({ model, el }) {
  const cases = model.get("cases");
  const choices = model.get("choices");
  const palette = model.get("palette");
  const state = Object.fromEntries([...SETTINGS, "step"].map((name) => [name, model.get(name)]));

  const selects = {};
  const controls = element("div", { class: "tcgemm-controls" });
  for (const name of SETTINGS) {
    selects[name] = element("select", { name });
    for (const value of choices[name]) selects[name].append(element("option", { value, text: value }));
    controls.append(element("label", { class: "tcgemm-control" }, [element("span", { text: LABELS[name] }), selects[name]]));
  }
  const prev = element("button", { type: "button", name: "prev", text: "◀ prev" });
  const next = element("button", { type: "button", name: "next", text: "next ▶" });
  const slider = element("input", { type: "range", name: "step", min: 1, max: SIZE * SIZE, step: 1 });
  const stepper = element("div", { class: "tcgemm-regbank-steps" }, [prev, slider, next]);
  const info = element("div", { class: "tcgemm-regbank-info" });
  const totals = element("div", { class: "tcgemm-summary" });
  const grid = buildGrid();
  const legend = element("div", {
    class: "tcgemm-regbank-legend",
    text: "colour = bank (a ring until the FFMA issues); dashed = this FFMA; thick border = bank conflict; " +
      "↺ = operand from the reuse cache",
  });
  const root = element("div", { class: "tcgemm-widget tcgemm-regbank-stepper" }, [controls, stepper, info, grid, legend, totals]);
  el.append(root);

  function update() {
    for (const name of SETTINGS) selects[name].value = state[name];
    slider.value = String(state.step);
    prev.disabled = state.step <= 1;
    next.disabled = state.step >= SIZE * SIZE;
    const data = cases[SETTINGS.map((name) => state[name]).join("|")];
    const step = stepAt(data, state.step - 1);
    const counts = soFar(data, state.step);
    info.textContent = describe(step, state.step, counts);
    info.classList.toggle("conflict", step.extra > 0);
    Object.assign(info.dataset, counts);
    totals.textContent = totalsText(data.totals);
    totals.className = `tcgemm-summary ${data.totals.conflicts ? "conflict" : "ok"}`;
    showGrid(grid, palette, data, state.step);
  }
  function set(name, value) {
    state[name] = value;
    try {
      model.set(name, value);
      model.save_changes();
    } catch (error) {
      // No kernel behind the static HTML book: the view works on its own.
    }
    update();
  }
  for (const name of SETTINGS) selects[name].addEventListener("change", () => set(name, selects[name].value));
  slider.addEventListener("input", () => set("step", Number(slider.value)));
  prev.addEventListener("click", () => set("step", Math.max(1, state.step - 1)));
  next.addEventListener("click", () => set("step", Math.min(SIZE * SIZE, state.step + 1)));
  for (const name of [...SETTINGS, "step"]) {
    model.on(`change:${name}`, () => {
      if (state[name] !== model.get(name)) {
        state[name] = model.get(name);
        update();
      }
    });
  }
  update();
}

export default { render };
