// The bank-conflict explorer's view. Appended to banks.js into one ES module (anywidget's _esm):
// every number it shows is computed here, in the page, so it also works in the static HTML book.

const SETTINGS = ["access", "layout", "elem_bytes", "row_elems", "pad_bytes", "B", "M", "S", "unit", "expr"];
const NUMBERS = new Set(["elem_bytes", "row_elems", "pad_bytes", "B", "M", "S"]);
// Settings whose model trait has another name (DOMWidget.layout belongs to ipywidgets).
const TRAIT = { layout: "smem_layout" };
const trait = (name) => TRAIT[name] || name;
const SHOWN_WITH = { pad_bytes: ["padded"], B: ["swizzle"], M: ["swizzle"], S: ["swizzle"], unit: ["swizzle"], expr: ["custom"] };

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
  return element("div", { class: "tcgemm-controls" }, [
    control("access", select("access", Object.entries(catalog.accesses), get("access")), "access"),
    control("layout", select("layout", Object.entries(catalog.layouts), get("layout")), "layout"),
    control("element", select("elem_bytes", [[1, "1 B (int8)"], [2, "2 B (fp16)"], [4, "4 B (fp32)"]], get("elem_bytes")), "elem_bytes"),
    control("row length (elements)", number("row_elems", 1, 512), "row_elems"),
    control("padding (bytes)", number("pad_bytes", 0, 256), "pad_bytes"),
    control("B", number("B", 0, 5), "B"),
    control("M", number("M", 0, 7), "M"),
    control("S", number("S", -7, 7), "S"),
    control("on", select("unit", [["element", "element offsets (CuTe)"], ["byte", "byte offsets"]], get("unit")), "unit"),
    control("byte offset =", element("input", { name: "expr", type: "text", size: 56, value: get("expr") }), "expr"),
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

function summaryText(catalog, settings, report) {
  const phases = report.phases.length;
  return `${catalog.accesses[settings.access]}: ${phases} phase${phases > 1 ? "s" : ""}, ` +
    `${report.wavefronts} wavefront${report.wavefronts > 1 ? "s" : ""} (ideal ${report.ideal}), ` +
    `${report.conflicts} bank conflict${report.conflicts === 1 ? "" : "s"}, worst bank ${report.ways}-way`;
}

function bankGrid(access, report) {
  const table = element("table", { class: "tcgemm-banks" });
  const header = element("tr", {}, [element("th", { text: "phase \\ bank" })]);
  for (let bank = 0; bank < BANKS; bank++) header.append(element("th", { text: String(bank) }));
  table.append(header);
  report.phases.forEach((phase, p) => {
    const lanesOfBank = Array.from({ length: BANKS }, () => []);
    phase.lanes.forEach((lane, i) => {
      for (const bank of new Set(phase.banksPerLane[i])) lanesOfBank[bank].push(lane);
    });
    const row = element("tr", {}, [element("th", { text: `${p} (${phase.wavefronts}x)` })]);
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

function render({ model, el }) {
  const catalog = model.get("catalog");
  const root = element("div", { class: "tcgemm-widget tcgemm-bank-explorer" });
  const form = controls(model, catalog);
  const summary = element("div", { class: "tcgemm-summary" });
  const layoutName = element("div", { class: "tcgemm-layout-name" });
  const grid = element("div", { class: "tcgemm-grid" });
  const details = element("details", {}, [element("summary", { text: "every lane's address and banks" })]);
  const lanes = element("div");
  details.append(lanes);
  root.append(form, summary, layoutName, grid, details);
  el.append(root);

  function update() {
    const settings = readSettings(root);
    for (const [name, layouts] of Object.entries(SHOWN_WITH)) {
      form.querySelector(`[data-setting="${name}"]`).hidden = !layouts.includes(settings.layout);
    }
    grid.replaceChildren();
    lanes.replaceChildren();
    try {
      const { access, report } = analyze(settings);
      summary.textContent = summaryText(catalog, settings, report);
      summary.className = `tcgemm-summary ${report.conflicts ? "conflict" : "ok"}`;
      layoutName.textContent = `layout: ${access.layoutName}`;
      Object.assign(summary.dataset, {
        conflicts: report.conflicts, wavefronts: report.wavefronts, ideal: report.ideal, maxWay: report.ways, error: "",
      });
      grid.append(bankGrid(access, report));
      lanes.append(laneTable(access, report));
    } catch (error) {
      summary.textContent = `not a valid case: ${error.message}`;
      summary.className = "tcgemm-summary error";
      layoutName.textContent = "";
      Object.assign(summary.dataset, { conflicts: "", wavefronts: "", ideal: "", maxWay: "", error: error.message });
    }
  }

  form.addEventListener("change", (event) => {
    const name = event.target.name;
    if (!SETTINGS.includes(name)) return;
    const value = readSettings(root)[name];
    try {
      model.set(trait(name), value);
      model.save_changes();
    } catch (error) {
      // In the static HTML book there is no kernel to sync with; the view works on its own.
    }
    update();
  });
  form.addEventListener("input", update);
  for (const name of SETTINGS) {
    model.on(`change:${trait(name)}`, () => {
      const input = root.querySelector(`[name="${name}"]`);
      if (String(input.value) !== String(model.get(trait(name)))) {
        input.value = model.get(trait(name));
        update();
      }
    });
  }
  update();
}

export default { render };
