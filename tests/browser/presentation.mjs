// What a reader sees of a page, measured in the page itself (each function is passed to
// page.evaluate, so it holds its own helpers). check_book.mjs calls them in light and dark mode.

// Code-cell outputs (myst-nb: div.cell > div.cell_output): results wider than their output area
// (but for listings that scroll inside it),
// progress-bar text, figures shown narrower than they were drawn for.
export function measureOutputs({ columnPx }) {
  const PROGRESS = [
    /^\s*\[[#.]/, // tcgemm's own bar: "[######....] 6/10"
    /\d{1,3}%\|[^|\n]*\|/, // tqdm: " 60%|██████    | 6/10"
    /\[\d+:\d{2}<[\d:?]+/, // tqdm's "[00:01<00:02"
  ];
  const cells = [...document.querySelectorAll('div.cell')];
  const where = (area) => {
    const cell = area.closest('div.cell');
    const source = cell?.querySelector('.cell_input pre')?.textContent.trim().split('\n')[0] ?? '';
    return { cell: cells.indexOf(cell) + 1, source: source.slice(0, 80) };
  };
  const describe = (el) => el.tagName.toLowerCase() + [...el.classList].slice(0, 3).map((c) => `.${c}`).join('');
  const shown = (el) => el.getClientRects().length > 0;
  const excerpt = (text) => text.trim().split('\n')[0].slice(0, 80);

  const result = { column: null, overflows: [], progress: [], smallFigures: [] };
  const article = document.querySelector('article.bd-article');
  if (article) {
    const style = getComputedStyle(article);
    result.column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  }
  for (const area of document.querySelectorAll('div.cell_output')) {
    if (shown(area)) {
      const limit = area.clientWidth;
      // A listing (tcgemm.engine.source.Listing: code in a <details> the reader opens) may scroll inside a
      // box that fits; its content is long by nature. So may a widget's grid (the bank explorer's
      // tile of up to 1024 columns) in the box the widget gives it. Every other text must fit whole,
      // even in a <pre> the theme lets scroll.
      const scrollsInPlace = (el) => el !== area && (el.closest('details') !== null || el.closest('.tcgemm-widget') !== null)
        && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)
        && el.getBoundingClientRect().width <= limit + 1;
      const listings = [...area.querySelectorAll('*')].filter(scrollsInPlace);
      let widest = null;
      for (const el of [area, ...area.querySelectorAll('*')]) {
        if (listings.some((listing) => listing.contains(el))) continue;
        if (el.scrollWidth > limit + 1 && (!widest || el.scrollWidth > widest.scrollWidth)) widest = el;
      }
      if (widest) {
        result.overflows.push({ ...where(area), kind: 'output', element: describe(widest),
          width: widest.scrollWidth, container: limit, text: excerpt(widest.textContent) });
      }
      for (const table of area.querySelectorAll('table')) {
        const width = table.getBoundingClientRect().width;
        const container = table.parentElement.clientWidth;
        if (shown(table) && width > container + 1 && !listings.some((listing) => listing.contains(table))) {
          result.overflows.push({ ...where(area), kind: 'table', element: describe(table.parentElement),
            width: Math.round(width), container, text: excerpt(table.textContent) });
        }
      }
      for (const img of area.querySelectorAll('img')) {
        // The picture itself: the theme pads images (in dark mode) inside their box.
        const box = getComputedStyle(img);
        const width = img.getBoundingClientRect().width - ['paddingLeft', 'paddingRight', 'borderLeftWidth',
          'borderRightWidth'].reduce((sum, side) => sum + parseFloat(box[side]), 0);
        const needed = Math.min(img.naturalWidth, columnPx) - 1;
        if (shown(img) && width < needed) {
          result.smallFigures.push({ ...where(area), src: img.getAttribute('src').split('/').pop(),
            width: Math.round(width), natural: img.naturalWidth, needed: needed + 1 });
        }
      }
    }
    // All text, shown or folded away: progress noise has no place in a recorded output.
    const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement.closest('script, style')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const lines = [];
    while (walker.nextNode()) lines.push(...walker.currentNode.textContent.split(/\r\n|\r|\n/));
    const noisy = lines.filter((line) => PROGRESS.some((pattern) => pattern.test(line)));
    if (noisy.length) {
      result.progress.push({ ...where(area), lines: noisy.length, first: noisy.slice(0, 3).map((l) => l.slice(0, 100)) });
    }
  }
  return result;
}

// WCAG 2 contrast of every visible text inside `roots` (widgets, tables) against what it is drawn on:
// its own background and its ancestors', composited over the canvas with every opacity on the way,
// as the screen shows them. Failures are grouped by (widget, element, colours).
export function measureContrast({ roots, state }) {
  const describe = (el) => el.tagName.toLowerCase() + [...el.classList].map((c) => `.${c}`).join('');
  const probe = document.createElement('canvas').getContext('2d');
  // A computed colour as straight [r, g, b, a] in 0..1.
  function rgba(css, normalised = false) {
    let m = css.match(/^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/);
    if (m) return [+m[1] / 255, +m[2] / 255, +m[3] / 255, m[4] === undefined ? 1 : +m[4]];
    m = css.match(/^color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.]+))?\)$/);
    if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
    if (normalised) throw new Error(`presentation.mjs: cannot read the colour ${css}`);
    probe.fillStyle = '#000';
    probe.fillStyle = css; // the canvas writes most CSS colours as #rrggbb or rgba()
    const hex = probe.fillStyle.match(/^#(..)(..)(..)$/);
    return hex ? [...hex.slice(1).map((h) => parseInt(h, 16) / 255), 1] : rgba(probe.fillStyle, true);
  }
  // Premultiplied source-over.
  const over = (top, below) => top.map((v, i) => v + below[i] * (1 - top[3]));
  const premultiplied = ([r, g, b, a]) => [r * a, g * a, b * a, a];
  const canvas = (() => {
    const probeEl = document.createElement('div');
    probeEl.style.backgroundColor = 'Canvas';
    document.documentElement.append(probeEl);
    const colour = rgba(getComputedStyle(probeEl).backgroundColor);
    probeEl.remove();
    return colour;
  })();
  // The colours the text and its background end up as on screen (opaque, straight RGB).
  function onScreen(el, textColour) {
    const chain = [];
    for (let node = el; node; node = node.parentElement) chain.unshift(node);
    // One layer per opacity group, innermost last; each holds what is painted inside the group.
    const groups = [{ colour: premultiplied(canvas), opacity: 1 }];
    let painter = 'the canvas';
    for (const node of chain) {
      const style = getComputedStyle(node);
      const opacity = Number(style.opacity);
      if (opacity < 1) groups.push({ colour: [0, 0, 0, 0], opacity });
      const top = groups[groups.length - 1];
      const face = rgba(style.backgroundColor);
      if (face[3] > 0) painter = describe(node);
      top.colour = over(premultiplied(face), top.colour);
    }
    // Composite each group, at its opacity, onto the one that holds it.
    const flatten = (layers) => {
      let inner = layers[layers.length - 1].colour;
      for (let i = layers.length - 2; i >= 0; i--) inner = over(inner.map((v) => v * layers[i + 1].opacity), layers[i].colour);
      return inner;
    };
    const background = flatten(groups);
    const text = flatten([...groups.slice(0, -1), { ...groups[groups.length - 1],
      colour: over(premultiplied(textColour), groups[groups.length - 1].colour) }]);
    return { text: text.slice(0, 3), background: background.slice(0, 3), painter };
  }
  const luminance = (rgb) => rgb
    .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => {
    const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (high + 0.05) / (low + 0.05);
  };
  const hex = (rgb) => `#${rgb.map((c) => Math.round(c * 255).toString(16).padStart(2, '0')).join('')}`;
  const TEXT_INPUTS = 'select, input:not([type]), input[type="text"], input[type="number"]';

  const failures = new Map();
  let texts = 0;
  for (const root of document.querySelectorAll(roots)) {
    // The widget's own class: tcgemm-lane-picker beside the shared tcgemm-widget.
    const widget = [...root.querySelectorAll('[class*="tcgemm-"]')].flatMap((el) => [...el.classList])
      .find((name) => name.startsWith('tcgemm-') && name !== 'tcgemm-widget') ?? describe(root);
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const hasText = el.matches(TEXT_INPUTS)
        || [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
      const rect = el.getBoundingClientRect();
      // WCAG exempts disabled controls; a select draws only its chosen option.
      if (!hasText || el.matches(':disabled') || el.parentElement?.closest('select')
        || !el.checkVisibility({ visibilityProperty: true }) || rect.width === 0 || rect.height === 0) continue;
      texts++;
      const style = getComputedStyle(el);
      const { text, background, painter } = onScreen(el, rgba(style.color));
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      const needed = large ? 3 : 4.5;
      const got = ratio(text, background);
      if (got < needed) {
        const entry = { state, widget, element: describe(el), color: hex(text),
          background: hex(background), backgroundOf: painter, ratio: Math.round(got * 100) / 100, needed, count: 0,
          text: (el.matches(TEXT_INPUTS) ? el.value : el.textContent).trim().slice(0, 40) };
        const key = [entry.widget, entry.element, entry.color, entry.background].join('|');
        if (!failures.has(key)) failures.set(key, entry);
        failures.get(key).count++;
      }
    }
  }
  return { texts, failures: [...failures.values()] };
}

