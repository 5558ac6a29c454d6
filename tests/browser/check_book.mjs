// Open pages of the built book in headless Chromium with no network: the book is served on
// 127.0.0.1 and every request to another host is refused (aborted by the route and reported; the
// browser resolves no host name either). The book must serve everything its pages load itself.
// Each page is opened once at 1280 px, in the theme's light mode and then in its dark mode (the book's
// theme follows the reader's prefers-color-scheme: default_mode auto), and its presentation is
// measured in both (see presentation.mjs).
//
//   node check_book.mjs HTML_ROOT OUT_JSON --column-px N [--explorer PAGE] PAGE...
//
// PAGEs are paths under HTML_ROOT (book/intro.html); N is the text column that figures are drawn
// for (tcgemm.style.DISPLAY_COLUMN_PX). Writes OUT_JSON:
//   { chromium, viewport, columnPx, origin, pages: {PAGE: {pageErrors, consoleErrors, failedRequests,
//       unexpectedRequests (to another host, refused), origins (of every request the page made),
//       widgetViews, widgetsRendered, placeholders (widget placeholders still shown), withoutJavaScript
//       (pages with widgets: {placeholders} with JavaScript off), mathjax, math: {elements, typeset,
//       errors, raw}, weight: {bytes, responses, largest}, finalUrl, lanePicker,
//       listings: [{closed, open, opened}] (each code listing's bar, before and after a click),
//       presentation: {light|dark: {theme, column, overflows, progress, smallFigures,
//                                   contrast, textsChecked, page, figuresChecked, figures,
//                                   panelsChecked, panels}}}},
//     explorer: null | {found, reason?, readings?, asCute?, stepped?, pointed?, hash?, puzzle?, preset?, links?} }
//   (see exploreBanks and solvePuzzle)
// and exits 0 whenever it could write that file: tests/test_browser.py judges it.
// With TCGEMM_SCREENSHOTS=DIR it also saves each page and each widget, in both modes, before and
// after use, as PNGs in DIR.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';
import { measureBackdrops, measureContrast, measureOutputs, openListings } from './presentation.mjs';

const CHROMIUM = process.env.TCGEMM_CHROMIUM || '/usr/bin/chromium';
// Playwright adds --headless and a fresh --user-data-dir; without the rest, Chromium tries to
// reach Google's services (the machine has no network).
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // No host name resolves: a request that got past the route to another host could not leave.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'];
const PAGE_TIMEOUT_MS = 30_000;
const VIEWPORT = { width: 1280, height: 900 };
const MODES = ['light', 'dark'];
// Where anywidget views are drawn (div.widget-subarea, by the book's web/widget-embed.js as by
// html-manager), and what the page says in their place until they are (tcgemm.publish.offline).
const WIDGET_ROOTS = '.widget-subarea';
const WIDGET_PLACEHOLDERS = '.tcgemm-widget-placeholder';
// Whose text must pass WCAG AA: the widgets, the tables of results and the code listings.
const CONTRAST_ROOTS = `${WIDGET_ROOTS}, div.cell_output table:not(${WIDGET_ROOTS} table), details.tcgemm-listing`;
const WIDGET_VIEWS = 'script[type="application/vnd.jupyter.widget-view+json"]';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.gif': 'image/gif', '.ico': 'image/x-icon', '.woff': 'font/woff',
  '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
};
const typeOf = (file) => TYPES[extname(file).toLowerCase()] || 'application/octet-stream';
const isFileUnder = (root, file) => file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile();

// ---- the book, over HTTP on 127.0.0.1 -----------------------------------------------------

function serve(root) {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(root, path));
    if (!isFileUnder(root, file)) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'Content-Type': typeOf(file) }).end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// ---- the browser --------------------------------------------------------------------------

