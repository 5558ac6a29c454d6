// The shared-memory bank model in JavaScript: the twin of tcgemm/banks.py + tcgemm/bank_cases.py,
// so that the explorer works in the built HTML book with no Python kernel.
// tests/test_bank_explorer_js.py runs both on the same settings and requires identical counts.

export const BANKS = 32;
export const WARP = 32;
const BANK_BYTES = 4;
const ELEM_BYTES = [1, 2, 4];
const EXPR_NAMES = ["row", "col", "elem_bytes", "row_elems", "row_bytes"];

function isInt(value) {
  return Number.isInteger(value);
}

function checkNonNegative(values) {
  for (const [key, value] of Object.entries(values)) {
    if (!isInt(value) || value < 0) throw new Error(`${key} must be a non-negative integer, got ${value}`);
  }
}

export function checkExpr(expr) {
  if (typeof expr !== "string" || !expr.trim()) {
    throw new Error("the custom layout needs an expression, e.g. row * row_bytes + col * elem_bytes");
  }
  const bare = expr.replaceAll("<<", "").replaceAll(">>", "");
  if (!/^[\sA-Za-z_0-9+\-*%^&|<>()]*$/.test(expr) || expr.includes("**") || /[<>]/.test(bare)) {
    throw new Error("the expression may use only names, integers, + - * % ^ & | << >> and parentheses");
  }
  for (const name of expr.match(/[A-Za-z_][A-Za-z_0-9]*/g) || []) {
    if (!EXPR_NAMES.includes(name)) {
      throw new Error(`unknown name '${name}' in the expression; use ${EXPR_NAMES.join(", ")}`);
    }
  }
  return expr;
}

// A layout maps (row, col) in elements to a byte offset; it refuses columns outside the row.
function layout(name, offset, elemBytes, rowElems) {
  return {
    name,
    elemBytes,
    rowElems,
    at(row, col) {
      if (row < 0 || col < 0) throw new Error(`${name}: rows and columns must be non-negative`);
      if (col >= rowElems) throw new Error(`${name}: columns must be below row_elems=${rowElems}`);
      return offset(row, col);
    },
  };
}

function swizzle(B, M, S) {
  if (!isInt(B) || !isInt(M) || !isInt(S)) throw new Error("Swizzle B, M and S must be integers");
  if (B < 0 || M < 0) throw new Error(`Swizzle bits and base must be non-negative, got B=${B}, M=${M}`);
  if (Math.abs(S) < B) throw new Error(`Swizzle needs |S| >= B so the bit ranges don't overlap, got B=${B}, S=${S}`);
  const yyy = ((1 << B) - 1) << (M + Math.max(0, S));
  return (offset) => {
    const moved = offset & yyy;
    return offset ^ (S >= 0 ? moved >> S : moved << -S);
  };
}

function xorPermuted(tileChunks, elemBytes) {
  const rowChunks = 8;
  const chunkBytes = 16;
  const chunkElems = chunkBytes / elemBytes;
  const rowsPerSmemRow = rowChunks / tileChunks;
  const offset = (r, c) => {
    const smemRow = Math.floor(r / rowsPerSmemRow);
    const logical = (r % rowsPerSmemRow) * tileChunks + Math.floor(c / chunkElems);
    const stored = logical ^ (smemRow % tileChunks);
    return (smemRow * rowChunks + stored) * chunkBytes + (c % chunkElems) * elemBytes;
  };
  return layout(`XOR-permuted (${tileChunks} chunks per row, chunk ^ row % ${tileChunks})`,
                offset, elemBytes, tileChunks * chunkElems);
}

function customLayout(expr, elemBytes, rowElems) {
  checkExpr(expr);
  let fn;
  try {
    fn = new Function(...EXPR_NAMES, `"use strict"; return (${expr});`);
  } catch (error) {
    throw new Error(`the expression does not parse: ${error.message}`);
  }
  const rowBytes = rowElems * elemBytes;
  return layout(`custom: ${expr}`, (row, col) => fn(row, col, elemBytes, rowElems, rowBytes), elemBytes, rowElems);
}

export function buildLayout(s) {
  const eb = s.elem_bytes;
  const re = s.row_elems;
  if (!ELEM_BYTES.includes(eb)) throw new Error(`element width must be one of ${ELEM_BYTES.join(", ")} bytes, got ${eb}`);
  if (!isInt(re) || re < 1) throw new Error(`row length must be a positive number of elements, got ${re}`);
  switch (s.layout) {
    case "row-major":
      return layout(`row-major (${re * eb} B rows)`, (r, c) => r * re * eb + c * eb, eb, re);
    case "padded": {
      checkNonNegative({ pad_bytes: s.pad_bytes });
      const stride = re * eb + s.pad_bytes;
      return layout(`padded (${re * eb} B rows + ${s.pad_bytes} B)`, (r, c) => r * stride + c * eb, eb, re);
    }
    case "xor": {
      const rowBytes = re * eb;
      const chunks = rowBytes / 16;
      if (rowBytes % 16 || ![1, 2, 4, 8].includes(chunks)) {
        throw new Error(`the XOR layout needs rows of 16, 32, 64 or 128 bytes, got ${rowBytes}`);
      }
      return xorPermuted(chunks, eb);
    }
    case "swizzle": {
      if (s.unit !== "element" && s.unit !== "byte") throw new Error(`unit must be 'element' or 'byte', got ${s.unit}`);
      const sw = swizzle(s.B, s.M, s.S);
      const name = `Swizzle<${s.B},${s.M},${s.S}> on ${s.unit}s (${re * eb} B rows)`;
      return s.unit === "element"
        ? layout(name, (r, c) => sw(r * re + c) * eb, eb, re)
        : layout(name, (r, c) => sw((r * re + c) * eb), eb, re);
    }
    case "custom":
      return customLayout(s.expr, eb, re);
    default:
      throw new Error(`unknown layout '${s.layout}'`);
  }
}

