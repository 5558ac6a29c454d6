// The shared-memory bank model in JavaScript: the twin of tcgemm/smem/{banks,bank_cases,notation}.py,
// so that the explorer works in the built HTML book with no Python kernel.
// tests/test_bank_explorer_js.py runs both on the same settings (fixed sweeps and thousands of random
// cases) and requires identical counts, addresses and refusals, and this copy of GRAMMAR to be
// notation.GRAMMAR.

export const BANKS = 32;
export const WARP = 32;
const BANK_BYTES = 4;
const ELEM_BYTES = [1, 2, 4];
const MAX_ROW_ELEMS = 1024;
const MATRIX_ACCESSES = { "ldmatrix-x4-A": "ldmatrix", "ldmatrix-x2-B": "ldmatrix", "ldmatrix-x4-trans-B": "ldmatrix", "stmatrix-x4": "stmatrix" };
const STORES = ["store-16", "fragment-8"];

// ---- notation: the layout texts -------------------------------------------------------------
// GRAMMAR begin
// tokens   INT   := '_'? DIGITS | '0x' HEXDIGITS    (CuTe prints static integers as _8)
//          NAME  := letter or '_', then letters, digits, '_'
//          PUNCT := '<<' | '>>' | '//' | one of + - * % ^ & | ~ ( ) , : < >
//          spaces (' ', tab, CR, LF) separate tokens; any other character is refused;
//          a text has at most 400 characters, all ASCII
// expr     := or
// or       := xor ('|' xor)*
// xor      := and ('^' and)*
// and      := shift ('&' shift)*
// shift    := sum (('<<' | '>>') sum)*
// sum      := product (('+' | '-') product)*
// product  := unary (('*' | '//' | '%') unary)*
// unary    := ('-' | '~') unary | atom
// atom     := INT | NAME | '(' expr ')'
// NAME in expr: row, col, elem_bytes, row_elems, row_bytes
// cute     := [swizzle 'o' [INT 'o']] shape ':' stride
// swizzle  := ('Swizzle' | 'Sw') '<' sint ',' sint ',' sint '>'
// sint     := ['-'] INT
// shape    := INT | '(' shape (',' shape)* ')'    the outer one is (rows, cols)
// stride   := sint | '(' stride (',' stride)* ')' nested as the shape is
// semantics: integers of any size (Python int, JavaScript BigInt); // and % round toward minus
//   infinity (a % b takes the sign of b), and refuse a zero divisor; shift counts 0..64; & | ^ ~ >>
//   act on two's complement with unbounded sign; every offset, the layout's before its swizzle and
//   the byte offset after, must lie in 0 .. 2^31 - 1.
// GRAMMAR end

const EXPR_NAMES = ["row", "col", "elem_bytes", "row_elems", "row_bytes"];
const MAX_SHIFT = 64n;
const OFFSET_LIMIT = 2n ** 31n;
const MAX_TEXT = 400;
const TOKEN = /(0[xX][0-9a-fA-F]+|_?[0-9]+)|([A-Za-z_][A-Za-z_0-9]*)|(<<|>>|\/\/|[-+*%^&|~(),:<>])/y;
const SPACE = " \t\n\r";
const BINARY = [["|"], ["^"], ["&"], ["<<", ">>"], ["+", "-"], ["*", "//", "%"]];

const shown = (token) => (token.kind === "end" ? "the end" : `'${token.text}'`);

export function tokenize(text) {
  if (typeof text !== "string") throw new Error("the layout text must be a string");
  for (let at = 0; at < text.length; at++) {
    if (text.charCodeAt(at) > 127) {
      throw new Error(`unexpected character '${String.fromCodePoint(text.codePointAt(at))}' at position ${at}`);
    }
  }
  if (text.length > MAX_TEXT) throw new Error(`the text is ${text.length} characters long; at most ${MAX_TEXT}`);
  const tokens = [];
  let at = 0;
  for (;;) {
    while (at < text.length && SPACE.includes(text[at])) at++;
    if (at === text.length) break;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`unexpected character '${text[at]}' at position ${at}`);
    tokens.push({ kind: m[1] ? "int" : m[2] ? "name" : "punct", text: m[0], at });
    at = TOKEN.lastIndex;
  }
  tokens.push({ kind: "end", text: "", at: text.length });
  return tokens;
}

