// Open notebooks in a running JupyterLab (started by `make lab`, tests/test_lab.py) in headless
// Chromium, as a reader does: is the notebook's tab marked modified once its kernel is up, does a
// save write back the file unchanged, and what do the cells print when run.
//
//   node check_lab.mjs OUT_DIR URL [--run I,J,...] [--then NAME...]
//
// URL is the address JupyterLab printed (…/lab/tree/NOTEBOOK?token=…). The notebook it opens is
// checked, then its cells I, J, ... (indices in the notebook's cells, run in this order with
// Shift+Enter, each waited for until its prompt shows the next execution count of the fresh kernel:
// their prompts must be empty before); then each NAME (a notebook beside it) is opened in a fresh
// workspace and checked. Right after each save the file is copied to OUT_DIR/NAME.saved. Writes
// OUT_DIR/report.json:
//   { chromium, notebooks: {NAME: {url, kernelIdle, dirtySamples, dialog, saved, error}},
//     cells: [{index, prompt, outputs: [{mime, text}]}], external: [URL...], pageErrors: [...] }
// and a screenshot OUT_DIR/NAME.png of each; exits 0 whenever it could write the report.
import { copyFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.TCGEMM_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const OPEN_TIMEOUT_MS = 90_000;    // JupyterLab's first load, the kernel's start
const CELL_TIMEOUT_MS = 300_000;   // a %%gpu cell that does run (a GPU machine) compiles kernels
const SETTLE_MS = 3_000;           // after the kernel is idle: kernel_info, kernelspec written
const SAMPLES = 5;                 // the tab looked at SAMPLES times, 500 ms apart

const [outDir, url, ...rest] = process.argv.slice(2);
const runCells = [];
const thenOpen = [];
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--run') runCells.push(...rest[++i].split(',').map(Number));
  else if (rest[i] === '--then') while (i + 1 < rest.length && !rest[i + 1].startsWith('--')) thenOpen.push(rest[++i]);
  else throw new Error(`unknown argument ${rest[i]}`);
}
const origin = new URL(url).origin;
const token = new URL(url).searchParams.get('token');
const root = process.env.TCGEMM_LAB_ROOT;  // the folder JupyterLab serves, to see the saved files
const report = { chromium: null, notebooks: {}, cells: [], external: [], pageErrors: [] };

const nameOf = (u) => decodeURIComponent(new URL(u).pathname.split('/lab/tree/')[1] || '');

// The notebook's tab: its label, and whether JupyterLab marks it modified (jp-mod-dirty).
const tabDirty = (page, name) => page.evaluate((n) => {
  const tabs = [...document.querySelectorAll('.lm-TabBar-tab')]
    .filter((t) => t.querySelector('.lm-TabBar-tabLabel')?.textContent === n);
  return tabs.length ? tabs.some((t) => t.classList.contains('jp-mod-dirty')) : null;
}, name);

async function openNotebook(context, pageUrl) {
  const name = nameOf(pageUrl);
  const entry = { url: pageUrl, kernelIdle: false, dirtySamples: [], dialog: null, saved: false, error: null };
  report.notebooks[name] = entry;
  const page = await context.newPage();
  page.on('pageerror', (e) => report.pageErrors.push(`${name}: ${e.message}`));
  try {
    await page.goto(pageUrl, { waitUntil: 'load' });
    if (new URL(page.url()).pathname.endsWith('/login')) throw new Error(`sent to the login page: ${page.url()}`);
    const panel = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden)');
    await panel.locator('.jp-Cell').first().waitFor({ timeout: OPEN_TIMEOUT_MS });
    await panel.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
      .waitFor({ timeout: OPEN_TIMEOUT_MS })
      .then(() => { entry.kernelIdle = true; })
      .catch(async () => { entry.dialog = await page.locator('.jp-Dialog').allInnerTexts(); });
    await page.waitForTimeout(SETTLE_MS);
    for (let i = 0; i < SAMPLES; i++) {
      entry.dirtySamples.push(await tabDirty(page, name));
      await page.waitForTimeout(500);
    }
    // Save (Ctrl+S on the notebook) and keep what JupyterLab wrote.
    const file = root && join(root, name);
    const before = file ? statSync(file).mtimeMs : 0;
    await panel.locator('.jp-Notebook').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+s');
    if (file) {
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && statSync(file).mtimeMs === before) await page.waitForTimeout(100);
      entry.saved = statSync(file).mtimeMs !== before;
      if (entry.saved) {
        await page.waitForTimeout(300);  // the write's end
        copyFileSync(file, join(outDir, `${name}.saved`));
      }
    }
    return { page, panel, entry };
  } catch (e) {
    entry.error = String(e);
    return { page, panel: null, entry };
  } finally {
    await page.screenshot({ path: join(outDir, `${name}.png`) }).catch(() => {});
  }
}

async function runCell(page, panel, index, count) {
  const cell = panel.locator('.jp-Notebook .jp-Cell').nth(index);
  await cell.scrollIntoViewIfNeeded();
  await cell.locator('.jp-InputPrompt').first().click();
  await page.keyboard.press('Shift+Enter');
  const prompt = cell.locator('.jp-InputPrompt').first();
  const want = `[${count}]:`;
  const deadline = Date.now() + CELL_TIMEOUT_MS;
  let text = await prompt.innerText();
  while (text.trim() !== want && Date.now() < deadline) {
    await page.waitForTimeout(200);
    text = await prompt.innerText();
  }
  const outputs = await cell.locator('.jp-OutputArea-output').evaluateAll((nodes) => nodes.map((n) => ({
    mime: n.getAttribute('data-mime-type'), text: n.innerText,
  })));
  report.cells.push({ index, prompt: text.trim(), outputs });
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
report.chromium = browser.version();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Offline: JupyterLab's own server only; anything else is refused and reported.
  await context.route('**/*', (route) => {
    const requested = route.request().url();
    if (requested.startsWith(origin) || /^(data|blob):/.test(requested)) return route.continue();
    report.external.push(requested);
    return route.abort();
  });
  const first = await openNotebook(context, url);
  if (first.panel) {
    try {
      for (const [k, index] of runCells.entries()) await runCell(first.page, first.panel, index, k + 1);
    } catch (e) {
      first.entry.error = `running cells: ${e}`;
    }
    await first.page.screenshot({ path: join(outDir, `${nameOf(url)}.run.png`) }).catch(() => {});
  }
  await first.page.close();
  for (const name of thenOpen) {
    // A fresh workspace (reset): only this notebook is opened.
    const opened = await openNotebook(context, `${origin}/lab/tree/${encodeURIComponent(name)}?token=${token}&reset`);
    await opened.page.close();
  }
} finally {
  await browser.close();
  writeFileSync(join(outDir, 'report.json'), JSON.stringify(report, null, 1));
}
