// attnscan report: draws every figure from the JSON data block of this page. No network, no
// libraries. Layers and heads are 0-indexed everywhere.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("attnscan-data").textContent);
  const SVGNS = "http://www.w3.org/2000/svg";
  const L = DATA.model.layers, H = DATA.model.heads;

  // ---- small helpers ------------------------------------------------------------------------------
  function el(tag, attrs, parent, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  // Colour-bar ends: small differences keep their digits.
  const fmtScale = (x) => (x !== 0 && Math.abs(x) < 0.01 ? Number(x).toExponential(1) : Number(x).toFixed(3));
  const fmtP = (x) => (x === null || x === undefined ? "n/a" : Number(x).toExponential(2));
  const fmt = (x, d = 4) => (x === null || x === undefined || Number.isNaN(x) ? "n/a" : Number(x).toFixed(d));
  const headColour = (h) => DATA.palette.heads[h % DATA.palette.heads.length];
  function hexToRgb(h) { return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)); }
  // Same scale as `attnscan plot` (report/palette.cpp): 0 at the baseline, +-1 at the larger distance
  // from it to lo or hi, so equal distances from the baseline get equal colour on both sides.
  function position(v, lo, base, hi) {
    const extent = Math.max(hi - base, base - lo);
    if (v === null || !(extent > 0)) return 0;
    return Math.max(-1, Math.min(1, (v - base) / extent));
  }
  function divergingColour(p) {
    const stops = DATA.palette.diverging;
    const x = (Math.max(-1, Math.min(1, p)) + 1) / 2 * (stops.length - 1);
    const i = Math.min(Math.floor(x), stops.length - 2), f = x - i;
    const a = hexToRgb(stops[i]), b = hexToRgb(stops[i + 1]);
    return "#" + a.map((c, k) => Math.round(c + (b[k] - c) * f).toString(16).padStart(2, "0")).join("");
  }
  function domain(values, baseline) {
    const fin = values.filter((v) => v !== null && Number.isFinite(v));
    let lo = fin.length ? Math.min(...fin) : 0, hi = fin.length ? Math.max(...fin) : 0;
    if (baseline !== null && Number.isFinite(baseline)) { lo = Math.min(lo, baseline); hi = Math.max(hi, baseline); }
    else baseline = (lo + hi) / 2;
    return { lo, hi, baseline };
  }
  function decodeAttention(b64) {
    const s = atob(b64), out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; ++i) out[i] = s.charCodeAt(i);
    return out;  // weight = byte / 255
  }
  const safe = (s) => String(s).replace(/[^A-Za-z0-9_.-]+/g, "_");
  let uniqueId = 0;  // radio groups of views that show the same example twice stay apart
  const uid = () => ++uniqueId;

  // ---- attention maps: weights, norm-weighted (Kobayashi et al. 2020), and the layer maps: rollout
  // (Abnar & Zuidema 2020), value zeroing (Mohebbi et al. 2023), ALTI (Ferrando et al. 2022) ----------
  const MAP_NAMES = { weights: "weights", norm: "norm-weighted", rollout: "rollout", value_zeroing: "value zeroing",
                      alti: "ALTI", alti_rollout: "ALTI rollout" };
  // Maps the file stores once per model layer ([layer][receiving token][token]; every head of a layer
  // shares its map), and what each shows.
  const LAYER_MAPS = {
    rollout: { text: "Attention rollout (Abnar & Zuidema 2020) after each layer: heads averaged with the residual, multiplied through layers 0..l",
               heading: (l) => `layer ${l} rollout (layers 0-${l}, heads averaged with the residual)` },
    value_zeroing: { text: "Value zeroing (Mohebbi et al. 2023) of each layer: 1 - cos between token i's layer output and the same with token j's values zeroed, rows normalised",
                     heading: (l) => `layer ${l} value zeroing (every head of the layer)` },
    alti: { text: "ALTI (Ferrando et al. 2022) of each layer: token j's share of token i's attention-block output, residual and LayerNorm included",
            heading: (l) => `layer ${l} ALTI (the attention block, every head)` },
    alti_rollout: { text: "ALTI rolled out through layers 0..l",
                    heading: (l) => `layer ${l} ALTI rollout (layers 0-${l})` },
  };
  const isLayerMap = (m) => m in LAYER_MAPS;
  // A detector output's name with the map it scored, so norm and rollout scores read as such.
  // Head importance (importance.*) is stored as the outputs of a detector named "importance".
  const isImportance = (o) => o.detector === "importance";
  const outputLabel = (o) => (o.map && o.map !== "weights" && !isImportance(o) ? `${o.key} [${MAP_NAMES[o.map] || o.map} map]` : o.key);
  // Per example: every map the views draw, as Float32Array(n * n) of values in 0..1 (rows: query), from
  // one byte per value: the weights and the norm-weighted map ([stored layer][stored head][q][k];
  // alpha_qk * ||f_h(x_k)|| with rows normalised, computed by attnscan from the stored weights), and the
  // layer maps ([model layer][q][k], as the file stores them).
  function exampleMaps(ex) {
    if (ex.maps) return ex.maps;
    const n = ex.tokens.length, att = ex.attention ? decodeAttention(ex.attention) : null;
    const norms = att && ex.norm_weighted ? decodeAttention(ex.norm_weighted) : null;
    const layered = {};
    Object.keys(LAYER_MAPS).forEach((k) => { if (ex.layer_maps && ex.layer_maps[k]) layered[k] = decodeAttention(ex.layer_maps[k]); });
    const cache = new Map();
    function get(map, layer, head) {
      const key = `${map}:${layer}:${isLayerMap(map) ? "" : head}`;
      if (cache.has(key)) return cache.get(key);
      const out = new Float32Array(n * n);
      if (isLayerMap(map)) {
        const base = layer * n * n, bytes = layered[map];
        for (let i = 0; i < n * n; ++i) out[i] = bytes[base + i] / 255;
      } else {
        const base = (ex.layers.indexOf(layer) * ex.heads.length + ex.heads.indexOf(head)) * n * n;
        const bytes = map === "norm" ? norms : att;
        for (let i = 0; i < n * n; ++i) out[i] = bytes[base + i] / 255;
      }
      if (cache.size >= 24) cache.delete(cache.keys().next().value);  // a 512-token map is 1 MiB
      cache.set(key, out);
      return out;
    }
    const available = { weights: !!att, norm: !!norms };
    Object.keys(LAYER_MAPS).forEach((k) => { available[k] = !!layered[k]; });
    const first = Object.values(layered)[0];
    ex.maps = { n, get, available, modelLayers: first ? first.length / (n * n) : 0 };
    return ex.maps;
  }
  const LAYER_MAP_COLOUR = DATA.palette.rollout;  // the lines of every layer map

  // ---- the keys each query sees: /attention key_ranges, per stored layer (before, after), -1 unbounded ------
  // Outside them the attention is a structural 0 (a decoder's upper triangle, keys outside a sliding window),
  // drawn as such (NOT_VISIBLE), never as a learned 0. Empty: every query sees every key (encoders).
  const RANGES = (DATA.stored.key_ranges || []).length === 2 * DATA.stored.layers.length
    ? DATA.stored.layers.map((l, i) => [DATA.stored.key_ranges[2 * i], DATA.stored.key_ranges[2 * i + 1]]) : null;
  const CAUSAL = !!RANGES && RANGES.every(([, after]) => after === 0);
  const WINDOWED = !!RANGES && RANGES.some(([before]) => before >= 0);
  const NOT_VISIBLE = "#c4c4c4";  // neutral gray: outside the palette's white-to-red and blue-white-red scales
  const NOT_VISIBLE_TEXT = `not visible to this query (${CAUSAL ? (WINDOWED ? "causal, sliding window" : "causal") : "sliding window"})`;
  const rangeOf = (layer) => (RANGES ? RANGES[DATA.stored.layers.indexOf(layer)] || null : null);
  // Whether query q sees key k in stored layer `layer` (always, for a layer map or a file without ranges).
  function sees(layer, q, k) {
    const r = rangeOf(layer);
    if (!r) return true;
    return (r[0] < 0 || k >= q - r[0]) && (r[1] < 0 || k <= q + r[1]);
  }
  function rangeText([before, after]) {
    if (before < 0 && after < 0) return "every key";
    if (before < 0 && after === 0) return "causal: each query sees itself and the keys before it";
    if (after === 0) return `causal, a sliding window of ${before + 1} keys: the query and the ${before} before it`;
    if (before === after) return `a sliding window of the keys within ${before} positions of the query`;
    return `keys ${before < 0 ? "from the first" : before + " before"} to ${after < 0 ? "the last" : after + " after"} the query`;
  }
  // What the model's queries see, layer by layer ("layers 0, 2: causal, a sliding window of 10 keys ..."); null
  // for a file without key ranges.
  function attentionKind() {
    if (!RANGES) return null;
    const groups = new Map();
    RANGES.forEach((r, i) => {
      const k = rangeText(r);
      if (!groups.has(k)) groups.set(k, []);
      groups.get(k).push(DATA.stored.layers[i]);
    });
    if (groups.size === 1) return `every stored layer is ${[...groups.keys()][0]}`;
    return [...groups].map(([text, ls]) => `layer${ls.length > 1 ? "s" : ""} ${ls.join(", ")}: ${text}`).join("; ");
  }
  // An output with no defined score anywhere (every example NaN): why, in words; null when it has scores.
  function undefinedReason(o) {
    if (o.stats.count.some((c) => c)) return null;
    if (CAUSAL && o.plugin === "next_token" && o.map === "weights")
      return "undefined on this model: it is causal, so no query sees the next token and every score is NaN by design";
    return "undefined on every example of this file: no example has what this pattern scores (e.g. a second sentence, " +
      "or [CLS]/[SEP] in the model's template), so every score is NaN";
  }
  // The gray swatch and its line, under a view that draws structural zeros.
  function notVisibleLegend(parent, more = "") {
    if (!RANGES) return;
    const box = el("div", { class: "map-legend muted not-visible-legend" }, parent);
    const svg = el("svg:svg", { width: 24, height: 12 }, box);
    el("svg:rect", { x: 0, y: 0, width: 24, height: 12, fill: NOT_VISIBLE }, svg);
    box.appendChild(document.createTextNode(" " + NOT_VISIBLE_TEXT + ": a structural 0, not a learned one" + more));
  }

  const tooltip = el("div", { class: "tooltip", id: "tooltip" }, document.body);
  function showTip(evt, text) {
    tooltip.textContent = text;
    tooltip.style.display = "block";
    tooltip.style.left = evt.clientX + 14 + "px";
    tooltip.style.top = evt.clientY + 14 + "px";
  }
  const hideTip = () => { tooltip.style.display = "none"; };

  // ---- export: every figure offers SVG and PNG downloads ---------------------------------------------
  function download(name, blob) {
    const a = el("a", { download: name, href: URL.createObjectURL(blob) }, document.body);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  function svgText(svg) {
    const copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", SVGNS);
    copy.querySelectorAll("[data-hidden='1']").forEach((n) => n.remove());
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy);
  }
  function svgToPng(text, width, height, done) {
    const img = new Image();
    img.onload = () => {
      const c = el("canvas", { width: width * 2, height: height * 2 });
      const g = c.getContext("2d");
      g.fillStyle = "#fff"; g.fillRect(0, 0, c.width, c.height);
      g.drawImage(img, 0, 0, c.width, c.height);
      c.toBlob(done, "image/png");
    };
    img.src = "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(text)));
  }
  // `figure` returns {svg: string, width, height} when asked.
  // `name` (a string, or a function for figures whose content changes) is the file name without extension.
  function exportBar(parent, name, figure) {
    const base = typeof name === "function" ? name : () => name;
    const bar = el("div", { class: "bar" }, parent);
    const svgButton = el("button", { class: "export-svg" }, bar, "SVG");
    const pngButton = el("button", { class: "export-png" }, bar, "PNG");
    svgButton.onclick = () => download(base() + ".svg", new Blob([figure().svg], { type: "image/svg+xml" }));
    pngButton.onclick = () => {
      const f = figure();
      svgToPng(f.svg, f.width, f.height, (blob) => download(base() + ".png", blob));
    };
    return bar;
  }
  function svgFigure(svg) {
    return () => ({ svg: svgText(svg), width: +svg.getAttribute("width"), height: +svg.getAttribute("height") });
  }

  // ---- heatmap: L x H cells, colour bar marked at the uniform baseline ------------------------------
  function heatmap(parent, title, stats, name, opts = {}) {
    const fig = el("div", { class: "figure heatmap", "data-name": name }, parent);
    el("div", { class: "title" }, fig, title);
    const cw = 26, ch = 20, left = 58, top = 26;
    const width = left + H * cw + 150, height = top + L * ch + 30;
    const svg = el("svg:svg", { width, height, "font-family": "sans-serif", "font-size": 11 });
    const values = stats.mean;
    const baseline = opts.baseline !== undefined ? opts.baseline : stats.baseline_overall;
    // Layers with baselines of their own (sliding-window layers): each row is white at its layer's.
    const base = opts.baseline === undefined && stats.baseline ? layerBaselines(stats) : [];
    const own = baselinesDiffer(base);
    const d = opts.domain || domain(own ? values.concat(base) : values, baseline);
    el("svg:text", { x: left + (H * cw) / 2, y: 12, "text-anchor": "middle" }, svg, "head (0-indexed)");
    el("svg:text", { x: 12, y: top + (L * ch) / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${top + (L * ch) / 2})` }, svg, "layer (0-indexed)");
    for (let h = 0; h < H; ++h) el("svg:text", { x: left + h * cw + cw / 2, y: top - 3, "text-anchor": "middle" }, svg, h);
    for (let l = 0; l < L; ++l) el("svg:text", { x: left - 5, y: top + l * ch + ch / 2 + 4, "text-anchor": "end" }, svg, l);
    for (let l = 0; l < L; ++l)
      for (let h = 0; h < H; ++h) {
        const k = l * H + h, v = values[k];
        const r = el("svg:rect", { class: "cell", x: left + h * cw, y: top + l * ch, width: cw - 1, height: ch - 1,
          fill: v === null ? DATA.palette.undefined : divergingColour(position(v, d.lo, own && base[l] !== null ? base[l] : d.baseline, d.hi)),
          "data-layer": l, "data-head": h, "data-mean": v === null ? "" : v }, svg);
        r.addEventListener("mousemove", (evt) => showTip(evt, opts.tip ? opts.tip(k) : cellTip(stats, l, h)));
        r.addEventListener("mouseleave", hideTip);
        if (opts.marks && opts.marks[k]) {  // a significant head: a dot in the cell
          r.setAttribute("data-significant", "1");
          el("svg:circle", { class: "significant", cx: left + h * cw + cw / 2 - 0.5, cy: top + l * ch + ch / 2 - 0.5, r: 3.5,
            fill: "#111", "pointer-events": "none" }, svg);
        }
      }
    // colour bar
    const bx = left + H * cw + 16, by = top, bh = L * ch;
    const steps = 40;
    for (let i = 0; i < steps; ++i) {
      const v = d.hi - (i + 0.5) / steps * (d.hi - d.lo);
      el("svg:rect", { x: bx, y: by + (i * bh) / steps, width: 14, height: bh / steps + 0.5, fill: divergingColour(position(v, d.lo, d.baseline, d.hi)) }, svg);
    }
    const yOf = (v) => by + (d.hi === d.lo ? bh / 2 : ((d.hi - v) / (d.hi - d.lo)) * bh);
    el("svg:text", { x: bx + 18, y: by + 8 }, svg, fmtScale(d.hi));
    el("svg:text", { x: bx + 18, y: by + bh }, svg, fmtScale(d.lo));
    el("svg:line", { x1: bx - 3, x2: bx + 17, y1: yOf(d.baseline), y2: yOf(d.baseline), stroke: "#000", "stroke-width": 2, class: "baseline-mark" }, svg);
    const yb = Math.min(by + bh - 14, Math.max(by + 20, yOf(d.baseline) + 4));  // clear of the hi / lo labels
    el("svg:text", { x: bx + 18, y: yb, "font-weight": "bold" }, svg, opts.baselineLabel || "baseline " + fmtScale(d.baseline));
    if (own) el("svg:text", { x: bx - 3, y: by + bh + 16 }, svg, "white: each layer's own");  // below the bar
    fig.appendChild(svg);
    exportBar(fig, name, svgFigure(svg));
    return fig;
  }
  function cellTip(stats, l, h) {
    const k = l * H + h;
    if (stats.count && !stats.count[k]) return `layer ${l}, head ${h} (0-indexed)\nundefined: no example has a score for this head`;
    return `layer ${l}, head ${h} (0-indexed)\nmean ${fmt(stats.mean[k])}\n95% CI [${fmt(stats.ci_low[k])}, ${fmt(stats.ci_high[k])}]\n` +
      `n ${stats.count[k] === null ? 0 : stats.count[k]}\nbaseline ${fmt(stats.baseline[k])}\nlift ${fmt(stats.lift[k], 2)}`;
  }

  // Each layer's mean baseline over its heads (null where none is defined), and whether they differ.
  function layerBaselines(stats) {
    const out = [];
    for (let l = 0; l < L; ++l) {
      let s = 0, n = 0;
      for (let h = 0; h < H; ++h) {
        const b = stats.baseline[l * H + h];
        if (b !== null) { s += b; ++n; }
      }
      out.push(n ? s / n : null);
    }
    return out;
  }
  function baselinesDiffer(base) {
    const defined = base.filter((b) => b !== null);
    if (!defined.length) return false;
    const lo = Math.min(...defined), hi = Math.max(...defined);
    return hi > lo + 1e-6 * Math.max(1, Math.abs(hi));
  }

  // ---- per-layer view (Clark et al. 2019): one point per head, the layer mean drawn through them ----
  function perLayer(parent, title, stats, name, baselineLabel = "uniform baseline") {
    const fig = el("div", { class: "figure perlayer", "data-name": name }, parent);
    el("div", { class: "title" }, fig, title);
    // 48 px a layer, at most 1040 in all (a 30-layer decoder fits the page): the heads' spread and the layer
    // labels thin out with the space a layer gets
    const left = 56, top = 14, pw = Math.max(220, Math.min(L * 48, 1040)), ph = 190, width = left + pw + 20, height = top + ph + 40;
    const spread = Math.min(24, 0.7 * pw / L), labelEvery = Math.ceil(20 / (pw / L));
    const svg = el("svg:svg", { width, height, "font-family": "sans-serif", "font-size": 11 });
    const base = layerBaselines(stats);
    const own = baselinesDiffer(base);
    const d = domain(stats.mean.concat(base), stats.baseline_overall);  // the axis spans every baseline drawn
    const x = (l) => left + ((l + 0.5) / L) * pw;
    const y = (v) => top + (d.hi === d.lo ? ph / 2 : ((d.hi - v) / (d.hi - d.lo)) * ph);
    el("svg:line", { x1: left, x2: left, y1: top, y2: top + ph, stroke: "#444" }, svg);
    el("svg:line", { x1: left, x2: left + pw, y1: top + ph, y2: top + ph, stroke: "#444" }, svg);
    for (const v of [d.lo, d.hi]) el("svg:text", { x: left - 4, y: y(v) + 4, "text-anchor": "end" }, svg, fmt(v, 3));
    el("svg:text", { x: 12, y: top + ph / 2, "text-anchor": "middle", transform: `rotate(-90 12 ${top + ph / 2})` }, svg, "mean score");
    if (!own) {
      el("svg:line", { x1: left, x2: left + pw, y1: y(d.baseline), y2: y(d.baseline), stroke: "#888", "stroke-dasharray": "4 3" }, svg);
      el("svg:text", { x: left + pw, y: y(d.baseline) - 3, "text-anchor": "end", fill: "#666" }, svg, baselineLabel);
    } else {  // a dashed step per layer at its own baseline (sliding-window layers see fewer keys)
      base.forEach((b, l) => {
        if (b === null) return;
        el("svg:line", { class: "layer-baseline", "data-layer": l, "data-value": b, x1: x(l - 0.5), x2: x(l + 0.5), y1: y(b), y2: y(b),
          stroke: "#888", "stroke-dasharray": "4 3" }, svg);
      });
      el("svg:text", { x: left + pw, y: top + 10, "text-anchor": "end", fill: "#666" }, svg, baselineLabel + ": each layer's own");
    }
    const means = [];
    for (let l = 0; l < L; ++l) {
      if (l % labelEvery === 0) el("svg:text", { x: x(l), y: top + ph + 14, "text-anchor": "middle" }, svg, l);
      let s = 0, n = 0;
      for (let h = 0; h < H; ++h) {
        const v = stats.mean[l * H + h];
        if (v === null) continue;
        s += v; ++n;
        const c = el("svg:circle", { class: "point", cx: x(l) + ((h - (H - 1) / 2) / H) * spread, cy: y(v), r: 3, fill: headColour(h), "fill-opacity": 0.8, "data-layer": l, "data-head": h }, svg);
        c.addEventListener("mousemove", (evt) => showTip(evt, cellTip(stats, l, h)));
        c.addEventListener("mouseleave", hideTip);
      }
      means.push(n ? [x(l), y(s / n)] : null);
    }
    const pts = means.filter((p) => p).map((p) => p.join(",")).join(" ");
    el("svg:polyline", { points: pts, fill: "none", stroke: "#111", "stroke-width": 2, class: "layer-mean" }, svg);
    el("svg:text", { x: left + pw / 2, y: top + ph + 30, "text-anchor": "middle" }, svg, "layer (0-indexed); points: heads, line: layer mean");
    fig.appendChild(svg);
    exportBar(fig, name, svgFigure(svg));
    return fig;
  }

  // ---- head view (BertViz style) ---------------------------------------------------------------------
  const FILTERS = { "All": () => true, "A->A": (q, k) => q === 0 && k === 0, "A->B": (q, k) => q === 0 && k === 1,
                    "B->A": (q, k) => q === 1 && k === 0, "B->B": (q, k) => q === 1 && k === 1 };
  function headView(parent, ex, initial, name) {
    const fig = el("div", { class: "figure headview", "data-example": ex.id, "data-name": name }, parent);
    if (!ex.attention) { el("div", { class: "note" }, fig, "No attention stored for this example."); return fig; }
    const n = ex.tokens.length, maps = exampleMaps(ex);
    const layers = ex.layers, heads = ex.heads;
    const map0 = initial.map && maps.available[initial.map] ? initial.map : "weights";
    // Long sequences: start at the weight that keeps about 4 lines per token of the first map shown.
    function defaultThreshold() {
      if (n <= 128) return 0.01;
      const w = Array.from(maps.get(map0, initial.layer, initial.heads[0])).sort((a, b) => b - a);
      return Math.max(1 / 255, w[Math.min(w.length - 1, 4 * n)]);
    }
    const state = { layer: initial.layer, heads: new Set(initial.heads), filter: "All", pinned: null, hover: null,
                    threshold: defaultThreshold(), map: map0 };
    const group = uid();
    const controls = el("div", { class: "controls" }, fig);
    // What is drawn: the weights, the norm-weighted map (files with value norms), a layer map (files with
    // it); the layer maps exist for every model layer, the others for the stored ones.
    const choices = ["weights", "norm", ...Object.keys(LAYER_MAPS)].filter((m) => maps.available[m]);
    if (choices.length > 1) {
      const box = el("span", { class: "maps" }, controls);
      el("span", {}, box, "map ");
      choices.forEach((m) => {
        const lab = el("label", {}, box);
        const r = el("input", { type: "radio", name: `map-${group}`, value: m, class: "map" }, lab);
        r.checked = m === state.map;
        lab.appendChild(document.createTextNode(MAP_NAMES[m] + " "));
        r.onchange = () => { state.map = m; fillLayers(); draw(); };
      });
      el("br", {}, controls);
    }
    el("span", {}, controls, "layer ");
    const select = el("select", { class: "layer-select" }, controls);
    function fillLayers() {
      const list = isLayerMap(state.map) ? Array.from({ length: maps.modelLayers }, (_, l) => l) : layers;
      if (!list.includes(state.layer)) state.layer = list[0];
      while (select.firstChild) select.removeChild(select.firstChild);
      list.forEach((l) => { const o = el("option", { value: l }, select, String(l)); if (l === state.layer) o.selected = true; });
    }
    fillLayers();
    el("span", {}, controls, "  heads ");
    const strip = el("span", { class: "strip" }, controls);
    heads.forEach((h) => {
      const s = el("span", { "data-head": h, title: `head ${h}` }, strip, String(h));
      s.style.background = headColour(h);
    });
    el("span", {}, controls, "  ");
    const filterBox = el("span", { class: "filters" }, controls);
    Object.keys(FILTERS).forEach((f) => {
      const lab = el("label", {}, filterBox);
      const r = el("input", { type: "radio", name: `filter-${group}`, value: f, class: "filter" }, lab);
      if (f === "All") r.checked = true;
      lab.appendChild(document.createTextNode(f + " "));
      r.onchange = () => { state.filter = f; draw(); };
    });
    el("span", {}, controls, " min value ");
    const slider = el("input", { type: "range", min: 0, max: 0.5, step: "any", value: state.threshold, class: "threshold" }, controls);
    const thLabel = el("span", { class: "threshold-value" }, controls, fmt(state.threshold, 3));
    const info = el("div", { class: "muted selection" }, fig, "");
    notVisibleLegend(fig, " (the keys a selected query cannot see; such keys have no line)");
    const scroll = el("div", { class: "scroll" }, fig);
    const shown = ex.readable || ex.tokens;  // as a person reads them: "Ġst" -> "▁st"; raw in the tooltip
    const rowH = 16, colW = Math.max(90, 8 * Math.max(...shown.map((t) => t.length)) + 12), gap = 170;
    const width = colW * 2 + gap + 20, height = n * rowH + 30;
    const svg = el("svg:svg", { width, height, "font-family": "monospace", "font-size": 12, class: "headview-svg" }, scroll);
    const caption = el("svg:text", { x: 4, y: 12, "font-family": "sans-serif", fill: "#444" }, svg, "");
    const masksG = el("svg:g", { class: "not-visible-keys" }, svg);  // behind the tokens: keys the selected query cannot see
    const linesG = el("svg:g", { class: "lines" }, svg);
    const arcsG = el("svg:g", { class: "gold-arcs" }, svg);  // the syntax section's gold arcs, dashed
    const xl = 6 + colW, xr = xl + gap;
    const leftTokens = [], rightTokens = [];
    shown.forEach((t, i) => {
      const yy = 28 + i * rowH;
      const style = { "font-weight": ex.special[i] ? "bold" : "normal", fill: ex.special[i] ? DATA.palette.special : (ex.segment[i] ? DATA.palette.sentence_b : DATA.palette.sentence_a) };
      const a = el("svg:text", Object.assign({ x: xl - 4, y: yy, "text-anchor": "end", class: "token left" + (ex.special[i] ? " special" : ""), "data-index": i, "data-segment": ex.segment[i] }, style), svg, t);
      const b = el("svg:text", Object.assign({ x: xr + 4, y: yy, class: "token right" + (ex.special[i] ? " special" : ""), "data-index": i, "data-segment": ex.segment[i], "data-fill": style.fill }, style), svg, t);
      a.addEventListener("mouseenter", () => { state.hover = i; draw(); });
      a.addEventListener("mouseleave", () => { state.hover = null; draw(); });
      a.addEventListener("click", () => { state.pinned = state.pinned === i ? null : i; draw(); });
      if (t !== ex.tokens[i]) [a, b].forEach((e) => el("svg:title", {}, e, "vocabulary token " + JSON.stringify(ex.tokens[i])));
      leftTokens.push(a); rightTokens.push(b);
    });
    (initial.arcs || []).forEach(([from, to]) => from.forEach((q) => to.forEach((k) =>
      el("svg:line", { class: "gold-arc", x1: xl, y1: 24 + q * rowH, x2: xr, y2: 24 + k * rowH, stroke: "#000",
        "stroke-width": 1.5, "stroke-dasharray": "5 3", "data-q": q, "data-k": k }, arcsG))));
    function selectedToken() { return state.hover !== null ? state.hover : state.pinned; }
    function draw() {
      while (linesG.firstChild) linesG.removeChild(linesG.firstChild);
      const li = layers.indexOf(state.layer), q0 = selectedToken(), keep = FILTERS[state.filter];
      const layerMap = isLayerMap(state.map);
      strip.querySelectorAll("span").forEach((s) => { const on = state.heads.has(+s.dataset.head); s.className = on ? "on" : "off"; });
      strip.classList.toggle("disabled", layerMap);  // a layer map is every head of the layer at once
      leftTokens.forEach((t, i) => t.setAttribute("text-decoration", i === q0 ? "underline" : "none"));
      // The keys the selected query cannot see in this layer (a decoder's later tokens, those outside a window):
      // gray, on a gray band; a layer map spans layers, so it marks none.
      while (masksG.firstChild) masksG.removeChild(masksG.firstChild);
      rightTokens.forEach((t, k) => {
        const hidden = q0 !== null && !layerMap && !sees(state.layer, q0, k);
        t.setAttribute("fill", hidden ? "#777" : t.dataset.fill);
        t.classList.toggle("not-visible", hidden);
        if (hidden) el("svg:rect", { x: xr, y: 28 + k * rowH - 12, width: colW, height: rowH - 1, fill: NOT_VISIBLE,
          class: "not-visible-key", "data-k": k }, masksG);
      });
      let count = 0;
      for (const h of layerMap ? [null] : state.heads) {
        if (h !== null && heads.indexOf(h) < 0) continue;
        const m = maps.get(state.map, state.layer, h), colour = h === null ? LAYER_MAP_COLOUR : headColour(h);
        let strongest = 0;  // lines are as opaque as their value relative to the map's strongest
        for (let i = 0; i < n * n; ++i) strongest = Math.max(strongest, m[i]);
        const scale = strongest > 0 ? 1 / strongest : 1;
        for (let q = 0; q < n; ++q) {
          if (q0 !== null && q !== q0) continue;
          for (let k = 0; k < n; ++k) {
            if (!keep(ex.segment[q], ex.segment[k])) continue;
            const w = m[q * n + k];
            if (w < state.threshold || w === 0) continue;
            el("svg:line", { class: "att", x1: xl, y1: 24 + q * rowH, x2: xr, y2: 24 + k * rowH, stroke: colour,
              "stroke-opacity": Math.min(1, w * scale * (q0 !== null ? 1.5 : 1)), "stroke-width": 2,
              "data-q": q, "data-k": k, "data-layer": state.layer, "data-head": h === null ? "all" : h, "data-map": state.map,
              "data-w": w.toFixed(4) }, linesG);
            ++count;
          }
        }
      }
      const heading = layerMap ? `${LAYER_MAPS[state.map].heading(state.layer)}, ${state.filter}`
        : `layer ${state.layer}, head${state.heads.size === 1 ? "" : "s"} ${[...state.heads].join(", ")} (0-indexed)` +
          `${state.map === "norm" ? ", norm-weighted" : ""}, ${state.filter}`;
      caption.textContent = heading;
      info.textContent = `${count} lines with ${state.map === "weights" ? "weight" : MAP_NAMES[state.map] + " value"} >= ${fmt(state.threshold, 3)}` +
        (q0 !== null ? `; token ${q0} '${shown[q0]}' selected (${state.pinned !== null ? "click it again to release" : "click to keep"})` : "; hover or click a token on the left to see only its lines");
      fig.dataset.layer = state.layer;
      fig.dataset.heads = layerMap ? "" : [...state.heads].join(",");
      fig.dataset.map = state.map;
    }
    select.onchange = () => { state.layer = +select.value; draw(); };
    strip.querySelectorAll("span").forEach((s) => s.addEventListener("click", () => {
      const h = +s.dataset.head;
      if (state.heads.has(h)) state.heads.delete(h); else state.heads.add(h);
      draw();
    }));
    slider.oninput = () => { state.threshold = +slider.value; thLabel.textContent = fmt(state.threshold, 3); draw(); };
    draw();
    exportBar(fig, () => (isLayerMap(state.map) ? `${name}-L${state.layer}-${state.map}`
      : `${name}-L${state.layer}-H${[...state.heads].join("_")}${state.map === "norm" ? "-norm" : ""}`), svgFigure(svg));
    return fig;
  }

  // ---- model view: the L x H grid of one example's attention maps, and its layer maps per layer ------
  // One map on a canvas of at most 152 x 152 pixels (two per screen pixel); a longer pair is max-pooled
  // so that no strong value disappears, and each map is scaled to its own strongest value.
  // `visible(q, k)` (optional): false where the attention is a structural 0, painted NOT_VISIBLE; a pooled
  // pixel is NOT_VISIBLE only where no query of it sees any key of it.
  function paintMap(c, m, n, visible) {
    const side = +c.getAttribute("width"), g = c.getContext("2d"), img = g.createImageData(side, side);
    const rgb = hexToRgb(DATA.palette.diverging[DATA.palette.diverging.length - 1]), gray = hexToRgb(NOT_VISIBLE);
    let strongest = 1 / 255;
    for (let i = 0; i < n * n; ++i) strongest = Math.max(strongest, m[i]);
    for (let r = 0; r < side; ++r)
      for (let col = 0; col < side; ++col) {
        let w = 0, seen = !visible;
        for (let q = Math.floor((r * n) / side); q < Math.floor(((r + 1) * n) / side); ++q)
          for (let k = Math.floor((col * n) / side); k < Math.floor(((col + 1) * n) / side); ++k) {
            w = Math.max(w, m[q * n + k]);
            seen = seen || visible(q, k);
          }
        const t = Math.sqrt(w / strongest), i = r * side + col;  // sqrt: small values stay visible
        const px = seen ? rgb.map((v) => Math.round(255 + (v - 255) * t)) : gray;
        img.data[4 * i] = px[0];
        img.data[4 * i + 1] = px[1];
        img.data[4 * i + 2] = px[2];
        img.data[4 * i + 3] = 255;
      }
    g.putImageData(img, 0, 0);
  }
  // The colour scale of the model view's maps (paintMap): white at 0, the darkest colour at each map's
  // own strongest value, square root between; the same for weights, norm-weighted maps and rollout.
  function mapLegend(parent) {
    const box = el("div", { class: "map-legend muted" }, parent);
    const svg = el("svg:svg", { width: 120, height: 12 }, box);
    const rgb = hexToRgb(DATA.palette.diverging[DATA.palette.diverging.length - 1]);
    for (let i = 0; i < 24; ++i) {
      const t = Math.sqrt((i + 0.5) / 24), c = rgb.map((v) => Math.round(255 + (v - 255) * t));
      el("svg:rect", { x: i * 5, y: 0, width: 5, height: 12, fill: `rgb(${c.join(",")})` }, svg);
    }
    box.appendChild(document.createTextNode(" 0 to the map's strongest value (each map its own scale; square root, so small values stay visible)"));
  }
  function modelView(parent, ex, onPick) {
    const fig = el("div", { class: "figure modelview", "data-example": ex.id, "data-map": "weights" }, parent);
    if (!ex.attention) { el("div", { class: "note" }, fig, "No attention stored for this example."); return fig; }
    const n = ex.tokens.length, maps = exampleMaps(ex), layers = ex.layers, heads = ex.heads, m = Math.min(n, 152);
    let current = "weights";
    if (maps.available.norm) {
      const box = el("div", { class: "controls maps" }, fig), group = uid();
      el("span", {}, box, "map ");
      ["weights", "norm"].forEach((k) => {
        const lab = el("label", {}, box);
        const r = el("input", { type: "radio", name: `map-${group}`, value: k, class: "map" }, lab);
        r.checked = k === current;
        lab.appendChild(document.createTextNode(MAP_NAMES[k] + " "));
        r.onchange = () => { current = k; fig.dataset.map = k; paintGrid(); };
      });
    }
    mapLegend(fig);
    notVisibleLegend(fig);
    const grid = el("div", { class: "grid" }, fig);
    grid.style.gridTemplateColumns = `repeat(${heads.length + 1}, 78px)`;
    el("div", {}, grid, "");
    heads.forEach((h) => el("div", { class: "cell-label" }, grid, "head " + h));
    const canvases = [];
    layers.forEach((l, li) => {
      el("div", { class: "cell-label" }, grid, "layer " + l);
      heads.forEach((h, hi) => {
        const c = el("canvas", { width: m, height: m, class: "head-map", "data-layer": l, "data-head": h }, grid);
        c.addEventListener("click", () => onPick && onPick(l, h, current));
        canvases.push({ c, l, h, li, hi });
      });
    });
    function paintGrid() {
      for (const { c, l, h } of canvases) {
        paintMap(c, maps.get(current, l, h), n, RANGES ? (q, k) => sees(l, q, k) : null);
        c.title = `layer ${l}, head ${h}, ${MAP_NAMES[current]}: rows attend (query), columns attended (key)` +
          (RANGES ? `; gray: ${NOT_VISIBLE_TEXT}` : "");
      }
    }
    paintGrid();
    const rolled = [];  // one row per layer map the file stores: {name, cells: [{c, l}]}
    Object.keys(LAYER_MAPS).filter((k) => maps.available[k]).forEach((k) => {
      el("div", { class: "muted" }, fig, `${LAYER_MAPS[k].text}; every model layer. Click a map to show it above.`);
      const row = el("div", { class: `grid layer-map-grid ${k.replace(/_/g, "-")}-grid` }, fig);
      row.style.gridTemplateColumns = `repeat(${maps.modelLayers + 1}, 78px)`;
      el("div", {}, row, "");
      for (let l = 0; l < maps.modelLayers; ++l) el("div", { class: "cell-label" }, row, "layer " + l);
      el("div", { class: "cell-label" }, row, MAP_NAMES[k]);
      const cells = [];
      for (let l = 0; l < maps.modelLayers; ++l) {
        const c = el("canvas", { width: m, height: m, class: `layer-map ${k.replace(/_/g, "-")}-map`, "data-layer": l, "data-map": k,
          title: `${MAP_NAMES[k]} of layer ${l}: rows receive (query), columns give (key)` }, row);
        paintMap(c, maps.get(k, l), n);
        c.addEventListener("click", () => onPick && onPick(l, heads[0], k));
        cells.push({ c, l });
      }
      rolled.push({ name: k, cells });
    });
    const size = 76, pad = 40;
    const figure = () => {
      const rows = layers.length + rolled.length;
      const width = pad + Math.max(heads.length, maps.modelLayers) * (size + 4), height = pad + rows * (size + 4) + rolled.length * 14;
      let s = `<svg xmlns="${SVGNS}" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" font-family="sans-serif" font-size="10">`;
      const image = (c, x, y) => `<image x="${x}" y="${y}" width="${size}" height="${size}" preserveAspectRatio="none" style="image-rendering:pixelated" href="${c.toDataURL("image/png")}"/>`;
      heads.forEach((h, hi) => { s += `<text x="${pad + hi * (size + 4) + size / 2}" y="14" text-anchor="middle">head ${h}</text>`; });
      layers.forEach((l, li) => { s += `<text x="2" y="${pad + li * (size + 4) + size / 2}">layer ${l}</text>`; });
      for (const { c, li, hi } of canvases) s += image(c, pad + hi * (size + 4), pad + li * (size + 4));
      rolled.forEach(({ name, cells }, r) => {
        const y0 = pad + (layers.length + r) * (size + 4) + 14 * (r + 1);
        s += `<text x="2" y="${y0 + size / 2}">${MAP_NAMES[name]}</text>`;
        for (const { c, l } of cells) {
          s += `<text x="${pad + l * (size + 4) + size / 2}" y="${y0 - 3}" text-anchor="middle">layer ${l}</text>`;
          s += image(c, pad + l * (size + 4), y0);
        }
      });
      return { svg: '<?xml version="1.0" encoding="UTF-8"?>\n' + s + "</svg>", width, height };
    };
    exportBar(fig, () => `modelview-example-${safe(ex.id)}${current === "norm" ? "-norm" : ""}`, figure);
    return fig;
  }

  // ---- page sections --------------------------------------------------------------------------------
  const main = document.getElementById("content");
  function section(id, title) {
    const s = el("section", { id }, main);
    el("h2", {}, s, title);
    return s;
  }
  // The sentence pair; a long one folds to its first 200 characters (click to read it all).
  function pairText(parent, ex) {
    for (const [tag, text] of [["A", ex.sentence_a], ["B", ex.sentence_b]]) {
      if (tag === "B" && text === "" && !ex.segment.includes(1)) continue;  // a single-sentence example
      const line = el("div", { class: "pair" }, parent);
      el("b", {}, line, tag);
      if (text.length <= 300) { line.appendChild(document.createTextNode(text)); continue; }
      const d = el("details", {}, line);
      el("summary", {}, d, text.slice(0, 200) + ` ... (${text.length} characters)`);
      d.appendChild(document.createTextNode(text));
    }
  }

  // Why a view lacks the norm-weighted switch or a layer map: the options that store what they need.
  function mapNotes(parent) {
    if (DATA.counts.with_attention === 0) return;
    const missing = [];
    if (!DATA.stored.value_norms) missing.push("no norm-weighted switch: the file stores no value norms (output.value_norms: true)");
    // (value zeroing and ALTI cost a run much more: opt-in, not asked for here)
    if (!DATA.stored.layer_maps.includes("rollout")) missing.push("no rollout view: the file stores no rollout (output.rollout: true)");
    if (missing.length) el("p", { class: "muted map-note" }, parent, missing.join("; ").replace(/^n/, "N") + ".");
  }

  function overview() {
    const s = section("overview", "Overview");
    const c = DATA.counts;
    const t = el("table", {}, s);
    const row = (k, v) => { const r = el("tr", {}, t); el("th", { class: "text" }, r, k); el("td", { class: "text" }, r, String(v)); };
    row("file", DATA.file);
    row("model", `${DATA.model.dir} (${L} layers x ${H} heads)`);
    row("dataset", DATA.dataset);
    row("pairs written", c.written);
    row("rows read / skipped", `${c.rows_read} / ${c.skipped}`);
    row("pairs truncated", c.truncated);
    row("attention stored", `${c.with_attention} of ${c.written} pairs; layers ${DATA.stored.layers.join(",")}; heads ${DATA.stored.heads.join(",")} (${DATA.stored.dtype})`);
    const stored = [DATA.stored.value_norms ? "value norms (norm-weighted maps)" : "",
                    ...DATA.stored.layer_maps.map((k) => (k === "rollout" ? "attention rollout" : MAP_NAMES[k]))].filter((x) => x);
    row("maps stored", stored.length ? stored.join(", ") : "attention weights only");
    const kind = attentionKind();
    if (kind) row("attention", `${CAUSAL ? "causal model" : "sliding-window layers"}: ${kind}`);
    row("written by", "attnscan " + DATA.tool_version);
    if (c.with_attention === 0) el("div", { class: "note" }, s, "This file holds no attention (output.attention_every: 0), so the head and model views are missing; the heatmaps come from /scores.");
    else if (c.with_attention < c.written) el("div", { class: "note" }, s, `Attention is stored for ${c.with_attention} of ${c.written} pairs (output.attention_every > 1): the views show only those; the heatmaps use every pair.`);
    mapNotes(s);
    if (RANGES) el("div", { class: "note causal-note" }, s, (CAUSAL
      ? `This model is causal${WINDOWED ? ", with sliding windows" : ""}: a query sees only itself and the tokens before it` +
        `${WINDOWED ? " (in a sliding-window layer only the last few of them)" : ""}, so every map is 0 above its diagonal by construction. `
      : "Some layers attend within a sliding window: a query sees only the keys near it there. ") +
      "The views draw those structural zeros gray, apart from the learned zeros (white); a pattern's baseline counts only the keys a query sees, and a pattern whose targets no query sees is undefined (NaN), not 0.");
    if (DATA.stored.layers.length < L || DATA.stored.heads.length < H) el("div", { class: "note" }, s, `Only layers ${DATA.stored.layers.join(",")} and heads ${DATA.stored.heads.join(",")} were stored: views of other heads are missing; the heatmaps cover all heads.`);
    el("p", { class: "muted" }, s, "Layers and heads are 0-indexed. Heatmap colours: white at the uniform-attention baseline, red above it, blue below. Hover a cell for its numbers; 95% CI: normal approximation over examples.");
    const figs = el("div", { class: "figures" }, s);
    DATA.outputs.forEach((o) => {
      const why = undefinedReason(o);
      if (why) {  // no heatmap of nothing: say why there is no number
        const fig = el("div", { class: "figure undefined-output", "data-key": o.key }, figs);
        el("div", { class: "title" }, fig, `${outputLabel(o)}: mean score`);
        el("div", { class: "note" }, fig, why[0].toUpperCase() + why.slice(1) + ".");
        return;
      }
      heatmap(figs, `${outputLabel(o)}: mean score`, o.stats, `${safe(o.detector)}-${safe(o.output)}-heatmap`);
      perLayer(figs, `${outputLabel(o)}: per layer`, o.stats, `${safe(o.detector)}-${safe(o.output)}-per-layer`,
        isImportance(o) ? "no effect (0)" : undefined);
    });
    el("h3", {}, s, "Configuration of the run");
    el("pre", { class: "config" }, s, DATA.config);
  }

  function patternSection(o, idx) {
    const s = section("pattern-" + idx, `${isImportance(o) ? "Importance" : "Pattern"}: ${outputLabel(o)}`);
    s.classList.add("pattern");
    s.dataset.key = o.key;
    s.dataset.map = o.map;
    if (isImportance(o)) el("p", {}, s, `${o.output} importance: the ${o.description} (importance.* of the run: ${o.parameters}). ` +
      "The examples below are those where the head matters most.");
    else el("p", {}, s, `${o.description} (detector ${o.detector} ${o.version}${o.parameters ? ", " + o.parameters : ""}; ` +
      `scored on the ${{ weights: "attention weights", norm: "norm-weighted attention (map: norm)", rollout: "attention rollout of each layer (map: rollout)",
                         value_zeroing: "value zeroing of each layer (map: value_zeroing)", alti: "ALTI of each layer (map: alti)",
                         alti_rollout: "ALTI rolled out up to each layer (map: alti_rollout)" }[o.map] || o.map + " map"})`);
    const why = undefinedReason(o);
    if (why) {
      el("div", { class: "note undefined-output", "data-key": o.key }, s, `${o.key}: ${why}. No head has a mean, so there are no top heads and no head views.`);
      return;
    }
    const t = el("table", { class: "top-heads" }, s);
    const hr = el("tr", {}, t);
    ["rank", "layer-head", "mean", "95% CI", "n", "baseline", "lift"].forEach((h) => el("th", {}, hr, h));
    o.top.forEach((h) => {
      const k = h.layer * H + h.head, st = o.stats, r = el("tr", {}, t);
      [h.rank, `${h.layer}-${h.head}`, fmt(st.mean[k]), `[${fmt(st.ci_low[k])}, ${fmt(st.ci_high[k])}]`, st.count[k], fmt(st.baseline[k]), fmt(st.lift[k], 2)]
        .forEach((v) => el("td", {}, r, String(v)));
    });
    o.top.forEach((h) => {
      el("h3", {}, s, `Head ${h.layer}-${h.head} (layer ${h.layer}, head ${h.head}): the examples that show it most`);
      if (!h.stored) { el("div", { class: "note" }, s, `Layer ${h.layer} / head ${h.head} was not stored (output.layers / output.heads), so there is no view of it.`); return; }
      if (!h.examples.length) {
        el("div", { class: "note" }, s, DATA.counts.with_attention === 0
          ? "This file stores no attention (output.attention_every: 0), so there is no head view; the table comes from /scores."
          : "No example with stored attention has a defined score for this head.");
        return;
      }
      h.examples.forEach((e) => {
        const ex = DATA.examples[e.position];
        el("div", { class: "muted" }, s, `example ${ex.id} (score ${fmt(e.score)}${ex.label ? ", label " + ex.label : ""})`);
        pairText(s, ex);
        headView(s, ex, { layer: h.layer, heads: [h.head], map: o.map }, `headview-${safe(o.detector)}-${safe(o.output)}-example-${safe(ex.id)}`);
      });
    });
  }

  function labelSection() {
    const lab = DATA.labels;
    const s = section("labels", "Label groups");
    if (lab.note) { el("div", { class: "note" }, s, lab.note); return; }
    el("p", {}, s, "Groups: " + lab.groups.map((g) => `${g.name} (${g.size} pairs)`).join(", ") +
      (lab.difference ? `. Difference heatmaps: mean of ${lab.difference[0]} minus mean of ${lab.difference[1]} (white = no difference).` : ""));
    DATA.outputs.forEach((o) => {
      el("h3", {}, s, outputLabel(o));
      const why = undefinedReason(o);
      if (why) { el("div", { class: "note undefined-output", "data-key": o.key }, s, why[0].toUpperCase() + why.slice(1) + "."); return; }
      const figs = el("div", { class: "figures" }, s);
      // One colour scale for every group of the output, so the groups can be compared by eye.
      const shared = domain(o.groups.flatMap((g) => g.stats.mean), o.stats.baseline_overall);
      o.groups.forEach((g) => heatmap(figs, `label = ${g.name}`, g.stats, `${safe(o.detector)}-${safe(o.output)}-label-${safe(g.name)}-heatmap`,
        { domain: shared }));
      if (lab.difference) {
        const A = o.groups.find((g) => g.name === lab.difference[0]).stats, B = o.groups.find((g) => g.name === lab.difference[1]).stats;
        const diff = A.mean.map((a, k) => (a === null || B.mean[k] === null ? null : a - B.mean[k]));
        const t = lab.tests ? lab.tests[o.key] : null;
        heatmap(figs, `${lab.difference[0]} minus ${lab.difference[1]}${t ? " (dot: BH q < 0.05)" : ""}`, { mean: diff },
          `${safe(o.detector)}-${safe(o.output)}-difference-heatmap`, {
          baseline: 0, baselineLabel: "no difference", marks: t ? t.q.map((q) => q !== null && q < 0.05) : null,
          tip: (k) => `layer ${Math.floor(k / H)}, head ${k % H} (0-indexed)\n${lab.difference[0]}: ${fmt(A.mean[k])} (n ${A.count[k]})\n${lab.difference[1]}: ${fmt(B.mean[k])} (n ${B.count[k]})\ndifference ${fmt(diff[k])}` +
            (t ? `\nWelch p ${fmtP(t.p[k])}, q ${fmtP(t.q[k])}` : "") });
      }
    });
  }

  function modelSection() {
    const s = section("model-view", "Model view");
    const pos = DATA.model_view_example;
    if (pos === null) { el("div", { class: "note" }, s, "No example of this file has stored attention, so there is no model view."); return; }
    const ex = DATA.examples[pos];
    el("p", { class: "muted" }, s, `Every stored layer (rows) and head (columns) of example ${ex.id}; rows of each map attend (query), columns are attended (key). Click a map to show that head above.`);
    mapNotes(s);
    pairText(s, ex);
    const hv = el("div", {}, s);
    const first = { layer: ex.layers[0], heads: [ex.heads[0]] };
    let current = headView(hv, ex, first, `headview-example-${safe(ex.id)}`);
    modelView(s, ex, (l, h, map) => { current.remove(); current = headView(hv, ex, { layer: l, heads: [h], map }, `headview-example-${safe(ex.id)}`); });
  }

  function comparisonSection() {
    const c = DATA.comparison;
    if (!c) return;
    const s = section("comparison", "Comparison with another run");
    el("p", {}, s, `A = ${c.a}; B = ${c.b}. ${c.method}. Dots: heads with BH q < 0.05.` + (c.heads_note ? " " + c.heads_note : ""));
    const figs = el("div", { class: "figures" }, s);
    DATA.outputs.forEach((o) => {
      const t = c.tests[o.key];
      if (!t) return;
      heatmap(figs, `${outputLabel(o)}: A minus B`, { mean: t.effect }, `${safe(o.detector)}-${safe(o.output)}-compare-heatmap`, {
        baseline: 0, baselineLabel: "no difference", marks: t.q.map((q) => q !== null && q < 0.05),
        tip: (k) => `layer ${Math.floor(k / H)}, head ${k % H} (0-indexed)\nmean difference ${fmt(t.effect[k])}\n95% CI [${fmt(t.ci_low[k])}, ${fmt(t.ci_high[k])}]\npaired p ${fmtP(t.p[k])}, q ${fmtP(t.q[k])}` });
    });
  }

  function similaritySection() {
    const sim = DATA.similarity;
    if (!sim) return;
    const s = section("similarity", "Head similarity");
    el("p", {}, s, `${sim.method}; ${sim.mds_method}. One point per head, coloured by layer (Clark et al. 2019, figure 5).`);
    const fig = el("div", { class: "figure similarity" }, s);
    const width = 520, height = 420, pad = 30;
    const svg = el("svg:svg", { width, height, "font-family": "sans-serif", "font-size": 11 });
    const xs = sim.points.map((p) => p[0]), ys = sim.points.map((p) => p[1]);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const X = (x) => pad + ((x - x0) / (x1 - x0 || 1)) * (width - 2 * pad - 90), Y = (y) => pad + ((y1 - y) / (y1 - y0 || 1)) * (height - 2 * pad);
    const layers = [...new Set(sim.points.map((p) => p[2]))];
    sim.points.forEach(([x, y, l, h]) => {
      const c = el("svg:circle", { class: "head-point", cx: X(x), cy: Y(y), r: 5, fill: headColour(layers.indexOf(l)), "fill-opacity": 0.85, "data-layer": l, "data-head": h }, svg);
      c.addEventListener("mousemove", (evt) => showTip(evt, `layer ${l}, head ${h} (0-indexed)`));
      c.addEventListener("mouseleave", hideTip);
    });
    layers.forEach((l, i) => {
      el("svg:circle", { cx: width - 80, cy: pad + i * 16, r: 5, fill: headColour(i) }, svg);
      el("svg:text", { x: width - 70, y: pad + i * 16 + 4 }, svg, `layer ${l}`);
    });
    fig.appendChild(svg);
    exportBar(fig, "head-similarity-mds", svgFigure(svg));
  }

  // ---- syntax heads (Clark et al. 2019): the best head per dependency relation and direction ---------
  // The gold arcs of `relation` in an example, as [attending tokens, attended tokens] of whole words:
  // dependent -> head for dep_to_head, head -> dependent for head_to_dep (sentences kept apart).
  function goldArcs(ex, relation, direction) {
    const t = ex.tree, words = new Map(), arcs = [];
    if (!t) return arcs;
    t.word_index.forEach((w, i) => {
      if (w < 0) return;
      const key = `${ex.segment[i]}:${w}`;
      if (!words.has(key)) words.set(key, []);
      words.get(key).push(i);
    });
    for (const tokens of words.values()) {
      const i = tokens[0], rel = t.relation[i].split(":")[0];
      const head = words.get(`${ex.segment[i]}:${t.head[i]}`);
      if (rel !== relation || t.head[i] < 0 || !head) continue;
      arcs.push(direction === "head_to_dep" ? [head, tokens] : [tokens, head]);
    }
    return arcs;
  }

  function syntaxSection() {
    const syn = DATA.syntax;
    if (!syn) return;
    const s = section("syntax-heads", "Syntax heads");
    el("p", {}, s, "Clark et al. (2019): for each dependency relation and direction, the head whose most-attended word " +
      "(word-level attention: summed over the pieces of the attended word, averaged over the pieces of the attending one) " +
      "is most often the gold word: the gold head of the relation's dependent (dep_to_head), or the dependent for which " +
      "the gold head is the word attending most (head_to_dep). Accuracy over every word of the relation in the file, " +
      "against the best fixed-offset baseline (the gold word always at relative position offset, the best offset of " +
      `-5..5). Relations with at least ${syn.min_words} words (attnscan report --min-words); the same table: ` +
      "attnscan heads FILE --relations. Click a row for the head on the examples where it finds most gold words; " +
      `dashed lines: the gold arcs. The ${syn.outputs} outputs of the dependency detector appear only here; ` +
      "attnscan plot FILE --detector dependency/RELATION.DIRECTION draws the heatmap of one.");
    if (!syn.rows.length) { el("div", { class: "note" }, s, `No relation has ${syn.min_words} words in this file; lower --min-words.`); return; }
    const t = el("table", { class: "syntax-heads" }, el("div", { class: "syntax-table" }, s));
    const hr = el("tr", {}, t);
    ["relation", "direction", "words", "layer-head", "accuracy", "offset", "baseline", "difference"].forEach((h) => el("th", {}, hr, h));
    const panel = el("div", { class: "syntax-examples" }, s);
    function show(row, tr) {
      t.querySelectorAll("tr.selected").forEach((r) => r.classList.remove("selected"));
      tr.classList.add("selected");
      while (panel.firstChild) panel.removeChild(panel.firstChild);
      el("h3", {}, panel, `${row.relation} (${row.direction}): head ${row.layer}-${row.head}`);
      if (!row.examples.length) {
        el("div", { class: "note" }, panel, DATA.counts.with_attention === 0 || !DATA.stored.layers.includes(row.layer) || !DATA.stored.heads.includes(row.head)
          ? `No stored attention of layer ${row.layer}, head ${row.head} (output.layers, output.heads, output.attention_every), so there is no view of it.`
          : "No example with stored attention where this head finds a gold word of the relation.");
        return;
      }
      row.examples.forEach((e) => {
        const ex = DATA.examples[e.position], arcs = goldArcs(ex, row.relation, row.direction);
        el("div", { class: "muted" }, panel, `example ${ex.id}: the head finds ${e.correct} of the ${arcs.length} ` +
          `gold ${row.direction === "head_to_dep" ? "dependents" : "heads"} of ${row.relation}${ex.label ? "; label " + ex.label : ""}`);
        pairText(panel, ex);
        headView(panel, ex, { layer: row.layer, heads: [row.head], arcs },
          `headview-syntax-${safe(row.relation)}-${row.direction}-example-${safe(ex.id)}`);
      });
    }
    syn.rows.forEach((row, i) => {
      const tr = el("tr", { class: "syntax-row", "data-relation": row.relation, "data-direction": row.direction }, t);
      const diff = row.accuracy === null || row.baseline === null ? null : row.accuracy - row.baseline;
      [row.relation, row.direction, row.words, `${row.layer}-${row.head}`, fmt(row.accuracy, 3),
       (row.best_offset > 0 ? "+" : "") + row.best_offset, fmt(row.baseline, 3), (diff > 0 ? "+" : "") + fmt(diff, 3)]
        .forEach((v, k) => {
          const td = el("td", {}, tr, String(v));
          if (k === 7 && Math.abs(diff) >= 5e-4) td.className = diff > 0 ? "better" : "worse";  // 0.000 stays black
        });
      tr.addEventListener("click", () => show(row, tr));
      if (i === 0) show(row, tr);
    });
  }

  // ---- does the head matter? each head's pattern score against its importance (importance.*) -------
  function importanceSection() {
    const imps = DATA.outputs.filter(isImportance), patterns = DATA.outputs.filter((o) => !isImportance(o));
    if (!imps.length) return;
    const s = section("importance", "Pattern and importance");
    el("p", {}, s, "One point per head (colour: layer): its mean pattern score (x) against its mean importance over the " +
      "same file's examples (y): ablation = 1 - cos of the mean last hidden state with and without the head, gradient = " +
      "|dL/d gate| (Michel et al. 2019); docs/analyses.md. Labelled: the three strongest heads of the pattern (bold) " +
      "and the three most important heads. A pattern whose strongest heads sit at the bottom does not matter to the model here.");
    if (!patterns.length) { el("div", { class: "note" }, s, "This file has no detector outputs to set against importance (detectors: in the config)."); return; }
    const figs = el("div", { class: "figures" }, s);
    const layerColours = [...Array(L).keys()].map(headColour);
    const top = (values, k) => values.map((v, i) => [v, i]).filter(([v]) => v !== null && Number.isFinite(v))
      .sort((a, b) => b[0] - a[0]).slice(0, k).map(([, i]) => i);
    patterns.forEach((o) => imps.forEach((imp) => {
      const name = `${safe(o.detector)}-${safe(o.output)}-vs-${safe(imp.output)}-importance`;
      const fig = el("div", { class: "figure importance-scatter", "data-name": name, "data-pattern": o.key, "data-importance": imp.key }, figs);
      el("div", { class: "title" }, fig, `${outputLabel(o)} against ${imp.output} importance`);
      const width = 460, height = 340, left = 62, right = 70, topPad = 14, bottom = 40;
      const svg = el("svg:svg", { width, height, "font-family": "sans-serif", "font-size": 11 });
      const xs = o.stats.mean, ys = imp.stats.mean;
      const ok = xs.map((x, k) => x !== null && ys[k] !== null && Number.isFinite(x) && Number.isFinite(ys[k]));
      const fx = xs.filter((x, k) => ok[k]), fy = ys.filter((y, k) => ok[k]);
      const x0 = Math.min(...fx), x1 = Math.max(...fx), y0 = Math.min(0, ...fy), y1 = Math.max(...fy);
      const X = (x) => left + ((x - x0) / (x1 - x0 || 1)) * (width - left - right);
      const Y = (y) => topPad + ((y1 - y) / (y1 - y0 || 1)) * (height - topPad - bottom);
      el("svg:line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: "#888" }, svg);
      el("svg:line", { x1: left, y1: topPad, x2: left, y2: height - bottom, stroke: "#888" }, svg);
      [[x0, "start"], [x1, "end"]].forEach(([v, a]) => el("svg:text", { x: X(v), y: height - bottom + 14, "text-anchor": a }, svg, fmtScale(v)));
      [y0, y1].forEach((v) => el("svg:text", { x: left - 4, y: Y(v) + 4, "text-anchor": "end" }, svg, fmtScale(v)));
      el("svg:text", { x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle" }, svg, `${o.key}: mean score`);
      el("svg:text", { x: 12, y: (topPad + height - bottom) / 2, "text-anchor": "middle",
        transform: `rotate(-90 12 ${(topPad + height - bottom) / 2})` }, svg, `${imp.output} importance`);
      const strongest = top(xs.map((x, k) => (ok[k] ? x : null)), 3), important = top(ys.map((y, k) => (ok[k] ? y : null)), 3);
      xs.forEach((x, k) => {
        if (!ok[k]) return;
        const l = Math.floor(k / H), h = k % H;
        const c = el("svg:circle", { class: "head-point", cx: X(x), cy: Y(ys[k]), r: 4, fill: layerColours[l], "fill-opacity": 0.85,
          "data-layer": l, "data-head": h }, svg);
        c.addEventListener("mousemove", (evt) => showTip(evt, `layer ${l}, head ${h} (0-indexed)\n${o.key}: ${fmt(x)}\n${imp.key}: ${fmt(ys[k], 6)}`));
        c.addEventListener("mouseleave", hideTip);
        if (strongest.includes(k) || important.includes(k))
          el("svg:text", { class: "head-label", x: X(x) + 6, y: Y(ys[k]) - 5, "font-weight": strongest.includes(k) ? "bold" : "normal" },
            svg, `${l}-${h}`);
      });
      for (let l = 0; l < L; ++l) {
        el("svg:circle", { cx: width - right + 14, cy: topPad + 6 + l * 14, r: 4, fill: layerColours[l] }, svg);
        el("svg:text", { x: width - right + 22, y: topPad + 10 + l * 14 }, svg, `layer ${l}`);
      }
      fig.appendChild(svg);
      exportBar(fig, name, svgFigure(svg));
    }));
  }

  const nav = document.getElementById("nav");
  overview();
  DATA.outputs.forEach((o, i) => patternSection(o, i));
  importanceSection();
  labelSection();
  comparisonSection();
  similaritySection();
  syntaxSection();
  modelSection();
  main.querySelectorAll("section").forEach((s) => { const a = el("a", { href: "#" + s.id }, nav, s.querySelector("h2").textContent.replace("Pattern: ", "")); return a; });
  document.body.dataset.ready = "1";
})();