const intValue = (token) => BigInt(token.text.replace(/^_/, ""));

class Parser {
  constructor(text) {
    this.tokens = tokenize(text);
    this.i = 0;
  }

  get peek() { return this.tokens[this.i]; }

  take() { return this.tokens[this.i++]; }

  accept(text) {
    if ((this.peek.kind === "punct" || this.peek.kind === "name") && this.peek.text === text) {
      this.i++;
      return true;
    }
    return false;
  }

  expect(text) {
    if (!this.accept(text)) throw new Error(`expected '${text}' at position ${this.peek.at}, found ${shown(this.peek)}`);
  }

  finish() {
    if (this.peek.kind !== "end") throw new Error(`unexpected ${shown(this.peek)} at position ${this.peek.at}`);
  }

  binary(level) {
    if (level === BINARY.length) return this.unary();
    let node = this.binary(level + 1);
    while (this.peek.kind === "punct" && BINARY[level].includes(this.peek.text)) {
      const op = this.take().text;
      node = ["bin", op, node, this.binary(level + 1)];
    }
    return node;
  }

  unary() {
    if (this.accept("-")) return ["neg", this.unary()];
    if (this.accept("~")) return ["not", this.unary()];
    const token = this.take();
    if (token.kind === "int") return ["int", intValue(token)];
    if (token.kind === "name") {
      if (!EXPR_NAMES.includes(token.text)) {
        throw new Error(`unknown name '${token.text}' at position ${token.at}; use ${EXPR_NAMES.join(", ")}`);
      }
      return ["name", token.text];
    }
    if (token.text === "(") {
      const node = this.binary(0);
      this.expect(")");
      return node;
    }
    throw new Error(`unexpected ${shown(token)} at position ${token.at}`);
  }

  integer(signed) {
    const negative = signed && this.accept("-");
    const token = this.take();
    if (token.kind !== "int") throw new Error(`expected an integer at position ${token.at}, found ${shown(token)}`);
    return negative ? -intValue(token) : intValue(token);
  }

  tree(signed) {
    if (this.accept("(")) {
      const modes = [this.tree(signed)];
      while (this.accept(",")) modes.push(this.tree(signed));
      this.expect(")");
      return modes;
    }
    return this.integer(signed);
  }
}

export function parseExpr(text) {
  if (typeof text !== "string" || !text.trim()) {
    throw new Error("the custom layout needs an expression, e.g. row * row_bytes + col * elem_bytes");
  }
  const parser = new Parser(text);
  const node = parser.binary(0);
  parser.finish();
  return node;
}

function floorDivide(a, b, op) {
  if (b === 0n) throw new Error(op === "//" ? "division by zero" : "modulo by zero");
  const q = a / b;
  const r = a % b;
  const off = r !== 0n && (r < 0n) !== (b < 0n);
  if (op === "//") return off ? q - 1n : q;
  return off ? r + b : r;
}

function shift(a, b, op) {
  if (b < 0n || b > MAX_SHIFT) throw new Error(`shift count ${b} is out of range 0..${MAX_SHIFT}`);
  return op === "<<" ? a << b : a >> b;
}

const OPS = {
  "|": (a, b) => a | b, "^": (a, b) => a ^ b, "&": (a, b) => a & b, "<<": shift, ">>": shift,
  "+": (a, b) => a + b, "-": (a, b) => a - b, "*": (a, b) => a * b, "//": floorDivide, "%": floorDivide,
};

// The value of a parseExpr tree for BigInt names, left operand first (as notation.evaluate).
export function evaluate(node, names) {
  switch (node[0]) {
    case "int": return node[1];
    case "name": return names[node[1]];
    case "neg": return -evaluate(node[1], names);
    case "not": return ~evaluate(node[1], names);
    default: {
      const [, op, left, right] = node;
      const a = evaluate(left, names);
      return OPS[op](a, evaluate(right, names), op);
    }
  }
}

