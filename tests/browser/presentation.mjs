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
      // A listing (tcgemm.source.Listing: code in a <details> the reader opens) may scroll inside a
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