async function main() {
  const args = process.argv.slice(2);
  const option = (name) => {
    const at = args.indexOf(name);
    return at < 0 ? null : args.splice(at, 2)[1] ?? '';
  };
  const explorerPage = option('--explorer');
  const columnPx = Number(option('--column-px'));
  const [rootArg, outFile, ...pages] = args;
  if (!rootArg || !outFile || pages.length === 0 || explorerPage === '' || !(columnPx > 0)) {
    console.error('usage: node check_book.mjs HTML_ROOT OUT_JSON --column-px N [--explorer PAGE] PAGE...');
    process.exit(2);
  }
  const server = await serve(resolve(rootArg));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const result = {
    chromium: null, viewport: VIEWPORT, columnPx, origin, pages: {}, explorer: null,
  };

  // The book from our server; a request to any other host is refused and reported.
  function answer(route, entry) {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    entry.unexpectedRequests.push(url);
    return route.abort('blockedbyclient');
  }

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  result.chromium = browser.version();
  for (const path of pages) {
    const entry = {
      pageErrors: [], consoleErrors: [], failedRequests: [], unexpectedRequests: [], origins: [],
      widgetViews: 0, widgetsRendered: 0, placeholders: [], withoutJavaScript: null, mathjax: false, math: null,
      weight: null, finalUrl: null, lanePicker: null, listings: [], presentation: {},
    };
    result.pages[path] = entry;
    // A fresh context per page (no cookies, no local storage): each page is a first visit, by a
    // reader whose system asks for light colours; then the same reader switches to dark.
    const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: MODES[0] });
    await context.route('**/*', (route) => answer(route, entry));
    const page = await context.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    listen(page, entry);
    const weighed = weigh(page, origin);
    try {
      await page.goto(`${origin}/${path}`, { waitUntil: 'load' });
      Object.assign(entry, await settle(page));
      entry.weight = await weighed();
      entry.placeholders = await page.locator(`${WIDGET_PLACEHOLDERS}:visible`).allTextContents();
      entry.finalUrl = page.url().slice(origin.length + 1);
      const shot = process.env.TCGEMM_SCREENSHOTS && join(process.env.TCGEMM_SCREENSHOTS, path.replaceAll('/', '_'));
      await inEachMode(page, async (mode) => {
        const contrast = await page.evaluate(measureContrast, { roots: CONTRAST_ROOTS, state: 'as recorded' });
        entry.presentation[mode] = {
          theme: await page.evaluate(() => document.documentElement.dataset.theme),
          ...await page.evaluate(measureOutputs, { columnPx }),
          contrast: contrast.failures, textsChecked: contrast.texts,
          ...await page.evaluate(measureBackdrops, { mode, figures: true }),
        };
        if (shot) await screenshots(page, `${shot}.${mode}`);
      });
      // The widgets after a reader has used them (conflicting banks, a chosen lane, FFMAs issued),
      // and the code listings opened.
      if (path === explorerPage) result.explorer = await exploreBanks(page, entry);
      entry.lanePicker = await pickLane(page);
      await stepRegisters(page);
      entry.listings = await page.evaluate(openListings);
      await inEachMode(page, async (mode) => {
        const contrast = await page.evaluate(measureContrast, { roots: CONTRAST_ROOTS, state: 'after use' });
        entry.presentation[mode].contrast.push(...contrast.failures);
        entry.presentation[mode].textsChecked += contrast.texts;
        const backdrops = await page.evaluate(measureBackdrops, { mode, figures: false });
        const key = (f) => `${f.cell}|${f.element}|${f.problems.join()}`;
        const known = new Set(entry.presentation[mode].panels.map(key));
        entry.presentation[mode].panels.push(...backdrops.panels.filter((f) => !known.has(key(f))));
        entry.presentation[mode].panelsChecked += backdrops.panelsChecked;
        if (shot) await screenshots(page, `${shot}.${mode}.used`);
      });
    } catch (error) {
      entry.pageErrors.push(`check_book.mjs: ${error.message}`);
    }
    await context.close();
    if (entry.widgetViews) entry.withoutJavaScript = await withoutJavaScript(browser, `${origin}/${path}`, entry);
  }
  if (explorerPage && !result.explorer) {
    result.explorer = { found: false, reason: `explorer not found: ${explorerPage} was not visited (not in the TOC?)` };
  }
  await browser.close();
  server.close();
  writeFileSync(outFile, JSON.stringify(result, null, 2));
}