function checkOffset(value, row, col) {
  if (value < 0n || value >= OFFSET_LIMIT) throw new Error(`offset ${value} of element (${row}, ${col}) is outside 0..2^31-1`);
  return Number(value);
}

const cuteText = (tree) => (Array.isArray(tree) ? `(${tree.map(cuteText).join(",")})` : String(tree));
const cuteSize = (shape) => (Array.isArray(shape) ? shape.reduce((total, mode) => total * cuteSize(mode), 1n) : shape);

function modeOffset(shape, stride, index) {
  if (!Array.isArray(shape)) return index * stride;
  let total = 0n;
  shape.forEach((sub, i) => {
    total += modeOffset(sub, stride[i], index % cuteSize(sub));
    index /= cuteSize(sub);
  });
  return total;
}

function sameNesting(shape, stride) {
  if (!Array.isArray(shape) || !Array.isArray(stride)) return !Array.isArray(shape) && !Array.isArray(stride);
  return shape.length === stride.length && shape.every((mode, i) => sameNesting(mode, stride[i]));
}

const positive = (shape) => (Array.isArray(shape) ? shape.every(positive) : shape >= 1n);

export function formatCute(cute) {
  let prefix = "";
  if (cute.swizzle) prefix = `Swizzle<${cute.swizzle.join(",")}> o ${cute.offset ? `${cute.offset} o ` : ""}`;
  return `${prefix}${cuteText(cute.shape)}:${cuteText(cute.stride)}`;
}

export function parseCute(text) {
  if (typeof text !== "string" || !text.trim()) {
    throw new Error("the CuTe layout needs a shape and a stride, e.g. (8,64):(64,1)");
  }
  const parser = new Parser(text);
  let swizzle = null;
  let offset = 0n;
  if (parser.peek.kind === "name") {
    if (!["Swizzle", "Sw"].includes(parser.peek.text)) {
      throw new Error(`unexpected '${parser.peek.text}' at position ${parser.peek.at}; `
        + "a CuTe layout starts with Swizzle<B,M,S> o or with its shape");
    }
    parser.take();
    parser.expect("<");
    swizzle = [parser.integer(true)];
    parser.expect(",");
    swizzle.push(parser.integer(true));
    parser.expect(",");
    swizzle.push(parser.integer(true));
    parser.expect(">");
    parser.expect("o");
    if (parser.peek.kind === "int") {
      offset = parser.integer(false);
      parser.expect("o");
    }
  }
  const at = parser.peek.at;
  const shape = parser.tree(false);
  parser.expect(":");
  const stride = parser.tree(true);
  parser.finish();
  if (!Array.isArray(shape) || shape.length !== 2) {
    throw new Error(`the shape at position ${at} must have two modes, (rows, cols); got ${cuteText(shape)}`);
  }
  if (!positive(shape)) throw new Error(`every extent of the shape must be at least 1; got ${cuteText(shape)}`);
  if (!sameNesting(shape, stride)) {
    throw new Error(`the stride ${cuteText(stride)} is not nested as the shape ${cuteText(shape)} is`);
  }
  return { shape, stride, swizzle, offset, rows: cuteSize(shape[0]), cols: cuteSize(shape[1]) };
}

// The layout's value at (row, col) before its swizzle, a BigInt in the layout's own unit.
function cuteElementOffset(cute, row, col) {
  const [r, c] = [BigInt(row), BigInt(col)];
  if (r < 0n || r >= cute.rows || c < 0n || c >= cute.cols) {
    throw new Error(`element (${row}, ${col}) is outside the layout's shape ${cuteText(cute.shape)}`);
  }
  return cute.offset + modeOffset(cute.shape[0], cute.stride[0], r) + modeOffset(cute.shape[1], cute.stride[1], c);
}

// ---- layouts ------------------------------------------------------------------------------------

function isInt(value) {
  return Number.isInteger(value);
}

function checkNonNegative(values) {
  for (const [key, value] of Object.entries(values)) {
    if (!isInt(value) || value < 0) throw new Error(`${key} must be a non-negative integer, got ${value}`);
  }
}

