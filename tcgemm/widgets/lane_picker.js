// The ldmatrix lane picker. The layouts arrive as data from tcgemm.layouts (trait "cases");
// this module only draws them and lights up the chosen lane.

function caseKey(num, trans) {
  return `x${num}${trans ? ".trans" : ""}`;
}

function matrices(data, lane) {
  // Who receives each stored element: cell (row, col) -> [lane, register, half].
  const owner = new Map();
  data.received.forEach((elements, l) => {
    for (const [reg, half, row, col] of elements) owner.set(`${row},${col}`, [l, reg, half]);
  });
  const mine = new Set(data.received[lane].map(([, , row, col]) => `${row},${col}`));
  const wrap = element("div", { class: "tcgemm-matrices" });
  for (let m = 0; m < data.num; m++) {
    const table = element("table", { class: "tcgemm-matrix", "data-matrix": m });
    table.append(element("caption", { text: `matrix ${m} (lanes ${8 * m}-${8 * m + 7} address its rows)` }));
    for (let r = 0; r < 8; r++) {
      const row = 8 * m + r;
      const tr = element("tr", { "data-row": row });
      if (data.addressed[lane] === row) tr.classList.add("addressed");
      for (let col = 0; col < 8; col++) {
        const [l, reg, half] = owner.get(`${row},${col}`);
        const key = `${row},${col}`;
        const td = element("td", {
          text: mine.has(key) ? `r${reg}.${half}` : `T${l}`,
          title: `stored row ${r} of matrix ${m}, column ${col}: lane ${l}, register ${reg}, ${half ? "high" : "low"} half`,
        });
        if (mine.has(key)) td.classList.add("received");
        tr.append(td);
      }
      table.append(tr);
    }
    wrap.append(table);
  }
  return wrap;
}

function describe(data, lane) {
  const row = data.addressed[lane];
  const gives = row === null
    ? `Lane ${lane}'s address is not used by .x${data.num}.`
    : `Lane ${lane} gives the address of row ${row % 8} of matrix ${Math.floor(row / 8)}.`;
  const regs = new Map();
  for (const [reg, half, r, c] of data.received[lane]) {
    if (!regs.has(reg)) regs.set(reg, []);
    regs.get(reg)[half] = `(${r % 8}, ${c})`;
  }
  const parts = [...regs.entries()].map(([reg, cells]) => `r${reg} = matrix ${reg} ${cells.join(" + ")}`);
  return `${gives} It receives ${parts.join("; ")}.`;
}

function render({ model, el }) {
  const root = element("div", { class: "tcgemm-widget tcgemm-lane-picker" });
  const num = element("select", { name: "num" });
  for (const n of [1, 2, 4]) num.append(element("option", { value: n, text: `.x${n}` }));
  const trans = element("input", { type: "checkbox", name: "trans" });
  const instruction = element("code", { class: "tcgemm-instruction" });
  const buttons = element("div", { class: "tcgemm-lane-buttons" });
  for (let l = 0; l < 32; l++) buttons.append(element("button", { type: "button", "data-lane": l, text: String(l) }));
  const info = element("div", { class: "tcgemm-lane-info" });
  const picture = element("div");
  root.append(
    element("div", { class: "tcgemm-controls" }, [
      element("label", { class: "tcgemm-control" }, [element("span", { text: "matrices" }), num]),
      element("label", { class: "tcgemm-control" }, [trans, element("span", { text: ".trans" })]),
      instruction,
    ]),
    element("div", { text: "lane:" }), buttons, info, picture,
  );
  el.append(root);

  const state = { num: model.get("num"), trans: model.get("trans"), lane: model.get("lane") };
  function update() {
    num.value = String(state.num);
    trans.checked = state.trans;
    const data = model.get("cases")[caseKey(state.num, state.trans)];
    instruction.textContent = data.instruction;
    for (const b of buttons.children) b.classList.toggle("chosen", Number(b.dataset.lane) === state.lane);
    info.textContent = describe(data, state.lane);
    picture.replaceChildren(matrices(data, state.lane));
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
  num.addEventListener("change", () => set("num", Number(num.value)));
  trans.addEventListener("change", () => set("trans", trans.checked));
  buttons.addEventListener("click", (event) => {
    if (event.target.dataset.lane !== undefined) set("lane", Number(event.target.dataset.lane));
  });
  for (const name of ["num", "trans", "lane"]) {
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