// Run `check(mode)` with the page in each of the theme's modes. The theme (default_mode auto) sets
// html[data-theme] from prefers-color-scheme and follows it when it changes.
async function inEachMode(page, check) {
  for (const mode of MODES) {
    await page.emulateMedia({ colorScheme: mode });
    await page.waitForFunction((want) => document.documentElement.dataset.theme === want, mode, { timeout: 5_000 })
      .catch(() => {}); // judged by the caller: presentation[mode].theme
    await nextFrames(page);
    await check(mode);
  }
}

const nextFrames = (page) => page.evaluate(
  () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));

async function screenshots(page, stem) {
  await page.screenshot({ path: `${stem}.png`, fullPage: true });
  const widgets = page.locator(`${WIDGET_ROOTS}:visible`);
  for (let i = 0; i < await widgets.count(); i++) await widgets.nth(i).screenshot({ path: `${stem}.widget${i}.png` });
}

function listen(page, entry) {
  const failed = (url, why) => {
    if (!entry.unexpectedRequests.includes(url) && !entry.failedRequests.some((f) => f.startsWith(`${url}: `))) {
      entry.failedRequests.push(`${url}: ${why}`);
    }
  };
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!['data:', 'blob:', 'about:'].includes(url.protocol) && !entry.origins.includes(url.origin)) {
      entry.origins.push(url.origin);
    }
  });
  page.on('pageerror', (error) => entry.pageErrors.push(String(error.stack || error)));
  page.on('console', (msg) => {
    if (msg.type() === 'error') entry.consoleErrors.push(`${msg.text()} (at ${msg.location().url})`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failed(response.url(), `HTTP ${response.status()}`);
  });
  page.on('requestfailed', (request) => failed(request.url(), request.failure()?.errorText));
}

// What a first visit loads, until the page has settled: the bytes of every response body (as
// served, uncompressed), the number of responses, and the largest responses (URL relative to the
// book when it is the book's own).
function weigh(page, origin) {
  const bodies = [];
  page.on('response', (response) => bodies.push(
    response.body().then((body) => [response.url(), body.length], () => [response.url(), 0])));
  return async () => {
    const sizes = await Promise.all(bodies.slice());
    const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 8)
      .map(([url, bytes]) => ({ url: url.startsWith(`${origin}/`) ? url.slice(origin.length + 1) : url, bytes }));
    return { bytes: sizes.reduce((sum, [, bytes]) => sum + bytes, 0), responses: sizes.length, largest };
  };
}

// Wait for the network, MathJax's first typesetting and every widget view. A page may go on to
// another by itself (index.html redirects to the root chapter): then wait for that one.
async function settle(page) {
  for (let attempt = 0; ; attempt++) {
    try {
      await page.waitForLoadState('networkidle');
      await page.evaluate(() => window.MathJax?.startup?.promise);
      await page.waitForFunction(widgetCounts, [WIDGET_VIEWS, true], { timeout: 15_000 })
        .catch(() => {}); // judged by the caller: widgetsRendered < widgetViews
      await page.waitForLoadState('networkidle');
      return {
        ...await page.evaluate(widgetCounts, [WIDGET_VIEWS, false]),
        mathjax: await page.evaluate(() => Boolean(window.MathJax?.startup?.document)),
        math: await page.evaluate(mathCounts),
      };
    } catch (error) {
      if (attempt < 3 && /context was destroyed|navigat/i.test(error.message)) continue;
      throw error;
    }
  }
}

// Runs in the page. The math Sphinx and myst-nb write (span.math, div.math, with TeX between \( \)
// or \[ \]): how many elements, how many MathJax typeset (an mjx-container inside), how many
// MathJax could not (mjx-merror), and the first few left as TeX.
function mathCounts() {
  const elements = [...document.querySelectorAll('.math')].filter((el) => !el.parentElement.closest('.math'));
  const raw = elements.filter((el) => !el.querySelector('mjx-container'));
  return {
    elements: elements.length, typeset: elements.length - raw.length,
    errors: document.querySelectorAll('mjx-merror').length,
    raw: raw.slice(0, 5).map((el) => el.textContent.trim().slice(0, 80)),
  };
}