// A layout maps (row, col) in elements to a byte offset; it refuses columns outside the row and
// offsets outside 0..2^31-1.
function layout(name, offset, elemBytes, rowElems) {
  return {
    name,
    elemBytes,
    rowElems,
    at(row, col) {
      if (row < 0 || col < 0) throw new Error(`${name}: rows and columns must be non-negative`);
      if (col >= rowElems) throw new Error(`${name}: columns must be below row_elems=${rowElems}`);
      return checkOffset(BigInt(offset(row, col)), row, col);
    },
  };
}

function swizzle(B, M, S) {
  if (![B, M, S].every((v) => typeof v === "bigint" || isInt(v))) throw new Error("Swizzle B, M and S must be integers");
  const [b, m, s] = [B, M, S].map(BigInt);
  const size = s < 0n ? -s : s;
  if (b < 0n || m < 0n) throw new Error(`Swizzle bits and base must be non-negative, got B=${b}, M=${m}`);
  if (size < b) throw new Error(`Swizzle needs |S| >= B so the bit ranges don't overlap, got B=${b}, S=${s}`);
  if (b + m + size > 31n) throw new Error(`Swizzle<${b},${m},${s}> reaches past bit 30: B + M + |S| must be at most 31`);
  const shift = Number(s);
  const yyy = ((1 << Number(b)) - 1) << (Number(m) + Math.max(0, shift));
  return (offset) => {
    const moved = offset & yyy;
    return offset ^ (shift >= 0 ? moved >> shift : moved << -shift);
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
  const tree = parseExpr(expr);
  const names = { elem_bytes: BigInt(elemBytes), row_elems: BigInt(rowElems), row_bytes: BigInt(rowElems * elemBytes) };
  const offset = (row, col) => checkOffset(evaluate(tree, { ...names, row: BigInt(row), col: BigInt(col) }), row, col);
  return layout(`custom: ${expr}`, offset, elemBytes, rowElems);
}

function cuteLayout(text, elemBytes, unit) {
  const cute = parseCute(text);
  if (cute.cols < 1n || cute.cols > BigInt(MAX_ROW_ELEMS)) {
    throw new Error(`the layout's column mode must hold 1..${MAX_ROW_ELEMS} elements, got ${cute.cols}`);
  }
  const sw = cute.swizzle ? swizzle(...cute.swizzle) : (offset) => offset;
  const [before, after] = unit === "element" ? [1n, BigInt(elemBytes)] : [BigInt(elemBytes), 1n];
  const offset = (row, col) => {
    const value = checkOffset(cuteElementOffset(cute, row, col) * before, row, col);
    return checkOffset(BigInt(sw(value)) * after, row, col);
  };
  return layout(`CuTe ${formatCute(cute)} on ${unit}s`, offset, elemBytes, Number(cute.cols));
}

function checkUnit(unit) {
  if (unit !== "element" && unit !== "byte") throw new Error(`unit must be 'element' or 'byte', got '${unit}'`);
}

export function buildLayout(s) {
  const eb = s.elem_bytes;
  const re = s.row_elems;
  if (!ELEM_BYTES.includes(eb)) throw new Error(`element width must be one of (${ELEM_BYTES.join(", ")}) bytes, got ${eb}`);
  if (s.layout === "cute") {
    checkUnit(s.unit);
    return cuteLayout(s.cute, eb, s.unit);
  }
  if (!isInt(re) || re < 1 || re > MAX_ROW_ELEMS) throw new Error(`row length must be 1..${MAX_ROW_ELEMS} elements, got ${re}`);
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
      checkUnit(s.unit);
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

// ---- accesses -----------------------------------------------------------------------------------

// Rows, columns and width (bytes) of the lanes of an access preset.
function laneCoordinates(access, eb, re) {
  const lanes = [...Array(WARP).keys()];
  const chunk = 16 / eb;
  const width = Number(access.split("-").pop());
  switch (access) {
    case "ldmatrix-x4-A": case "ldmatrix-x4-trans-B": case "stmatrix-x4":
      // lanes 0-15: rows 0-15 at chunk 0; lanes 16-31: at chunk 1
      return { rows: lanes.map((l) => l % 16), cols: lanes.map((l) => Math.floor(l / 16) * chunk), width: 16 };
    case "ldmatrix-x2-B": { // lanes 0-7: rows 0-7 at chunk 0; lanes 8-15: at chunk 1
      const used = lanes.slice(0, 16);
      return { rows: used.map((l) => l % 8), cols: used.map((l) => Math.floor(l / 8) * chunk), width: 16 };
    }
    case "store-16": // thread t copies chunk t % 4 of tile row t / 4
      return { rows: lanes.map((l) => Math.floor(l / 4)), cols: lanes.map((l) => (l % 4) * chunk), width: 16 };
  }
  if (access.startsWith("fragment-")) { // mma fragments: lane t holds pair t % 4 of row t / 4
    const step = Math.max(1, Math.floor(width / eb));
    return { rows: lanes.map((l) => Math.floor(l / 4)), cols: lanes.map((l) => (l % 4) * step), width };
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
  const re = lay.rowElems;
  const { rows, cols, width } = laneCoordinates(s.access, s.elem_bytes, re);
  const end = Math.max(...cols) + Math.max(1, Math.floor(width / s.elem_bytes));
  if (end > re) throw new Error(`${s.access} reaches column ${end - 1}, past the end of a row of ${re} elements`);
  const addresses = new Array(WARP).fill(-1);
  rows.forEach((r, lane) => { addresses[lane] = lay.at(r, cols[lane]); });
  const matrix = MATRIX_ACCESSES[s.access];
  const access = {
    addresses, rows, cols, width, layout: lay, layoutName: lay.name,
    kind: matrix || (STORES.includes(s.access) ? "st" : "ld"),
    num: matrix ? rows.length / 8 : null,
  };
  return checkAccess(access);
}

function usedLanes(access) {
  return access.num ? 8 * access.num : WARP;
}

function checkAccess(access) {
  for (let lane = 0; lane < usedLanes(access); lane++) {
    const a = access.addresses[lane];
    if (a !== -1 && a % access.width !== 0) {
      throw new Error(`lane ${lane}: address ${a} is not aligned to width ${access.width}`);
    }
  }
  return access;
}

// ---- the analysis (tcgemm.smem.banks) -----------------------------------------------------------

function phaseSize(access) {
  if (access.num) return 8;
  return { 8: 16, 16: 8 }[access.width] || WARP;
}

export function phases(access) {
  const size = phaseSize(access);
  const count = access.num || WARP / size;
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

export const bankOf = (address) => Math.floor(address / BANK_BYTES) % BANKS;

// The rows of the tile the explorer draws: those the access reaches, rounded up to a multiple of 8.
export function tileRows(s) {
  const lay = buildLayout(s);
  const { rows } = laneCoordinates(s.access, s.elem_bytes, lay.rowElems);
  return Math.ceil((Math.max(...rows) + 1) / 8) * 8;
}

// The case's layout as the settings of a "cute" layout, or null (bank_cases.cute_equivalent).
export function cuteEquivalent(s) {
  const eb = s.elem_bytes;
  if (s.layout === "cute") return { cute: formatCute(parseCute(s.cute)), unit: s.unit };
  const [rows, cols] = [tileRows(s), s.row_elems];
  if (s.layout === "padded") {
    if (s.pad_bytes % eb) return null;
    return { cute: `(${rows},${cols}):(${cols + s.pad_bytes / eb},1)`, unit: "element" };
  }
  const plain = `(${rows},${cols}):(${cols},1)`;
  if (s.layout === "row-major") return { cute: plain, unit: "element" };
  let [B, M, S, unit] = [null, null, null, null];
  if (s.layout === "xor") [B, M, S, unit] = [Math.log2(cols * eb / 16), 4, 3, "byte"];
  else if (s.layout === "swizzle") [B, M, S, unit] = [s.B, s.M, s.S, s.unit];
  else return null;
  const shift = Math.log2(eb);
  if (unit === "byte" && M >= shift) [M, unit] = [M - shift, "element"];
  return { cute: `Swizzle<${B},${M},${S}> o ${plain}`, unit };
}

// ---- words: what the explorer says (bank_cases.describe, summary, phase_label, phase_row_label) ----

const ELEMENT_NAMES = { 1: "int8", 2: "fp16", 4: "fp32" };
const MATRIX_WORDS = {
  "ldmatrix-x4-A": ["ldmatrix.x4", "A tile"], "ldmatrix-x2-B": ["ldmatrix.x2", "B tile"],
  "ldmatrix-x4-trans-B": ["ldmatrix.x4.trans", "B tile stored [k][n]"], "stmatrix-x4": ["stmatrix.x4", "C tile"],
};

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const article = (n) => (String(n).startsWith("8") || n === 11 || n === 18 ? "an" : "a");

// Phases are numbered from 0, as lanes, banks and ldmatrix's matrices are (banks.phase_name).
export const phaseName = (p) => `phase ${p}`;

// The preset whose settings these are (the ones the layout reads), or "".
export function presetOf(catalog, settings) {
  const relevant = ["access", "layout", "elem_bytes", ...catalog.layout_settings[settings.layout] || []];
  const match = Object.entries(catalog.presets)
    .find(([, p]) => relevant.every((name) => String(p.settings[name]) === String(settings[name])));
  return match ? match[0] : "";
}

// The access in words: instruction or width, loads or stores, the element type and the tile its lanes cover.
function accessText(s) {
  const { access } = s;
  const eb = s.elem_bytes;
  const { rows, cols, width } = laneCoordinates(access, eb, buildLayout(s).rowElems);
  const span = Math.max(1, Math.floor(width / eb));
  const [R, C, elem] = [Math.max(...rows) + 1, Math.max(...cols) + span, ELEMENT_NAMES[eb]];
  const tile = `${article(R)} ${R}x${C} ${elem}`;
  const verb = STORES.includes(access) ? "stores" : "loads";
  if (MATRIX_WORDS[access]) return `${MATRIX_WORDS[access][0]} of ${tile} ${MATRIX_WORDS[access][1]}`;
  if (access === "store-16") return `16-byte stores of ${tile} tile, lane t to row t/4, chunk t%4`;
  if (access.startsWith("fragment-")) {
    const column = span > 1 ? `${span}*(t%4)` : "t%4";
    return `${width}-byte mma fragment ${verb} of ${tile} tile, lane t at row t/4, column ${column}`;
  }
  if (access.startsWith("strided-")) return `${width}-byte ${verb} at the start of ${R} ${elem} rows, lane i in row i`;
  return `${width}-byte ${verb} of ${32 * span} consecutive ${elem} elements, lanes side by side`;
}

// The case in words, from its settings: the access, the layout and, for a preset's settings, the kernel
// the access comes from (catalog.kernels holds the titles).
export function describe(catalog, settings) {
  const preset = catalog.presets[presetOf(catalog, settings)];
  const source = preset && preset.source;
  const origin = source ? `${catalog.kernels[source].split(":")[0]}'s ` : "";
  return `${origin}${accessText(settings)}; layout ${buildLayout(settings).name}`;
}

export function summaryText(catalog, settings, report) {
  return `${describe(catalog, settings)}: ${plural(report.phases.length, "phase")}, ` +
    `${plural(report.wavefronts, "wavefront")} (ideal ${report.ideal}), ` +
    `${plural(report.conflicts, "bank conflict")}, worst bank ${report.ways}-way`;
}

// Phase p beside the explorer's ◀ ▶.
export function phaseText(access, report, p) {
  const phase = report.phases[p];
  const n = report.phases.length;
  const which = n === 1 ? "the only phase" : `of phases 0-${n - 1}`;
  const lanes = phase.lanes.length ? `lanes ${phase.lanes[0]}-${phase.lanes[phase.lanes.length - 1]}` : "no lane";
  const matrix = access.num ? `matrix ${p}, ` : "";
  return `${phaseName(p)} (${which}): ${matrix}${lanes}, ${plural(phase.wavefronts, "wavefront")}`;
}

// The row header of phase p in the table of phases x banks (under "phase \ bank").
export const phaseRowLabel = (p, wavefronts) => `${p} (${wavefronts}x)`;