// What each mode puts behind the outputs. The figures (div.cell_output img, as shown): the colour at
// the picture's edge (its recorded padding, over whatever the page puts behind it) against the page
// itself, and the strongest ink of the picture (its neutral pixels: text, axes, outlines) against
// that edge colour. A figure that sits on a panel of another colour than the page (the theme's light
// panel in dark mode), or whose ink fades into the page, is a finding. The panels: the listings
// (tcgemm.engine.source.Listing), their bars and code, the output boxes and the widgets' controls, each
// against the page: a neutral box in the other mode's colours (a light one on the dark page, or
// the reverse) is a finding, and so is a <select> whose colour-scheme (its drop-down list, its arrow)
// is not the mode's.
export async function measureBackdrops({ mode, figures }) {
  const PANEL_RATIO = 2;     // a neutral box this far from the page's colour stands out as a panel
  const EDGE_RATIO = 1.25;   // a figure's edge this far from the page's colour is a panel
  const INK_RATIO = 4.5;     // WCAG AA for text
  const NEUTRAL = 0.1;       // max - min of the sRGB channels below which a colour is a grey
  const describe = (el) => el.tagName.toLowerCase() + [...el.classList].slice(0, 3).map((c) => `.${c}`).join('');
  const probe = document.createElement('canvas').getContext('2d');
  function rgba(css) {
    const m = css.match(/^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/);
    if (m) return [+m[1] / 255, +m[2] / 255, +m[3] / 255, m[4] === undefined ? 1 : +m[4]];
    probe.fillStyle = '#000';
    probe.fillStyle = css;
    const hex = probe.fillStyle.match(/^#(..)(..)(..)$/);
    if (hex) return [...hex.slice(1).map((h) => parseInt(h, 16) / 255), 1];
    const m2 = probe.fillStyle.match(/^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/);
    return m2 ? [+m2[1] / 255, +m2[2] / 255, +m2[3] / 255, m2[4] === undefined ? 1 : +m2[4]] : [0, 0, 0, 0];
  }
  const over = (top, below) => top.slice(0, 3).map((v, i) => v * top[3] + below[i] * (1 - top[3]));
  const canvasColour = (() => {
    const el = document.createElement('div');
    el.style.backgroundColor = 'Canvas';
    document.documentElement.append(el);
    const colour = rgba(getComputedStyle(el).backgroundColor);
    el.remove();
    return colour;
  })();
  // The colour painted behind an element's content: its own background over its ancestors'.
  function backdrop(el, withOwn = true) {
    const chain = [];
    for (let node = withOwn ? el : el.parentElement; node; node = node.parentElement) chain.unshift(node);
    return chain.reduce((below, node) => over(rgba(getComputedStyle(node).backgroundColor), below), canvasColour.slice(0, 3));
  }
  const luminance = (rgb) => rgb
    .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => {
    const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (high + 0.05) / (low + 0.05);
  };
  const neutral = (rgb) => Math.max(...rgb) - Math.min(...rgb) < NEUTRAL;
  const LINEAR = Float64Array.from({ length: 256 }, (_, v) => (v / 255 <= 0.04045 ? v / 255 / 12.92
    : ((v / 255 + 0.055) / 1.055) ** 2.4));
  const hex = (rgb) => `#${rgb.map((c) => Math.round(c * 255).toString(16).padStart(2, '0')).join('')}`;
  const round = (x) => Math.round(x * 100) / 100;
  const cells = [...document.querySelectorAll('div.cell')];
  const cellOf = (el) => cells.indexOf(el.closest('div.cell')) + 1;
  const page = backdrop(document.querySelector('article.bd-article') ?? document.body);
  const result = { page: hex(page), figuresChecked: 0, figures: [], panelsChecked: 0, panels: [] };

  for (const img of figures ? document.querySelectorAll('div.cell_output img') : []) {
    if (!img.checkVisibility() || img.getClientRects().length === 0) continue;
    try { await img.decode(); } catch { /* judged below: no pixels */ }
    const [w, h] = [img.naturalWidth, img.naturalHeight];
    const src = img.getAttribute('src').split('/').pop().slice(0, 80);
    if (!w || !h) { result.figures.push({ cell: cellOf(img), src, problem: 'not loaded' }); continue; }
    const canvas = document.createElement('canvas');
    [canvas.width, canvas.height] = [w, h];
    const context = canvas.getContext('2d', { willReadFrequently: true });
    context.drawImage(img, 0, 0);
    const { data } = context.getImageData(0, 0, w, h);
    // Each pixel as shown (over what is behind the picture), in 0..255.
    const behind = backdrop(img).map((c) => c * 255);
    const shown = (i) => {
      const a = data[i + 3] / 255;
      return [0, 1, 2].map((k) => Math.round(data[i + k] * a + behind[k] * (1 - a)));
    };
    const lum = (rgb) => 0.2126 * LINEAR[rgb[0]] + 0.7152 * LINEAR[rgb[1]] + 0.0722 * LINEAR[rgb[2]];
    // The edge: the outer 3 px, their median by luminance.
    const edge = [];
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (x < 3 || y < 3 || x >= w - 3 || y >= h - 3) edge.push(shown(4 * (y * w + x)));
      }
    }
    edge.sort((a, b) => lum(a) - lum(b));
    const edgeColour = edge[edge.length >> 1].map((c) => c / 255);
    const edgeLum = lum(edge[edge.length >> 1]);
    // The ink: neutral pixels, binned by their contrast with the edge; the strongest bin that holds
    // at least 20 pixels (text is drawn in many).
    const bins = new Map();
    for (let i = 0; i < data.length; i += 4) {
      const rgb = shown(i);
      if (Math.max(...rgb) - Math.min(...rgb) >= NEUTRAL * 255) continue;
      const [high, low] = [lum(rgb), edgeLum].sort((x, y) => y - x);
      const r = Math.floor(((high + 0.05) / (low + 0.05)) * 10) / 10;
      bins.set(r, (bins.get(r) ?? 0) + 1);
    }
    const drawn = [...bins].filter(([r, n]) => n >= 20 && r > 1.05).map(([r]) => r);
    const ink = drawn.length ? Math.max(...drawn) : null;   // null: nothing drawn but the background
    const edgeRatio = ratio(edgeColour, page);
    const [panel, faint] = [edgeRatio > EDGE_RATIO, ink !== null && ink < INK_RATIO];
    result.figuresChecked++;
    if (panel || faint) {
      result.figures.push({ cell: cellOf(img), src, edge: hex(edgeColour), page: hex(page),
        edgeRatio: round(edgeRatio), ink: ink && round(ink), panel, faint });
    }
  }

  const BOXES = ['details.tcgemm-listing', 'details.tcgemm-listing > summary', 'details.tcgemm-listing > pre',
    'div.cell_output .output', 'div.cell_output .widget-subarea',
    '.tcgemm-widget select', '.tcgemm-widget input', '.tcgemm-widget button'].join(', ');
  const seen = new Map();
  for (const el of document.querySelectorAll(BOXES)) {
    if (!el.checkVisibility() || el.getClientRects().length === 0) continue;
    result.panelsChecked++;
    const colour = backdrop(el);
    const scheme = getComputedStyle(el).colorScheme;
    const problems = [];
    if (neutral(colour) && ratio(colour, page) >= PANEL_RATIO) problems.push(`background ${hex(colour)} on the page's ${hex(page)}`);
    if (el.matches('select') && !scheme.split(/\s+/).includes(mode)) problems.push(`color-scheme ${scheme}`);
    if (!problems.length) continue;
    const key = `${describe(el)}|${problems.join()}`;
    if (!seen.has(key)) {
      seen.set(key, { cell: cellOf(el), element: describe(el), problems, count: 0,
        text: (el.matches('select, input') ? el.value : el.textContent).trim().split('\n')[0].slice(0, 60) });
      result.panels.push(seen.get(key));
    }
    seen.get(key).count++;
  }
  return result;
}

// The code listings (tcgemm.engine.source.Listing) as a reader uses them: what each bar says closed, and
// once clicked open. The listings are left open (their code then counts in the contrast check).
export function openListings() {
  const label = (summary) => {
    const after = getComputedStyle(summary, '::after').content;
    const added = after && after !== 'none' && after !== 'normal' ? after.replace(/^"|"$/g, '') : '';
    return `${summary.innerText.trim()}${added ? ` ${added}` : ''}`.replace(/\s+/g, ' ').trim();
  };
  const found = [];
  for (const details of document.querySelectorAll('details.tcgemm-listing')) {
    const summary = details.querySelector(':scope > summary');
    const closed = label(summary);
    summary.click();
    found.push({ closed, open: label(summary), opened: details.open });
  }
  return found;
}