// The page opened with JavaScript off, as a reader whose browser runs none: the text shown where
// each widget would be. Its requests count as the page's own.
async function withoutJavaScript(browser, url, entry) {
  const context = await browser.newContext({ viewport: VIEWPORT, javaScriptEnabled: false });
  await context.route('**/*', (route) => {
    if (route.request().url().startsWith(new URL(url).origin + '/')) return route.continue();
    entry.unexpectedRequests.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    return { placeholders: await page.locator(`${WIDGET_PLACEHOLDERS}:visible`).allTextContents() };
  } catch (error) {
    return { placeholders: [], error: error.message.split('\n')[0] };
  } finally {
    await context.close();
  }
}

// Runs in the page. The book's embedder (and html-manager) renders a view into a div.widget-subarea just before its script.
// With onlyWhenDone, false until every view has rendered (for waitForFunction).
function widgetCounts([views, onlyWhenDone]) {
  const tags = [...document.querySelectorAll(views)];
  const rendered = tags.filter((tag) => tag.previousElementSibling?.matches('.widget-subarea')
    && tag.previousElementSibling.childElementCount > 0).length;
  if (onlyWhenDone && rendered < tags.length) return false;
  return { widgetViews: tags.length, widgetsRendered: rendered };
}

// The bank-conflict explorer (book/bank_conflicts.ipynb, tcgemm/widgets), operated as a reader would:
// its summary with the default settings, then after choosing "xor" in its layout menu, its "edit as
// CuTe" button, and "row-major"; a step to the next phase (the tile's outlined elements and their lane labels); an element
// pointed at (what the info line says); the URL it then shows; a puzzle (solvePuzzle); a kernel preset
// (its Nsight Compute table). Then each of EXPLORER_LINKS opened as a link in a fresh page, at 1280 px and at a phone's
// width (what it shows, and whether it fits). test_browser.py compares all of it with tcgemm.smem.
// The explorer on the page is left showing the kernel preset, conflicts and measured counts.
const EXPLORER_POINT_AT = { row: 3, col: 8 };
const EXPLORER_PRESET = 'k1.1-fragment';
const PHONE = { width: 390, height: 844 };
const EXPLORER_LINKS = [
  'access=fragment-8&layout=padded&elem_bytes=4&row_elems=32&pad_bytes=32&phase=1',
  `access=ldmatrix-x4-A&layout=custom&elem_bytes=2&row_elems=32&expr=${encodeURIComponent('(row - 3) % 4 * 16 + col * 2')}&phase=2`,
  `access=ldmatrix-x4-trans-B&layout=cute&elem_bytes=2&cute=${encodeURIComponent('Swizzle<3,4,3> o (16,64):(64,1)')}&unit=byte&phase=3`,
];

async function readExplorer(page, explorer) {
  await nextFrames(page); // let the widget react to the last event before reading
  return explorer.evaluate((root) => {
    const summary = root.querySelector('.tcgemm-summary');
    const value = (name) => (summary.dataset[name] === '' || summary.dataset[name] === undefined
      ? null : Number(summary.dataset[name]));
    const rowOf = (td) => [Number(td.dataset.row), Number(td.dataset.col)];
    return {
      layout: root.querySelector('select[name="layout"]').value,
      access: root.querySelector('select[name="access"]').value,
      preset: summary.dataset.preset,
      conflicts: value('conflicts'), wavefronts: value('wavefronts'), ideal: value('ideal'),
      'max-way': value('maxWay'), phase: value('phase'), error: summary.dataset.error || null,
      phaseLabel: root.querySelector('.tcgemm-phase').textContent,
      cute: root.querySelector('.tcgemm-cute code')?.textContent ?? null,
      cuteUnit: root.querySelector('.tcgemm-cute code')?.dataset.unit ?? null,
      outlined: [...root.querySelectorAll('td.tcgemm-element.in-phase')].map(rowOf),
      labels: [...root.querySelectorAll('td.tcgemm-element.in-phase')].filter((td) => td.textContent)
        .map((td) => [...rowOf(td), td.textContent]),
      words: [...root.querySelectorAll('td.tcgemm-word[data-row]')]
        .map((td) => [Number(td.dataset.address), ...rowOf(td)]),
      measured: [...root.querySelectorAll('.tcgemm-measured-counts tr[data-counter]')]
        .map((tr) => [tr.dataset.counter, Number(tr.querySelector('[data-measured]').dataset.measured)]),
      measuredText: root.querySelector('.tcgemm-measured')?.textContent ?? '',
      puzzle: readPuzzle(),
    };

    // The puzzle shown, its verdict and the settings it judged (null: the explorer has no puzzles).
    function readPuzzle() {
      const menu = root.querySelector('select[name="puzzle"]');
      if (!menu) return null;
      const verdict = root.querySelector('.tcgemm-puzzle-verdict');
      return {
        name: menu.value, solved: verdict.dataset.solved ?? null,
        problems: [...verdict.querySelectorAll('li')].map((li) => li.textContent), text: verdict.textContent,
        settings: verdict.dataset.settings ? JSON.parse(verdict.dataset.settings) : null,
      };
    }
  });
}

// Widths at the reader's viewport: the explorer within the page, its controls within the explorer,
// and the boxes that hold the wide grids scrolling inside themselves.
function explorerFit(root) {
  const right = (el) => el.getBoundingClientRect().right;
  const box = root.getBoundingClientRect();
  return {
    viewport: document.documentElement.clientWidth,
    explorerRight: Math.round(box.right),
    pageScrolls: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
    controlsOutside: [...root.querySelectorAll('.tcgemm-control:not([hidden])')]
      .filter((el) => right(el) > box.right + 1).map((el) => el.dataset.setting),
    boxes: [...root.querySelectorAll('.tcgemm-scroll')].filter((el) => el.getClientRects().length).map((el) => ({
      name: el.className, width: Math.round(el.getBoundingClientRect().width), content: el.scrollWidth,
      overflowX: getComputedStyle(el).overflowX,
    })),
  };
}

async function exploreBanks(page, entry) {
  const { widgetViews } = entry;
  const explorer = page.locator('.tcgemm-bank-explorer');
  try {
    await explorer.first().waitFor({ state: 'visible', timeout: 10_000 });
  } catch {
    const hint = widgetViews ? `the page has ${widgetViews} widget view(s)`
      : 'the page has no widget view: is the notebook recorded with its widget state?';
    return { found: false, reason: `explorer not found: no visible .tcgemm-bank-explorer (${hint})` };
  }
  const count = await explorer.count();
  if (count !== 1) return { found: false, reason: `explorer not found: ${count} .tcgemm-bank-explorer elements, expected 1` };
  const parts = {
    layout: explorer.locator('select[name="layout"]'),
    access: explorer.locator('select[name="access"]'),
    preset: explorer.locator('select[name="preset"]'),
    summary: explorer.locator('.tcgemm-summary'),
    next: explorer.locator('button[name="next"]'),
    tile: explorer.locator('.tcgemm-tile'),
    info: explorer.locator('.tcgemm-element-info'),
  };
  for (const [name, locator] of Object.entries(parts)) {
    const n = await locator.count();
    if (n !== 1) {
      return { found: false, reason: `explorer found, but it has ${n} ${name} elements, expected 1 (recorded before the explorer had them? make record)` };
    }
  }
  const result = { found: true, readings: { default: await readExplorer(page, explorer) } };
  try {
    for (const layout of ['xor', 'row-major']) {
      await parts.layout.selectOption(layout, { timeout: 5_000 });
      result.readings[layout] = await readExplorer(page, explorer);
      if (layout === 'xor') {
        await explorer.locator('button[name="use-cute"]').click({ timeout: 5_000 });
        result.asCute = await readExplorer(page, explorer);
      }
    }
    await parts.next.click({ timeout: 5_000 });
    result.stepped = await readExplorer(page, explorer);
    const { row, col } = EXPLORER_POINT_AT;
    await parts.tile.locator(`td[data-row="${row}"][data-col="${col}"]`).hover({ timeout: 5_000 });
    result.pointed = { text: await parts.info.textContent(), ...await parts.info.evaluate((el) => ({ ...el.dataset })) };
    result.hash = await page.evaluate(() => decodeURIComponent(window.location.hash));
    result.puzzle = await solvePuzzle(page, explorer, entry);
    await parts.preset.selectOption(EXPLORER_PRESET, { timeout: 5_000 });
    result.preset = await readExplorer(page, explorer);
  } catch (error) {
    return { ...result, reason: `could not operate the explorer: ${error.message.split('\n')[0]}` };
  }
  result.links = [];
  const base = page.url().split('#')[0];
  for (const link of EXPLORER_LINKS) {
    result.links.push({ link, ...await openLink(page.context(), `${base}#bank-explorer:${link}`, entry) });
  }
  return result;
}

// A puzzle, as a reader tries it: chosen in the menu (its start), answered with 16 bytes of padding, then
// its solution shown with the panel's button; then a link to a solved puzzle opened in a fresh page. The
// explorer is left on the puzzle, so that the verdict's colours are measured after use too.
const EXPLORER_PUZZLE = 'store-and-load-64';
const EXPLORER_PUZZLE_LINK = `puzzle=${EXPLORER_PUZZLE}&access=store-16&layout=xor&elem_bytes=2&row_elems=32&phase=2`;

async function solvePuzzle(page, explorer, entry) {
  const menu = explorer.locator('select[name="puzzle"]');
  if (await menu.count() !== 1) {
    return { found: false, reason: 'the explorer has no puzzle menu: book/bank_conflicts was recorded before '
      + 'the explorer had puzzles (re-record it)' };
  }
  const result = { found: true };
  try {
    result.menu = await menu.evaluate((m) => [...m.options].map((o) => o.value).filter((v) => v));
    await menu.selectOption(EXPLORER_PUZZLE, { timeout: 5_000 });
    result.chosen = await readExplorer(page, explorer);
    await explorer.locator('select[name="layout"]').selectOption('padded', { timeout: 5_000 });
    const pad = explorer.locator('input[name="pad_bytes"]');
    await pad.fill('16', { timeout: 5_000 });
    await pad.dispatchEvent('change');
    result.padded = await readExplorer(page, explorer);
    await explorer.locator('.tcgemm-puzzle-solution summary').click({ timeout: 5_000 });
    await explorer.locator('button[name="puzzle-solution"]').click({ timeout: 5_000 });
    result.solved = await readExplorer(page, explorer);
    result.hash = await page.evaluate(() => decodeURIComponent(window.location.hash));
  } catch (error) {
    return { ...result, reason: `could not operate the puzzle: ${error.message.split('\n')[0]}` };
  }
  const base = page.url().split('#')[0];
  result.link = { link: EXPLORER_PUZZLE_LINK, ...await openLink(page.context(), `${base}#bank-explorer:${EXPLORER_PUZZLE_LINK}`, entry) };
  return result;
}

// A link to the explorer opened in a new page: what it shows at 1280 px, and how it fits a phone.
// Its errors and requests count as the page's own.
async function openLink(context, url, entry) {
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  listen(page, entry);
  try {
    await page.goto(url, { waitUntil: 'load' });
    await settle(page);
    const explorer = page.locator('.tcgemm-bank-explorer');
    await explorer.waitFor({ state: 'visible', timeout: 10_000 });
    const shown = await readExplorer(page, explorer);
    const fits = { desktop: await explorer.evaluate(explorerFit) };
    await page.setViewportSize(PHONE);
    await nextFrames(page);
    fits.phone = await explorer.evaluate(explorerFit);
    return { shown, fits };
  } catch (error) {
    return { error: error.message.split('\n')[0] };
  } finally {
    await page.close();
  }
}

// The ldmatrix lane picker, where a page has one: click lane 9 and read what the widget says.
async function pickLane(page) {
  const picker = page.locator('.tcgemm-lane-picker');
  if ((await picker.count()) === 0) return null;
  await picker.first().locator('button[data-lane="9"]').click();
  return {
    chosen: await picker.first().locator('button.chosen').getAttribute('data-lane'),
    info: await picker.first().locator('.tcgemm-lane-info').textContent(),
    received: await picker.first().locator('td.received').count(),
  };
}

// The register-bank stepper, where a page has one: on to FFMA 40 of 64, so that issued, pending,
// conflicting and current FFMAs are all on screen.
async function stepRegisters(page) {
  const slider = page.locator('.tcgemm-regbank-stepper input[name="step"]');
  for (let i = 0; i < await slider.count(); i++) await slider.nth(i).fill('40');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
