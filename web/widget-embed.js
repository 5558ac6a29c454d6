// The book's widget embedder: draws the anywidget views whose state `make record` stored in a
// notebook (the ipywidgets widget-state and widget-view scripts that myst-nb writes into the page),
// from the page alone. It stands in for RequireJS, @jupyter-widgets/html-manager and anywidget's
// module (4.5 MB from a CDN): the book's widgets are all anywidgets (tcgemm/widgets), whose logic is
// their own ES module (`_esm`), so what it takes to draw one is that module, its CSS (`_css`) and a
// model that holds the recorded traits. Nothing is fetched: the module is imported from a blob.
//
// What an anywidget module sees (anywidget's front-end module API): `initialize({model})` once per
// model, `render({model, el})` once per view; model.get, set, on, off (change:NAME and change
// events, as Backbone fires them), save_changes and send (nothing to save to and no kernel to
// send to in a static page), widget_manager.get_model. A view is drawn into a div.widget-subarea
// put just before its script, as html-manager does; the placeholder that tcgemm.publish.offline puts
// there says what the reader would have seen, and stays, saying why, if the view cannot be drawn.
// Models of other modules (ipywidgets' controls) are refused at build time (tcgemm.publish.offline).
(function () {
  'use strict';

  const STATE = 'script[type="application/vnd.jupyter.widget-state+json"]';
  const VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]';
  const PLACEHOLDER = 'tcgemm-widget-placeholder';

  const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);

  class Model {
    constructor(id, entry, models) {
      this.id = id;
      this.module = entry.model_module;
      this.name = entry.model_name;
      this.state = { ...entry.state };
      this.models = models;
      this.listeners = new Map();
      this.widget = null; // the promise of this model's anywidget module, initialized
    }

    get(name) { return this.state[name]; }

    set(name, value) {
      if (typeof name === 'object' && name !== null) {
        for (const [key, each] of Object.entries(name)) this.set(key, each);
        return;
      }
      if (same(this.state[name], value)) return;
      this.state[name] = value;
      this.emit(`change:${name}`, this, value);
      this.emit('change', this);
    }

    on(events, callback) {
      for (const event of events.split(/\s+/).filter(Boolean)) {
        if (!this.listeners.has(event)) this.listeners.set(event, []);
        this.listeners.get(event).push(callback);
      }
    }

    off(events, callback) {
      if (!events) return this.listeners.clear();
      for (const event of events.split(/\s+/).filter(Boolean)) {
        if (!callback) this.listeners.delete(event);
        else this.listeners.set(event, (this.listeners.get(event) || []).filter((cb) => cb !== callback));
      }
    }

    emit(event, ...args) {
      for (const callback of [...(this.listeners.get(event) || [])]) callback(...args);
    }

    // What the widget's module is handed: the model's methods, nothing of the embedder.
    facade() {
      const model = this;
      return {
        get: (name) => model.get(name),
        set: (name, value) => model.set(name, value),
        on: (event, callback) => model.on(event, callback),
        off: (event, callback) => model.off(event, callback),
        save_changes: () => {},
        send: () => {},
        widget_manager: {
          get_model: async (id) => {
            const other = model.models.get(id);
            if (!other) throw new Error(`no widget model ${id} on this page`);
            return other.facade();
          },
        },
      };
    }
  }

  // The module of an anywidget model, imported once per model and initialized.
  function widgetOf(model) {
    if (!model.widget) {
      model.widget = (async () => {
        const esm = model.get('_esm');
        const url = URL.createObjectURL(new Blob([esm], { type: 'text/javascript' }));
        let module;
        try {
          module = await import(url);
        } finally {
          URL.revokeObjectURL(url);
        }
        let widget = module.default;
        if (typeof widget === 'function') widget = await widget(); // a factory of {initialize, render}
        if (!widget || typeof widget.render !== 'function') throw new Error('its module has no render()');
        addCss(model.get('_anywidget_id') || model.id, model.get('_css'));
        if (typeof widget.initialize === 'function') await widget.initialize({ model: model.facade(), experimental: {} });
        return widget;
      })();
    }
    return model.widget;
  }

  function addCss(id, css) {
    if (!css || document.getElementById(id)) return;
    const style = document.createElement('style');
    style.id = id;
    style.textContent = css;
    document.head.append(style);
  }

  // A LayoutModel's settings (width, margin, grid_area, ...) as the view's CSS, as ipywidgets does.
  function applyLayout(el, layout) {
    if (!layout) return;
    for (const [key, value] of Object.entries(layout.state)) {
      if (!key.startsWith('_') && value !== null && value !== undefined && value !== '') {
        el.style.setProperty(key.replace(/_/g, '-'), String(value));
      }
    }
  }

  const modelRef = (value) => (typeof value === 'string' && value.startsWith('IPY_MODEL_') ? value.slice(10) : null);

  async function drawView(tag, models) {
    const { model_id: id } = JSON.parse(tag.textContent);
    const model = models.get(id);
    if (!model) throw new Error(`no recorded state for widget model ${id}`);
    if (model.module !== 'anywidget' || model.name !== 'AnyModel') {
      throw new Error(`${model.module} ${model.name} is not an anywidget, which is all this book's pages can draw`);
    }
    const widget = await widgetOf(model);
    const subarea = document.createElement('div');
    subarea.className = 'widget-subarea';
    const el = document.createElement('div');
    el.className = ['tcgemm-widget-view', ...(model.get('_dom_classes') || [])].join(' ');
    if (model.get('tooltip')) el.title = model.get('tooltip');
    applyLayout(el, models.get(modelRef(model.get('layout'))));
    subarea.append(el);
    tag.before(subarea);
    try {
      await widget.render({ model: model.facade(), el, experimental: {} });
    } catch (error) {
      subarea.remove();
      throw error;
    }
  }

  function placeholderOf(tag) {
    let node = tag.previousElementSibling;
    while (node && node.matches('.widget-subarea')) node = node.previousElementSibling;
    return node && node.classList.contains(PLACEHOLDER) ? node : null;
  }

  async function drawAll() {
    const models = new Map();
    for (const tag of document.querySelectorAll(STATE)) {
      for (const [id, entry] of Object.entries(JSON.parse(tag.textContent).state || {})) {
        models.set(id, new Model(id, entry, models));
      }
    }
    await Promise.all([...document.querySelectorAll(VIEW)].map(async (tag) => {
      const placeholder = placeholderOf(tag);
      try {
        await drawView(tag, models);
        if (placeholder) placeholder.remove();
      } catch (error) {
        if (placeholder) placeholder.textContent = `This interactive widget could not be drawn here: ${error.message || error}`;
        console.error('tcgemm widget embedder:', error);
      }
    }));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll);
  else drawAll();
})();