// Rows, columns and width (bytes) of the lanes of an access preset.
function laneCoordinates(access, eb, re) {
  const lanes = [...Array(WARP).keys()];
  const chunk = 16 / eb;
  const width = Number(access.split("-").pop());
  switch (access) {
    case "ldmatrix-x4-A": // lanes 0-15: rows 0-15 at chunk 0; lanes 16-31: at chunk 1
      return { rows: lanes.map((l) => l % 16), cols: lanes.map((l) => Math.floor(l / 16) * chunk), width: 16 };
    case "ldmatrix-x2-B": { // lanes 0-7: rows 0-7 at chunk 0; lanes 8-15: at chunk 1
      const used = lanes.slice(0, 16);
      return { rows: used.map((l) => l % 8), cols: used.map((l) => Math.floor(l / 8) * chunk), width: 16 };
    }
    case "store-16": // thread t copies chunk t % 4 of tile row t / 4
      return { rows: lanes.map((l) => Math.floor(l / 4)), cols: lanes.map((l) => (l % 4) * chunk), width: 16 };
  }
  if (access.startsWith("strided-")) return { rows: lanes, cols: lanes.map(() => 0), width };
  if (access.startsWith("contiguous-")) {
    const first = lanes.map((l) => l * Math.max(1, Math.floor(width / eb)));
    return { rows: first.map((f) => Math.floor(f / re)), cols: first.map((f) => f % re), width };
  }
  throw new Error(`unknown access '${access}'`);
}

export function buildAccess(s) {
  const lay = buildLayout(s);
  const { rows, cols, width } = laneCoordinates(s.access, s.elem_bytes, s.row_elems);
  const end = Math.max(...cols) + Math.max(1, Math.floor(width / s.elem_bytes));
  if (end > s.row_elems) {
    throw new Error(`${s.access} reaches column ${end - 1}, past the end of a row of ${s.row_elems} elements`);
  }
  const addresses = new Array(WARP).fill(-1);
  rows.forEach((r, lane) => { addresses[lane] = lay.at(r, cols[lane]); });
  const ldmatrix = s.access.startsWith("ldmatrix");
  const access = {
    addresses, rows, cols, width, layoutName: lay.name,
    kind: ldmatrix ? "ldmatrix" : s.access === "store-16" ? "st" : "ld",
    num: ldmatrix ? rows.length / 8 : null,
  };
  return checkAccess(access);
}

function usedLanes(access) {
  return access.kind === "ldmatrix" ? 8 * access.num : WARP;
}

function checkAccess(access) {
  for (let lane = 0; lane < usedLanes(access); lane++) {
    const a = access.addresses[lane];
    if (!isInt(a)) throw new Error(`lane ${lane}: the layout gave ${a}, not an integer byte address`);
    if (a < -1) throw new Error("addresses must be non-negative, or -1 for an inactive lane");
    if (a !== -1 && a % access.width !== 0) {
      throw new Error(`lane ${lane}: address ${a} is not aligned to width ${access.width}`);
    }
  }
  return access;
}

function phaseSize(access) {
  if (access.kind === "ldmatrix") return 8;
  return { 8: 16, 16: 8 }[access.width] || WARP;
}

export function phases(access) {
  const size = phaseSize(access);
  const count = access.kind === "ldmatrix" ? access.num : WARP / size;
  const result = [];
  for (let j = 0; j < count; j++) {
    const lanes = [];
    for (let lane = j * size; lane < (j + 1) * size; lane++) {
      if (lane < usedLanes(access) && access.addresses[lane] !== -1) lanes.push(lane);
    }
    result.push(lanes);
  }
  return result;
}

function analyzePhase(access, lanes) {
  const wordsInBank = Array.from({ length: BANKS }, () => new Set());
  const banksPerLane = lanes.map((lane) => {
    const first = Math.floor(access.addresses[lane] / BANK_BYTES);
    const words = Array.from({ length: Math.max(1, access.width / BANK_BYTES) }, (_, i) => first + i);
    words.forEach((w) => wordsInBank[w % BANKS].add(w));
    return words.map((w) => w % BANKS);
  });
  const wordsPerBank = wordsInBank.map((set) => set.size);
  return { lanes, banksPerLane, wordsPerBank, wavefronts: Math.max(...wordsPerBank) };
}

export function analyzeAccess(access) {
  const reports = phases(access).map((lanes) => analyzePhase(access, lanes));
  const wavefronts = reports.reduce((sum, r) => sum + r.wavefronts, 0);
  const ideal = reports.filter((r) => r.lanes.length > 0).length;
  const ways = reports.reduce((most, r) => Math.max(most, r.wavefronts), 0);
  return { phases: reports, wavefronts, ideal, conflicts: wavefronts - ideal, ways };
}

export function analyze(settings) {
  const access = buildAccess(settings);
  return { access, report: analyzeAccess(access) };
}
