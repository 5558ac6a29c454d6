// The size of what a reader reads on each page of the built book, at 1280 px, in the theme's light
// and dark modes (the dark theme pads images inside their box):
// * every figure (an <img> of a code cell's output): its file, its natural width (the PNG's pixels)
//   and the width the page shows the picture at (its content box). tests/test_browser.py knows
//   each PNG's smallest text from the figure registry and checks that it is shown at
//   tcgemm.style.MIN_DISPLAY_TEXT_PX or more: smallest × shown width / natural width.
// * every <pre> shown as the page opens (code cells, their text outputs, code blocks of the prose;
//   not a listing folded in a closed <details>): its scrollWidth and clientWidth, so that a line that
//   does not fit (a horizontal scrollbar, or text cut off) is found, with its longest line; and how
//   many characters of its font fit its width (`room`), which must be tcgemm.style.TEXT_COLUMN_CHARS
//   or more in a code cell.
//
//   node text_size.mjs HTML_ROOT OUT_JSON PAGE...
//
// Writes OUT_JSON: { chromium, viewport, pages: {PAGE: {error, light|dark: {theme, images: [{cell,
//   source, src, natural, width}], pres: [{cell, source, where, scrollWidth, clientWidth, room,
//   chars, charPx, longest}]}}} and exits 0 whenever it could write it: tests/test_browser.py
//   judges it.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.TCGEMM_CHROMIUM || '/usr/bin/chromium';
// As check_book.mjs: no network, no host name resolves.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'];
const VIEWPORT = { width: 1280, height: 900 };
const MODES = ['light', 'dark'];
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf',
};

function serve(root) {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path.endsWith('/')) path += 'index.html';
    const file = normalize(join(root, path));
    if (!(file.startsWith(root + sep) && existsSync(file) && statSync(file).isFile())) {
      return res.writeHead(404).end('not found');
    }
    const type = TYPES[extname(file).toLowerCase()] || 'application/octet-stream';
    res.writeHead(200, { 'Content-Type': type }).end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// Runs in the page.
function measure() {
  const cells = [...document.querySelectorAll('div.cell')];
  const where = (el) => {
    const cell = el.closest('div.cell');
    const source = cell?.querySelector('.cell_input pre')?.textContent.trim().split('\n')[0] ?? '';
    return { cell: cells.indexOf(cell) + 1, source: source.slice(0, 80) };
  };
  const shown = (el) => el.getClientRects().length > 0;
  const images = [];
  for (const img of document.querySelectorAll('div.cell_output img')) {
    if (!shown(img) || !img.complete) continue;
    const box = getComputedStyle(img);
    const width = img.getBoundingClientRect().width - ['paddingLeft', 'paddingRight', 'borderLeftWidth',
      'borderRightWidth'].reduce((sum, side) => sum + parseFloat(box[side]), 0);
    images.push({ ...where(img), src: img.getAttribute('src').split('/').pop(), natural: img.naturalWidth, width });
  }
  // The width of one character of a <pre>'s font (the book's code is monospace).
  const probe = document.createElement('canvas').getContext('2d');
  const charPx = (el) => {
    const style = getComputedStyle(el);
    probe.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    return probe.measureText('0'.repeat(100)).width / 100;
  };
  const pres = [];
  for (const pre of document.querySelectorAll('article pre')) {
    if (!shown(pre) || pre.closest('details:not([open])')) continue;
    const lines = pre.textContent.split('\n');
    const longest = lines.reduce((a, b) => (b.length > a.length ? b : a), '');
    const style = getComputedStyle(pre);
    const content = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    pres.push({
      ...where(pre),
      where: pre.closest('.cell_input') ? 'input' : pre.closest('.cell_output') ? 'output' : 'prose',
      scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth, room: Math.floor(content / charPx(pre)),
      chars: longest.length, charPx: charPx(pre), longest: longest.slice(0, 120),
    });
  }
  return { theme: document.documentElement.dataset.theme, images, pres };
}

async function main() {
  const [rootArg, outFile, ...pages] = process.argv.slice(2);
  if (!rootArg || !outFile || pages.length === 0) {
    console.error('usage: node text_size.mjs HTML_ROOT OUT_JSON PAGE...');
    process.exit(2);
  }
  const server = await serve(resolve(rootArg));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const result = { chromium: browser.version(), viewport: VIEWPORT, pages: {} };
  for (const path of pages) {
    const entry = { error: null };
    result.pages[path] = entry;
    const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: MODES[0] });
    await context.route('**/*', (route) => (route.request().url().startsWith(`${origin}/`)
      ? route.continue() : route.abort('blockedbyclient')));
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await page.goto(`${origin}/${path}`, { waitUntil: 'load' });
      await page.waitForLoadState('networkidle');
      await page.evaluate(() => window.MathJax?.startup?.promise);
      await page.evaluate(() => document.fonts.ready.then(() => {}));
      for (const mode of MODES) {
        await page.emulateMedia({ colorScheme: mode });
        await page.waitForFunction((want) => document.documentElement.dataset.theme === want, mode,
          { timeout: 5_000 }).catch(() => {}); // the test reads `theme`
        await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
        entry[mode] = await page.evaluate(measure);
      }
    } catch (error) {
      entry.error = error.message.split('\n')[0];
    }
    await context.close();
  }
  await browser.close();
  server.close();
  writeFileSync(outFile, JSON.stringify(result, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
