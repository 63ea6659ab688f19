// The topic map: points (WebGL, renderer.ts), marks, stars and labels (a 2-D canvas over it), a
// tooltip, a toolbar and a topic legend. It knows nothing of Streamlit: a host (the Streamlit glue
// in index.ts, or the offline export's page) gives it a Dataset and options, answers its requests
// for titles, and hears about clicks, selections, view changes and topic choices.
//
// Every text from the corpus (titles, labels, venues) is drawn on a canvas or set with
// textContent: nothing is ever parsed as HTML.

import { Grid, insidePolygon } from "./grid";
import { Box, FONT_FAMILY, LabelPlacer, LabelRequest, Placed } from "./labels";
import { Camera, Look, PointRenderer, STYLE_REASSIGNED } from "./renderer";
import { CSS, ICONS } from "./style";
import { Dataset, Detail, FLAG_REASSIGNED, Host, MapOptions, Mark, OverlayPoint, View } from "./types";

export const DEFAULTS: MapOptions = {
  highlight: null,
  mask: null,
  marks: [],
  overlay: [],
  view: null,
  viewKey: "",
  scale: 1,
  legend: true,
  tools: true,
  select: true,
  clickable: true,
  titles: true,
  topicLabels: "all",
  pngName: "map",
  caption: "Topic map",
};

const MIN_ZOOM = 0.5;
const MAX_ZOOM = 4000;
/** At the closest zoom the closest papers (``Dataset.spacing``) are this many CSS pixels apart:
 * every paper is told apart, and zooming further would only show empty space. */
const SEPARATE_PX = 24;
/** The closest zoom when the data does not say how close its papers lie. */
const MAX_ZOOM_UNKNOWN = 64;
const SETTLE_MS = 110; // the camera has rested: draw the points again
const VIEW_MS = 450; // ... and report the view to the host
const TITLE_POINTS = 60; // paper titles appear when at most this many papers are in view
const LEGEND_MIN_WIDTH = 720; // narrower: the legend floats over the map behind a button
/** A weak label's mark as the host writes it (pipeline.model.label_evidence.WEAK_MARK). */
export const WEAK_MARK = " (?)";

type Mode = "pan" | "box" | "lasso";

interface Hover {
  row: number;
  overlay: number; // index into options.overlay, -1 for a paper
  x: number;
  y: number;
}

function rgba(hex: string, alpha = 1): number[] {
  const v = hex.replace("#", "");
  return [parseInt(v.slice(0, 2), 16) / 255, parseInt(v.slice(2, 4), 16) / 255, parseInt(v.slice(4, 6), 16) / 255, alpha];
}

function darker(hex: string, f = 0.55): string {
  const [r, g, b] = rgba(hex);
  const c = (v: number) => Math.round(v * f * 255).toString(16).padStart(2, "0");
  return `#${c(r)}${c(g)}${c(b)}`;
}

const fmt = (n: number) => n.toLocaleString("en-US");

let instances = 0;

export class AtlasMap {
  readonly el: HTMLDivElement; // .atlas
  private stage: HTMLDivElement;
  private canvas: HTMLCanvasElement;
  private overlayCanvas: HTMLCanvasElement;
  private ctx: CanvasRenderingContext2D;
  private tip: HTMLDivElement;
  private statusEl: HTMLDivElement;
  private zoomNote: HTMLDivElement;
  private zoomNoteText: HTMLSpanElement;
  private toolsEl: HTMLDivElement;
  private legendEl: HTMLDivElement;
  private legendList: HTMLUListElement;
  private legendToggle: HTMLButtonElement;
  private live: HTMLDivElement;
  private renderer: PointRenderer | null = null;
  private placer: LabelPlacer;
  private ds: Dataset | null = null;
  private gridOf: Grid | null = null;
  private bounds: [number, number, number, number] = [0, 0, 1, 1];
  opts: MapOptions = { ...DEFAULTS };
  private cam: Camera = { cx: 0, cy: 0, scale: 1 };
  private w = 0;
  private h = 0;
  private style = new Uint8Array(0);
  private shownPerTopic = new Uint32Array(0);
  private hlExtent: [number, number, number, number] | null = null; // ``extentOf`` the highlighted topic
  private nShown = 0;
  private topicIndex = new Map<number, number>(); // topic id -> index in ds.topics
  private hoverTopic: number | null = null;
  private mode: Mode = "pan";
  private details = new Map<number, Detail>();
  private asked = new Set<number>();
  private placed: Placed[] = [];
  private selection: Uint32Array | null = null;
  private lasso: number[] | null = null; // screen polygon while dragging
  private drag: { x: number; y: number; cam: Camera; moved: boolean; id: number } | null = null;
  private hover: Hover | null = null;
  private settleTimer = 0;
  private viewTimer = 0;
  private frame = 0;
  private appliedViewKey: string | null = null;
  private emitted = new Set<string>();
  private lastView: string | null = null;
  private resize: ResizeObserver;
  private floating = false;
  private legendOpen = false;
  readonly serial = ++instances;
  firstDrawnAt = 0;
  createdAt = performance.now();

  constructor(
    root: ShadowRoot | HTMLElement,
    public host: Host,
  ) {
    const style = document.createElement("style");
    style.textContent = CSS;
    root.appendChild(style);
    this.el = document.createElement("div");
    this.el.className = "atlas";
    this.el.dataset.atlasMap = String(this.serial);
    this.stage = document.createElement("div");
    this.stage.className = "stage pan";
    this.stage.tabIndex = 0;
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.overlayCanvas = document.createElement("canvas");
    this.overlayCanvas.setAttribute("aria-hidden", "true");
    this.ctx = this.overlayCanvas.getContext("2d")!;
    this.placer = new LabelPlacer(this.ctx);
    this.tip = document.createElement("div");
    this.tip.className = "tip";
    this.tip.hidden = true;
    this.statusEl = document.createElement("div");
    this.statusEl.className = "status";
    this.statusEl.textContent = "Loading the map…";
    // Said at the closest zoom, or when the view has left the papers: with the way back.
    this.zoomNote = document.createElement("div");
    this.zoomNote.className = "zoom-note";
    this.zoomNote.hidden = true;
    this.zoomNoteText = document.createElement("span");
    const back = document.createElement("button");
    back.type = "button";
    back.textContent = "Show the whole map";
    back.addEventListener("click", () => this.reset());
    this.zoomNote.append(this.zoomNoteText, back);
    this.toolsEl = document.createElement("div");
    this.toolsEl.className = "tools";
    this.toolsEl.setAttribute("role", "toolbar");
    this.live = document.createElement("div");
    this.live.className = "sr";
    this.live.setAttribute("aria-live", "polite");
    this.stage.append(this.canvas, this.overlayCanvas, this.toolsEl, this.tip, this.statusEl, this.zoomNote, this.live);
    this.legendEl = document.createElement("div");
    this.legendEl.className = "legend";
    this.legendList = document.createElement("ul");
    this.legendToggle = document.createElement("button");
    this.legendToggle.type = "button";
    this.legendToggle.className = "legend-toggle";
    this.legendToggle.innerHTML = ICONS.list; // our own constant SVG
    this.legendToggle.append(document.createTextNode(" Topics"));
    this.legendToggle.setAttribute("aria-expanded", "false");
    this.legendToggle.addEventListener("click", () => {
      this.legendOpen = !this.legendOpen;
      this.layout();
    });
    this.stage.append(this.legendToggle);
    this.el.append(this.stage, this.legendEl);
    root.appendChild(this.el);
    this.buildTools();
    this.bindEvents();
    try {
      this.renderer = new PointRenderer(this.canvas);
      this.renderer.onDrawn = () => this.drawn();
    } catch (err) {
      this.fail(`This browser cannot draw the map: ${(err as Error).message}. Try a recent Chrome, Firefox, Edge or Safari.`);
    }
    this.resize = new ResizeObserver(() => this.layout());
    this.resize.observe(this.el);
    const registry = ((window as any).__atlasMaps ||= []);
    registry.push(this);
  }

  // ---------------------------------------------------------------------------------------------
  // Host API
  // ---------------------------------------------------------------------------------------------

  setData(ds: Dataset): void {
    if (this.ds && this.ds.id === ds.id) return;
    const fresh = !this.ds;
    this.ds = ds;
    this.details.clear();
    this.asked.clear();
    this.selection = null;
    this.topicIndex = new Map(ds.topics.map((t, i) => [t.id, i]));
    this.gridOf = null; // built on first use, or when the browser is idle after the first draw
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let i = 0; i < ds.n; i++) {
      const a = ds.x[i], b = ds.y[i];
      if (a === a && b === b) {
        if (a < x0) x0 = a;
        if (a > x1) x1 = a;
        if (b < y0) y0 = b;
        if (b > y1) y1 = b;
      }
    }
    for (const t of ds.topics) if (t.x !== null && t.y !== null) (x0 = Math.min(x0, t.x)), (x1 = Math.max(x1, t.x)), (y0 = Math.min(y0, t.y)), (y1 = Math.max(y1, t.y));
    this.bounds = x1 >= x0 ? [x0, y0, x1, y1] : [0, 0, 1, 1];
    this.el.dataset.points = String(ds.n);
    if (this.renderer) {
      const pal = new Uint8Array(ds.topics.length * 4);
      ds.topics.forEach((t, i) => pal.set(rgba(t.colour).map((v) => Math.round(v * 255)), i * 4));
      this.renderer.setPalette(pal, rgba(ds.outlierColour), rgba(ds.contextColour, 0.5));
      this.renderer.setPoints(ds.x, ds.y, ds.topic);
    }
    this.restyle();
    this.buildLegend();
    if (fresh || !this.opts.view) this.applyView(this.opts.view, true);
    this.statusEl.textContent = `Drawing ${fmt(ds.n)} papers…`;
    this.statusEl.hidden = ds.n < 50_000;
    this.layout();
  }

  setOptions(next: Partial<MapOptions>): void {
    const prev = this.opts;
    this.opts = { ...prev, ...next };
    const o = this.opts;
    this.el.style.setProperty("--s", String(o.scale));
    this.canvas.setAttribute("aria-label", o.caption);
    const restyle = prev.highlight !== o.highlight || prev.mask !== o.mask;
    if (restyle && this.ds) {
      this.restyle();
      this.buildLegend();
    } else if (prev.scale !== o.scale) this.updateLook();
    if (prev.tools !== o.tools || prev.select !== o.select) this.buildTools();
    if (o.viewKey !== this.appliedViewKey) {
      if (!this.emitted.has(o.viewKey)) this.applyView(o.view, false);
      this.appliedViewKey = o.viewKey;
    }
    if (prev.legend !== o.legend || prev.scale !== o.scale) this.layout();
    this.redraw();
  }

  /** Titles and details the host looked up (answers to ``host.need``). */
  provide(details: Record<string, Detail>): void {
    let any = false;
    for (const [row, d] of Object.entries(details)) {
      this.details.set(Number(row), d);
      any = true;
    }
    if (!any) return;
    if (this.hover && this.hover.overlay < 0 && details[String(this.hover.row)]) this.showTip(this.hover);
    this.redraw();
  }

  destroy(): void {
    this.resize.disconnect();
    this.renderer?.destroy();
    clearTimeout(this.settleTimer);
    clearTimeout(this.viewTimer);
    if (this.frame) cancelAnimationFrame(this.frame);
    const registry = (window as any).__atlasMaps as AtlasMap[];
    const at = registry.indexOf(this);
    if (at >= 0) registry.splice(at, 1);
    this.el.remove();
  }

  // ---------------------------------------------------------------------------------------------
  // Styling: which layer each point is drawn in, and in what order
  // ---------------------------------------------------------------------------------------------

  private highlightIndex(): number {
    const t = this.hoverTopic ?? this.opts.highlight;
    if (t === null || t === undefined) return -1;
    return this.topicIndex.get(t) ?? -1;
  }

  private passes(i: number): boolean {
    const m = this.opts.mask;
    return !m || ((m[i >> 3] >> (7 - (i & 7))) & 1) === 1;
  }

  private restyle(): void {
    const ds = this.ds;
    if (!ds) return;
    const n = ds.n;
    if (this.style.length !== n) this.style = new Uint8Array(n);
    const hl = this.highlightIndex();
    const counts = new Uint32Array(4);
    const per = new Uint32Array(ds.topics.length + 1);
    const mask = this.opts.mask;
    let shown = 0;
    for (let i = 0; i < n; i++) {
      let layer: number;
      if (mask && ((mask[i >> 3] >> (7 - (i & 7))) & 1) === 0) layer = 0;
      else {
        const t = ds.topic[i];
        per[Math.min(t, ds.topics.length)]++;
        shown++;
        layer = hl < 0 ? 2 : t === hl ? 3 : 1;
      }
      counts[layer]++;
      this.style[i] = layer | (ds.flags[i] & FLAG_REASSIGNED ? STYLE_REASSIGNED : 0);
    }
    const start = [0, counts[0], counts[0] + counts[1], counts[0] + counts[1] + counts[2]];
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[start[this.style[i] & 3]++] = i;
    this.shownPerTopic = per;
    this.hlExtent = hl < 0 ? null : this.extentOf(hl);
    this.nShown = shown;
    this.el.dataset.shown = String(shown);
    this.el.dataset.highlight = hl < 0 ? "" : String(ds.topics[hl].id);
    if (this.renderer) {
      this.renderer.setStyle(this.style, order);
      this.updateLook();
    }
  }

  /**
   * Where most of topic ``t``'s shown papers lie (map units: the 10th to 90th percentile of their
   * x and of their y, from at most about 20,000 of them), so that its label can sit beside them.
   */
  private extentOf(t: number): [number, number, number, number] | null {
    const ds = this.ds!;
    const n = this.shownPerTopic[t] ?? 0;
    if (!n) return null;
    const step = Math.max(1, Math.floor(n / 20000));
    const xs: number[] = [], ys: number[] = [];
    let k = 0;
    for (let i = 0; i < ds.n; i++) {
      if (ds.topic[i] !== t || (this.style[i] & 3) === 0) continue;
      if (k++ % step === 0) {
        xs.push(ds.x[i]);
        ys.push(ds.y[i]);
      }
    }
    xs.sort((a, b) => a - b);
    ys.sort((a, b) => a - b);
    const q = (v: number[], f: number) => v[Math.min(v.length - 1, Math.floor(f * v.length))];
    return [q(xs, 0.1), q(ys, 0.1), q(xs, 0.9), q(ys, 0.9)];
  }

  private zoomRel(): number {
    return this.cam.scale / this.fitScale();
  }

  private pointSize(): number {
    const base = Math.min(12, Math.max(2.5, 15 - 2.6 * Math.log10(Math.max(this.nShown, 1))));
    const zoom = Math.min(Math.max(this.zoomRel(), 1), 64);
    return base * Math.pow(zoom, 0.22) * (1 + (this.opts.scale - 1) * 0.5);
  }

  private updateLook(): void {
    if (!this.renderer) return;
    const s = this.pointSize();
    const look: Look = {
      sizes: [Math.max(1.5, s - 1.5), s, s, s + 2.5 * this.opts.scale],
      alphas: [0.5, Math.min(0.4, 0.16 * Math.pow(Math.max(this.zoomRel(), 1), 0.3)), 0.8, 0.95],
      reassignedAlpha: 0.42,
    };
    this.renderer.setLook(look);
  }

  // ---------------------------------------------------------------------------------------------
  // Camera
  // ---------------------------------------------------------------------------------------------

  private fitScale(): number {
    const [x0, y0, x1, y1] = this.bounds;
    const w = Math.max(this.w, 50), h = Math.max(this.h, 50);
    return Math.min(w / (Math.max(x1 - x0, 1e-9) * 1.1), h / (Math.max(y1 - y0, 1e-9) * 1.1));
  }

  private fitCamera(): Camera {
    const [x0, y0, x1, y1] = this.bounds;
    return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, scale: this.fitScale() };
  }

  private applyView(v: View | null, initial: boolean): void {
    if (!this.w) {
      this.pendingView = v;
      return;
    }
    const fit = this.fitCamera();
    this.cam = v ? { cx: v.x, cy: v.y, scale: fit.scale * Math.min(this.maxZoom(), Math.max(MIN_ZOOM, v.zoom)) } : fit;
    this.lastView = this.viewString();
    if (!initial) this.cameraMoved(false);
  }

  private pendingView: View | null | undefined = undefined;

  private viewString(): string | null {
    const z = this.zoomRel();
    const fit = this.fitCamera();
    const tol = 0.5 / this.cam.scale;
    if (Math.abs(z - 1) < 0.01 && Math.abs(this.cam.cx - fit.cx) < tol * 4 && Math.abs(this.cam.cy - fit.cy) < tol * 4) return null;
    const [x0, , x1] = this.bounds;
    const digits = Math.max(2, Math.min(6, Math.ceil(-Math.log10((x1 - x0) / 1e4 / Math.max(z, 1)))));
    return `${this.cam.cx.toFixed(digits)},${this.cam.cy.toFixed(digits)},${z.toFixed(z < 10 ? 3 : 1)}`;
  }

  get view(): View | null {
    const s = this.viewString();
    if (!s) return null;
    const [x, y, zoom] = s.split(",").map(Number);
    return { x, y, zoom, text: s };
  }

  /** The closest zoom (relative to the whole map): where the closest papers are ``SEPARATE_PX`` apart. */
  maxZoom(): number {
    const spacing = this.ds?.spacing ?? 0;
    if (!(spacing > 0)) return MAX_ZOOM_UNKNOWN;
    return Math.min(MAX_ZOOM, Math.max(4, (SEPARATE_PX * this.opts.scale) / (spacing * this.fitScale())));
  }

  private clampZoom(scale: number): number {
    const fit = this.fitScale();
    return Math.min(fit * this.maxZoom(), Math.max(fit * MIN_ZOOM, scale));
  }

  /** The note at the closest zoom or away from every paper, and the zoom-in button's state. */
  private updateZoomNote(): void {
    const z = this.zoomRel(), closest = z >= this.maxZoom() * 0.999;
    const [x0, y0, x1, y1] = this.bounds, { cx, cy } = this.cam;
    const away = z > 1.01 && (cx < x0 || cx > x1 || cy < y0 || cy > y1);
    this.zoomNote.hidden = !(closest || away) || !this.ds;
    this.zoomNoteText.textContent = away
      ? "No papers here. "
      : "As close as the map goes: every paper here is told apart. ";
    const plus = this.toolsEl.querySelector<HTMLButtonElement>('button[data-tool="plus"]');
    if (plus) {
      plus.disabled = closest;
      plus.title = closest ? "As close as the map goes" : "Zoom in";
    }
  }

  zoomAt(factor: number, sx: number, sy: number): void {
    const before = this.unproject(sx, sy);
    this.cam.scale = this.clampZoom(this.cam.scale * factor);
    const after = this.unproject(sx, sy);
    this.cam.cx += before[0] - after[0];
    this.cam.cy += before[1] - after[1];
    this.cameraMoved(true);
  }

  reset(): void {
    this.cam = this.fitCamera();
    this.cameraMoved(true);
  }

  /** Map units -> CSS pixels in the stage. */
  project(x: number, y: number): [number, number] {
    return [(x - this.cam.cx) * this.cam.scale + this.w / 2, this.h / 2 - (y - this.cam.cy) * this.cam.scale];
  }

  unproject(sx: number, sy: number): [number, number] {
    return [(sx - this.w / 2) / this.cam.scale + this.cam.cx, (this.h / 2 - sy) / this.cam.scale + this.cam.cy];
  }

  private cameraMoved(byUser: boolean): void {
    this.hideTip();
    this.updateZoomNote();
    this.updateLook();
    this.redraw();
    clearTimeout(this.settleTimer);
    this.settleTimer = window.setTimeout(() => this.renderPoints(), SETTLE_MS);
    if (byUser) {
      clearTimeout(this.viewTimer);
      this.viewTimer = window.setTimeout(() => this.emitView(), VIEW_MS);
    }
  }

  private emitView(): void {
    const s = this.viewString();
    if (s === this.lastView) return;
    this.lastView = s;
    if (s) {
      this.emitted.add(s);
      if (this.emitted.size > 50) this.emitted.delete(this.emitted.values().next().value as string);
    }
    this.host.view(s ? this.view : null);
  }

  private renderPoints(): void {
    if (this.renderer && this.ds && this.w) this.renderer.render(this.cam, this.w, this.h);
  }

  /** The points' grid (hover, click, box and lasso, titles in view). Not built before the first
   * draw: at a million points it took about 0.2 s of the first visit (benchmarks/bench_app_grown.py,
   * 2 cores), spent before anything was drawn. Built on first use, or when the browser is idle
   * after a draw. */
  private get grid(): Grid | null {
    if (!this.gridOf && this.ds) this.gridOf = new Grid(this.ds.x, this.ds.y);
    return this.gridOf;
  }

  private drawn(): void {
    if (!this.firstDrawnAt) this.firstDrawnAt = performance.now();
    if (!this.gridOf) {
      const idle: (go: () => void) => void = (window as any).requestIdleCallback ?? ((go: () => void) => window.setTimeout(go, 100));
      idle(() => void this.grid);
    }
    this.statusEl.hidden = true;
    const st = this.renderer!.stats;
    this.el.dataset.drawn = String(st.drawn);
    this.el.dataset.renderMs = st.fullMs.toFixed(0);
    this.drawOverlay();
  }

  // ---------------------------------------------------------------------------------------------
  // Layout and drawing
  // ---------------------------------------------------------------------------------------------

  private layout(): void {
    const o = this.opts;
    const total = this.el.clientWidth;
    const wantLegend = o.legend && !!this.ds && this.ds.topics.length > 1;
    this.floating = wantLegend && total < LEGEND_MIN_WIDTH * Math.min(o.scale, 1.4);
    this.legendEl.hidden = !wantLegend || (this.floating && !this.legendOpen);
    this.legendEl.classList.toggle("floating", this.floating);
    if (this.floating) this.stage.appendChild(this.legendEl);
    else if (this.legendEl.parentElement !== this.el) this.el.appendChild(this.legendEl);
    this.legendToggle.hidden = !(wantLegend && this.floating);
    this.legendToggle.setAttribute("aria-expanded", String(this.legendOpen));
    const w = this.stage.clientWidth, h = this.stage.clientHeight;
    if (!w || !h) return;
    const dpr = window.devicePixelRatio || 1;
    const changed = w !== this.w || h !== this.h;
    if (changed) {
      const fitBefore = this.w ? this.fitScale() : 0;
      const zoom = this.w ? this.cam.scale / fitBefore : 1;
      this.w = w;
      this.h = h;
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.overlayCanvas.width = Math.round(w * dpr);
      this.overlayCanvas.height = Math.round(h * dpr);
      if (this.renderer) this.renderer.dpr = dpr;
      if (this.pendingView !== undefined) {
        const v = this.pendingView;
        this.pendingView = undefined;
        this.applyView(v, true);
      } else if (fitBefore) this.cam.scale = this.fitScale() * zoom;
      else this.cam = this.fitCamera();
      this.lastView = this.viewString();
      this.updateLook();
    }
    this.redraw();
    this.renderPoints();
  }

  private redraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (!this.w) return;
      this.renderer?.present(this.cam, this.w, this.h);
      this.drawOverlay();
    });
  }

  private visibleRect(pad = 0): [number, number, number, number] {
    const [ax, by] = this.unproject(-pad, -pad);
    const [bx, ay] = this.unproject(this.w + pad, this.h + pad);
    return [ax, ay, bx, by];
  }

  /** Shown (not filtered-out) rows in view, top-drawn layers first; at most ``limit`` + 1. */
  private rowsInView(limit: number): number[] {
    const ds = this.ds, grid = this.grid;
    if (!ds || !grid) return [];
    const [ax, ay, bx, by] = this.visibleRect(-4);
    const out: number[] = [];
    let over = false;
    grid.forEachIn(ax, ay, bx, by, (i) => {
      if (over || (this.style[i] & 3) === 0) return;
      const x = ds.x[i], y = ds.y[i];
      if (x < ax || x > bx || y < ay || y > by) return;
      out.push(i);
      if (out.length > limit) over = true;
    });
    return out.sort((a, b) => (this.style[b] & 3) - (this.style[a] & 3) || b - a);
  }

  private drawOverlay(): void {
    const ctx = this.ctx, ds = this.ds;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.w, this.h);
    if (!ds) return;
    this.paintOverlay(ctx, this.w, this.h, true);
  }

  /** Marks, selection, stars and labels for the current camera onto ``ctx`` (w x h CSS px). */
  private paintOverlay(ctx: CanvasRenderingContext2D, w: number, h: number, live: boolean): void {
    const ds = this.ds!;
    const o = this.opts;
    const s = o.scale;
    const reserved: Box[] = live ? this.controlBoxes() : [];
    const r = this.pointSize() / 2 + 2.5 * s;
    // marks: rings and diamonds over the rows they mark (search hits, the reading list)
    for (const mark of o.marks) this.paintMark(ctx, mark, r, w, h);
    if (this.selection) this.paintMark(ctx, { rows: this.selection, shape: "ring", colour: "#1f2328", label: "selected" }, r - 1, w, h);
    if (live && this.hover && this.hover.overlay < 0) {
      const [px, py] = this.project(ds.x[this.hover.row], ds.y[this.hover.row]);
      ctx.lineWidth = 2;
      ctx.strokeStyle = "#1f2328";
      ctx.beginPath();
      ctx.arc(px, py, r + 1.5, 0, Math.PI * 2);
      ctx.stroke();
    }
    // extra points (stars): drawn last, above every dot, with a white halo and a dark outline;
    // topic labels keep clear of the named ones (a paper's star), not of many placed papers
    o.overlay.forEach((p) => {
      const [px, py] = this.project(p.x, p.y);
      const size = (p.size ?? 13) * s;
      this.paintShape(ctx, p.shape, px, py, size, p.colour);
      if (p.named !== false) reserved.push([px - size, py - size, px + size, py + size]);
    });
    if (this.lasso && this.lasso.length > 2) {
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = "#0b5394";
      ctx.fillStyle = "rgba(11, 83, 148, 0.08)";
      ctx.beginPath();
      ctx.moveTo(this.lasso[0], this.lasso[1]);
      for (let k = 2; k < this.lasso.length; k += 2) ctx.lineTo(this.lasso[k], this.lasso[k + 1]);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
      ctx.restore();
    }
    // labels
    const placed = this.placer.place(this.labelRequests(w, h), w, h, reserved);
    if (live) this.placed = placed;
    for (const p of placed) this.paintLabel(ctx, p);
  }

  /** Where the toolbar and the legend button sit (labels keep clear of them). */
  private controlBoxes(): Box[] {
    const st = this.stage.getBoundingClientRect();
    const out: Box[] = [];
    for (const el of [this.toolsEl, this.legendToggle, this.floating && this.legendOpen ? this.legendEl : null]) {
      if (!el || el.hidden) continue;
      const r = el.getBoundingClientRect();
      if (r.width) out.push([r.left - st.left - 2, r.top - st.top - 2, r.right - st.left + 2, r.bottom - st.top + 2]);
    }
    return out;
  }

  private paintMark(ctx: CanvasRenderingContext2D, mark: Mark, r: number, w: number, h: number): void {
    const ds = this.ds!;
    ctx.save();
    ctx.lineWidth = 2 * Math.min(this.opts.scale, 1.5);
    ctx.strokeStyle = mark.colour;
    const halo = "rgba(255,255,255,0.9)";
    let drawn = 0;
    for (let k = 0; k < mark.rows.length && drawn < 50_000; k++) {
      const i = mark.rows[k];
      if (i >= ds.n) continue;
      const [px, py] = this.project(ds.x[i], ds.y[i]);
      if (px < -r || py < -r || px > w + r || py > h + r) continue;
      drawn++;
      ctx.beginPath();
      if (mark.shape === "diamond") {
        const d = r + 2;
        ctx.moveTo(px, py - d);
        ctx.lineTo(px + d, py);
        ctx.lineTo(px, py + d);
        ctx.lineTo(px - d, py);
        ctx.closePath();
      } else ctx.arc(px, py, r, 0, Math.PI * 2);
      ctx.strokeStyle = halo;
      ctx.lineWidth = 4;
      ctx.stroke();
      ctx.strokeStyle = mark.colour;
      ctx.lineWidth = 2;
      ctx.stroke();
    }
    ctx.restore();
  }

  private paintShape(ctx: CanvasRenderingContext2D, shape: OverlayPoint["shape"], x: number, y: number, size: number, colour: string): void {
    ctx.save();
    ctx.beginPath();
    if (shape === "star") {
      for (let k = 0; k < 10; k++) {
        const a = -Math.PI / 2 + (k * Math.PI) / 5;
        const rr = k % 2 === 0 ? size : size * 0.45;
        const px = x + rr * Math.cos(a), py = y + rr * Math.sin(a);
        if (k === 0) ctx.moveTo(px, py);
        else ctx.lineTo(px, py);
      }
      ctx.closePath();
    } else if (shape === "diamond") {
      ctx.moveTo(x, y - size);
      ctx.lineTo(x + size * 0.8, y);
      ctx.lineTo(x, y + size);
      ctx.lineTo(x - size * 0.8, y);
      ctx.closePath();
    } else ctx.arc(x, y, size * 0.6, 0, Math.PI * 2);
    // halo and outline in proportion to a small mark (thousands of placed papers), as drawn for a star
    ctx.lineJoin = "round";
    ctx.strokeStyle = "#ffffff";
    ctx.lineWidth = Math.min(6, size * 0.5);
    ctx.stroke();
    ctx.fillStyle = colour;
    ctx.fill();
    ctx.strokeStyle = "#1f2328";
    ctx.lineWidth = Math.min(2, size * 0.17);
    ctx.stroke();
    ctx.restore();
  }

  private labelRequests(w: number, h: number): LabelRequest[] {
    const ds = this.ds!;
    const o = this.opts;
    const s = o.scale;
    const reqs: LabelRequest[] = [];
    for (const p of o.overlay) {
      if (!p.label || p.named === false) continue;
      const [px, py] = this.project(p.x, p.y);
      reqs.push({ key: "o:" + p.label, text: p.label, x: px + (p.size ?? 13) * s * 0.6, y: py, size: 14 * s, bold: true, colour: "#1f2328",
        kind: "overlay", wrap: 0, boxed: true, side: "right" });
    }
    const hl = this.highlightIndex();
    const maxSize = Math.max(1, ...ds.topics.map((t) => t.size));
    const order = ds.topics.map((_, i) => i).sort((a, b) => (a === hl ? -1 : b === hl ? 1 : 0) || ds.topics[b].size - ds.topics[a].size || a - b);
    for (const i of order) {
      const t = ds.topics[i];
      if (t.x === null || t.y === null || !this.shownPerTopic[i]) continue;
      if (o.topicLabels === "highlight" && i !== hl) continue;
      const [px, py] = this.project(t.x, t.y);
      if (px < -200 || py < -60 || px > w + 200 || py > h + 60) continue;
      const on = i === hl;
      let around: Box | undefined;
      if (on && this.hlExtent) {
        const [ax, ay] = this.project(this.hlExtent[0], this.hlExtent[3]);
        const [bx, by] = this.project(this.hlExtent[2], this.hlExtent[1]);
        around = [ax, ay, bx, by];
      }
      reqs.push({
        key: "t:" + t.id, text: t.label, x: px, y: py, topic: t.id, around,
        size: (on ? 15.5 : 12 + 3.5 * Math.sqrt(t.size / maxSize)) * s,
        bold: on || t.size / maxSize > 0.35, colour: darker(t.colour, 0.5), kind: on ? "highlight" : "topic",
        wrap: on ? 0 : 24, boxed: on, side: "centre",
      });
    }
    if (o.titles && this.zoomRel() >= 2.5) {
      const rows = this.rowsInView(TITLE_POINTS);
      if (rows.length <= TITLE_POINTS) {
        const missing = rows.filter((r) => !this.details.has(r) && !this.asked.has(r));
        if (missing.length) this.ask(missing);
        for (const r of rows) {
          const d = this.details.get(r);
          if (!d) continue;
          const [px, py] = this.project(ds.x[r], ds.y[r]);
          const text = d.title.length > 48 ? d.title.slice(0, 46).trimEnd() + "…" : d.title;
          reqs.push({ key: "p:" + r, text, x: px + this.pointSize() / 2, y: py, size: 11.5 * s, bold: false, colour: "#3d444d",
            kind: "title", wrap: 0, boxed: false, side: "right" });
        }
      }
    }
    return reqs;
  }

  private paintLabel(ctx: CanvasRenderingContext2D, p: Placed): void {
    const { req, box, lines } = p;
    const faded = this.highlightIndex() >= 0 && req.kind === "topic";
    ctx.save();
    ctx.font = p.font;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    if (req.boxed) {
      ctx.fillStyle = "rgba(255,255,255,0.94)";
      ctx.strokeStyle = req.kind === "highlight" && req.topic !== undefined ? this.ds!.topics[this.topicIndex.get(req.topic)!].colour : "#1f2328";
      ctx.lineWidth = 2;
      roundRect(ctx, box[0], box[1], box[2] - box[0], box[3] - box[1], 5);
      ctx.fill();
      ctx.stroke();
    }
    const cx = (box[0] + box[2]) / 2;
    const top = (box[1] + box[3]) / 2 - ((lines.length - 1) * p.lineHeight) / 2;
    ctx.globalAlpha = faded ? 0.45 : 1;
    lines.forEach((line, k) => {
      const y = top + k * p.lineHeight;
      if (!req.boxed) {
        ctx.lineWidth = 3.5;
        ctx.lineJoin = "round";
        ctx.strokeStyle = "rgba(255,255,255,0.92)";
        ctx.strokeText(line, cx, y);
      }
      ctx.fillStyle = req.boxed ? "#1f2328" : req.colour;
      ctx.fillText(line, cx, y);
    });
    ctx.restore();
  }

  // ---------------------------------------------------------------------------------------------
  // Picking
  // ---------------------------------------------------------------------------------------------

  /** The dot a reader sees at (sx, sy): among dots covering the place, the one drawn on top. */
  pick(sx: number, sy: number): Hover | null {
    const o = this.opts;
    for (let k = o.overlay.length - 1; k >= 0; k--) {
      const p = o.overlay[k];
      const [px, py] = this.project(p.x, p.y);
      const size = (p.size ?? 13) * o.scale;
      if ((px - sx) ** 2 + (py - sy) ** 2 <= size * size) return { row: -1, overlay: k, x: px, y: py };
    }
    const ds = this.ds, grid = this.grid;
    if (!ds || !grid) return null;
    const big = this.pointSize() / 2 + 2.5 * o.scale + 6;
    const [dx, dy] = this.unproject(sx, sy);
    const rad = big / this.cam.scale;
    let best = -1, bestLayer = -1, near = -1, nearD = Infinity, nearLayer = -1;
    const sizes = this.renderer ? this.renderer.look.sizes : [4, 4, 4, 6];
    grid.forEachIn(dx - rad, dy - rad, dx + rad, dy + rad, (i) => {
      const layer = this.style[i] & 3;
      if (layer === 0) return;
      const px = (ds.x[i] - dx) * this.cam.scale, py = (ds.y[i] - dy) * this.cam.scale;
      const d = Math.sqrt(px * px + py * py);
      const own = sizes[layer] / 2 + 0.5;
      if (d <= own && (layer > bestLayer || (layer === bestLayer && i > best))) (best = i), (bestLayer = layer);
      if (d <= own + 5 && (layer > nearLayer || (layer === nearLayer && d < nearD))) (near = i), (nearD = d), (nearLayer = layer);
    });
    const row = best >= 0 ? best : near;
    if (row < 0) return null;
    const [px, py] = this.project(ds.x[row], ds.y[row]);
    return { row, overlay: -1, x: px, y: py };
  }

  private labelAt(sx: number, sy: number): Placed | null {
    for (let k = this.placed.length - 1; k >= 0; k--) {
      const b = this.placed[k].box;
      if (sx >= b[0] && sx <= b[2] && sy >= b[1] && sy <= b[3] && this.placed[k].req.topic !== undefined) return this.placed[k];
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------
  // Tooltip
  // ---------------------------------------------------------------------------------------------

  private askTimer = 0;
  private pendingAsk = new Set<number>();

  private ask(rows: number[]): void {
    for (const r of rows) {
      if (this.details.has(r) || this.asked.has(r)) continue;
      this.asked.add(r);
      this.pendingAsk.add(r);
    }
    if (!this.pendingAsk.size || this.askTimer) return;
    this.askTimer = window.setTimeout(() => {
      this.askTimer = 0;
      const rows = Array.from(this.pendingAsk);
      this.pendingAsk.clear();
      this.host.need(rows);
    }, 8); // gathers the rows asked for in one frame into one request
  }

  private showTip(h: Hover): void {
    const ds = this.ds!;
    const tip = this.tip;
    tip.replaceChildren();
    const add = (cls: string, text: string) => {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = text;
      tip.appendChild(span);
      return span;
    };
    if (h.overlay >= 0) {
      add("t", this.opts.overlay[h.overlay].label);
    } else {
      const d = this.details.get(h.row);
      if (!d) this.ask([h.row]);
      add("t", d ? d.title : "…");
      const ti = ds.topic[h.row];
      const topic = ti < ds.topics.length ? ds.topics[ti] : null;
      const m = add("m", "");
      const sw = document.createElement("span");
      sw.className = "sw";
      sw.style.background = topic ? topic.colour : ds.outlierColour;
      m.append(sw, document.createTextNode(topic ? topic.label : "outliers"));
      const bits = [d?.venue, d?.year !== null && d?.year !== undefined && !(d?.venue || "").endsWith(String(d.year)) ? String(d.year) : ""].filter(Boolean);
      if (bits.length) add("m", bits.join(" · "));
      if (ds.flags[h.row] & FLAG_REASSIGNED) add("hint", "on a topic's border: left out by clustering at first, placed afterwards");
      if (d?.note) add("hint", d.note);
      if (this.opts.clickable) add("hint", "Click to open the paper");
    }
    tip.hidden = false;
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    let x = h.x + 14, y = h.y + 14;
    if (x + tw > this.w - 4) x = Math.max(4, h.x - 14 - tw);
    if (y + th > this.h - 4) y = Math.max(4, h.y - 14 - th);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }

  private hideTip(): void {
    if (!this.tip.hidden) this.tip.hidden = true;
    if (this.hover) {
      this.hover = null;
      this.stage.classList.remove("onpoint");
      this.redraw();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Toolbar, legend and input
  // ---------------------------------------------------------------------------------------------

  private buildTools(): void {
    const o = this.opts;
    const el = this.toolsEl;
    el.replaceChildren();
    el.hidden = !o.tools;
    if (!o.tools) return;
    const button = (name: keyof typeof ICONS, label: string, action: () => void, pressed?: boolean) => {
      const b = document.createElement("button");
      b.type = "button";
      b.innerHTML = ICONS[name]; // our own constant SVG
      b.title = label;
      b.setAttribute("aria-label", label);
      b.dataset.tool = name;
      if (pressed !== undefined) b.setAttribute("aria-pressed", String(pressed));
      b.addEventListener("click", action);
      el.appendChild(b);
      return b;
    };
    const sep = () => el.appendChild(Object.assign(document.createElement("span"), { className: "sep" }));
    const modes: [Mode, keyof typeof ICONS, string][] = [["pan", "pan", "Pan and zoom (drag, scroll)"]];
    if (o.select) modes.push(["box", "box", "Box select: drag a rectangle to select papers"], ["lasso", "lasso", "Lasso select: draw around papers to select them"]);
    if (modes.length > 1) {
      for (const [mode, icon, label] of modes) button(icon, label, () => this.setMode(mode), this.mode === mode);
      sep();
    }
    button("plus", "Zoom in", () => this.zoomAt(1.6, this.w / 2, this.h / 2));
    button("minus", "Zoom out", () => this.zoomAt(1 / 1.6, this.w / 2, this.h / 2));
    button("reset", "Show the whole map", () => this.reset());
    sep();
    button("png", "Download the map as a PNG image", () => this.downloadPng());
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    this.stage.classList.remove("pan", "box", "lasso");
    this.stage.classList.add(mode);
    this.toolsEl.querySelectorAll("button[aria-pressed]").forEach((b) => b.setAttribute("aria-pressed", String((b as HTMLElement).dataset.tool === mode)));
  }

  private legendButtons = new Map<number, HTMLButtonElement>();

  private buildLegend(): void {
    const ds = this.ds;
    const el = this.legendEl;
    el.replaceChildren();
    this.legendButtons.clear();
    if (!ds) return;
    const head = document.createElement("div");
    head.className = "head";
    head.textContent = `Topics (${ds.topics.length})`;
    const hl = this.opts.highlight;
    if (hl !== null) {
      const clear = document.createElement("button");
      clear.type = "button";
      clear.className = "clear";
      clear.textContent = "show all";
      clear.addEventListener("click", () => this.host.topic(null));
      head.appendChild(clear);
    }
    el.appendChild(head);
    if (ds.topics.length > 12) {
      const input = document.createElement("input");
      input.type = "search";
      input.placeholder = "Find a topic";
      input.setAttribute("aria-label", "Find a topic");
      input.addEventListener("input", () => {
        const q = input.value.trim().toLowerCase();
        this.legendButtons.forEach((b) => ((b.parentElement as HTMLElement).hidden = !!q && !(b.dataset.label || "").includes(q)));
      });
      el.appendChild(input);
    }
    const list = this.legendList;
    list.replaceChildren();
    const order = ds.topics.map((_, i) => i).sort((a, b) => ds.topics[b].size - ds.topics[a].size || a - b);
    for (const i of order) {
      const t = ds.topics[i];
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.topic = String(t.id);
      b.dataset.label = t.label.toLowerCase();
      const shown = this.shownPerTopic[i] ?? 0;
      if (t.id === hl) b.classList.add("on");
      if (!shown) b.classList.add("none");
      const sw = document.createElement("span");
      sw.className = "sw";
      sw.style.background = t.colour;
      const lab = document.createElement("span");
      lab.className = "lab";
      // a weak label's mark stays in sight when a long label is cut short with "…"
      const weak = t.label.endsWith(WEAK_MARK);
      lab.textContent = weak ? t.label.slice(0, -WEAK_MARK.length) : t.label;
      const n = document.createElement("span");
      n.className = "n";
      n.textContent = this.opts.mask ? `${fmt(shown)}/${fmt(t.size)}` : fmt(t.size);
      b.title = `${t.label}: ${fmt(t.size)} papers${this.opts.mask ? ` (${fmt(shown)} kept by the filters)` : ""}. Click to ${t.id === hl ? "show all topics" : "highlight it"}.`;
      b.append(sw, lab);
      if (weak) {
        const mark = document.createElement("span");
        mark.className = "weak";
        mark.textContent = WEAK_MARK.trim();
        b.append(mark);
      }
      b.append(n);
      b.addEventListener("mouseenter", () => this.setHoverTopic(t.id));
      b.addEventListener("mouseleave", () => this.setHoverTopic(null));
      b.addEventListener("focus", () => this.setHoverTopic(t.id));
      b.addEventListener("blur", () => this.setHoverTopic(null));
      b.addEventListener("click", () => {
        this.hoverTopic = null;
        this.host.topic(t.id === this.opts.highlight ? null : t.id);
      });
      li.appendChild(b);
      list.appendChild(li);
      this.legendButtons.set(t.id, b);
    }
    el.appendChild(list);
  }

  /** Bring a topic forward while the pointer rests on it in the legend (no round trip to the host). */
  setHoverTopic(topic: number | null): void {
    if (topic === this.hoverTopic) return;
    this.hoverTopic = topic;
    this.legendButtons.forEach((b, id) => b.classList.toggle("hover", id === topic));
    this.restyle();
    this.redraw();
    this.renderPoints();
  }

  private bindEvents(): void {
    const st = this.stage;
    const local = (ev: MouseEvent): [number, number] => {
      const r = st.getBoundingClientRect();
      return [ev.clientX - r.left, ev.clientY - r.top];
    };
    st.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const [x, y] = local(ev);
      const delta = ev.deltaMode === 1 ? ev.deltaY * 16 : ev.deltaY;
      this.zoomAt(Math.exp(-delta * 0.0018), x, y);
    }, { passive: false });
    st.addEventListener("pointerdown", (ev) => {
      if ((ev.target as HTMLElement).closest(".tools, .legend, .legend-toggle, .zoom-note")) return;
      if (ev.button !== 0) return;
      st.focus({ preventScroll: true });
      const [x, y] = local(ev);
      this.drag = { x, y, cam: { ...this.cam }, moved: false, id: ev.pointerId };
      st.setPointerCapture(ev.pointerId);
      const mode = ev.shiftKey && this.opts.select ? "box" : this.mode;
      if (mode !== "pan") this.lasso = [x, y];
      (this.drag as any).mode = mode;
      if (mode === "pan") st.classList.add("dragging");
    });
    st.addEventListener("pointermove", (ev) => {
      const [x, y] = local(ev);
      const d = this.drag;
      if (d) {
        if (Math.abs(x - d.x) + Math.abs(y - d.y) > 3) d.moved = true;
        const mode = (d as any).mode as Mode;
        if (mode === "pan") {
          if (!d.moved) return;
          this.cam.cx = d.cam.cx - (x - d.x) / this.cam.scale;
          this.cam.cy = d.cam.cy + (y - d.y) / this.cam.scale;
          this.cameraMoved(true);
        } else if (this.lasso) {
          if (mode === "box") this.lasso = [d.x, d.y, x, d.y, x, y, d.x, y];
          else this.lasso.push(x, y);
          this.redraw();
        }
        return;
      }
      this.onHover(x, y);
    });
    const end = (ev: PointerEvent, cancelled: boolean) => {
      const d = this.drag;
      if (!d || d.id !== ev.pointerId) return;
      this.drag = null;
      st.classList.remove("dragging");
      const mode = (d as any).mode as Mode;
      const [x, y] = local(ev);
      if (cancelled) {
        this.lasso = null;
        this.redraw();
        return;
      }
      if (mode !== "pan" && this.lasso && d.moved) {
        const poly = mode === "box" ? [d.x, d.y, x, d.y, x, y, d.x, y] : this.lasso;
        this.lasso = null;
        this.selectPolygon(poly, mode);
        return;
      }
      this.lasso = null;
      if (!d.moved) this.onClick(x, y);
    };
    st.addEventListener("pointerup", (ev) => end(ev, false));
    st.addEventListener("pointercancel", (ev) => end(ev, true));
    st.addEventListener("pointerleave", () => {
      if (!this.drag) this.hideTip();
    });
    st.addEventListener("dblclick", (ev) => {
      if ((ev.target as HTMLElement).closest(".tools, .legend, .legend-toggle, .zoom-note")) return;
      const [x, y] = local(ev);
      this.zoomAt(2, x, y);
    });
    st.addEventListener("keydown", (ev) => {
      if ((ev.target as HTMLElement) !== st) return;
      const step = 60 / this.cam.scale;
      const keys: Record<string, () => void> = {
        "+": () => this.zoomAt(1.6, this.w / 2, this.h / 2),
        "=": () => this.zoomAt(1.6, this.w / 2, this.h / 2),
        "-": () => this.zoomAt(1 / 1.6, this.w / 2, this.h / 2),
        "0": () => this.reset(),
        ArrowUp: () => ((this.cam.cy += step), this.cameraMoved(true)),
        ArrowDown: () => ((this.cam.cy -= step), this.cameraMoved(true)),
        Escape: () => this.clearSelection(),
      };
      // Left and right stay free for a presentation's previous/next keys.
      const action = keys[ev.key];
      if (action) {
        ev.preventDefault();
        ev.stopPropagation();
        action();
      }
    });
  }

  private onHover(x: number, y: number): void {
    const h = this.pick(x, y);
    const same = h && this.hover && h.row === this.hover.row && h.overlay === this.hover.overlay;
    if (!h) {
      const label = this.labelAt(x, y);
      this.stage.classList.toggle("onpoint", !!label);
      if (this.hover) this.hideTip();
      return;
    }
    this.hover = h;
    this.stage.classList.toggle("onpoint", h.overlay < 0 && this.opts.clickable);
    if (!same) {
      this.showTip(h);
      this.redraw();
    }
  }

  private onClick(x: number, y: number): void {
    const h = this.pick(x, y);
    if (h && h.overlay < 0) {
      if (this.opts.clickable) this.host.click(h.row);
      return;
    }
    const label = this.labelAt(x, y);
    if (label && label.req.topic !== undefined) {
      this.host.topic(label.req.topic === this.opts.highlight ? null : label.req.topic);
      return;
    }
    if (this.selection) this.clearSelection();
  }

  clearSelection(): void {
    if (!this.selection) return;
    this.selection = null;
    this.host.select(new Uint32Array(0), "box");
    this.redraw();
  }

  /** Select the shown papers inside a screen polygon; reports them to the host. */
  selectPolygon(poly: number[], kind: "box" | "lasso"): Uint32Array {
    const ds = this.ds, grid = this.grid;
    if (!ds || !grid || poly.length < 6) return new Uint32Array(0);
    const data: number[] = [];
    let ax = Infinity, ay = Infinity, bx = -Infinity, by = -Infinity;
    for (let k = 0; k < poly.length; k += 2) {
      const [u, v] = this.unproject(poly[k], poly[k + 1]);
      data.push(u, v);
      ax = Math.min(ax, u);
      bx = Math.max(bx, u);
      ay = Math.min(ay, v);
      by = Math.max(by, v);
    }
    const rows: number[] = [];
    grid.forEachIn(ax, ay, bx, by, (i) => {
      if ((this.style[i] & 3) === 0) return;
      const u = ds.x[i], v = ds.y[i];
      if (u < ax || u > bx || v < ay || v > by) return;
      if (kind === "box" || insidePolygon(u, v, data)) rows.push(i);
    });
    rows.sort((a, b) => a - b);
    const out = Uint32Array.from(rows);
    this.selection = out.length ? out : null;
    this.live.textContent = `${fmt(out.length)} papers selected`;
    this.host.select(out, kind);
    this.redraw();
    return out;
  }

  private fail(message: string): void {
    this.statusEl.hidden = false;
    this.statusEl.classList.add("error");
    this.statusEl.textContent = message;
  }

  // ---------------------------------------------------------------------------------------------
  // PNG
  // ---------------------------------------------------------------------------------------------

  /** The map as shown (points, marks, stars, labels) at twice the screen resolution. */
  image(ratio = 2): HTMLCanvasElement | null {
    if (!this.renderer || !this.ds) return null;
    const points = this.renderer.snapshotImage(this.cam, this.w, this.h, ratio);
    const ctx = points.getContext("2d")!;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    this.paintOverlay(ctx, this.w, this.h, false);
    ctx.font = `500 ${11 * this.opts.scale}px ${FONT_FAMILY}`;
    ctx.fillStyle = "#57606a";
    ctx.textAlign = "right";
    ctx.textBaseline = "bottom";
    ctx.fillText(`${this.ds.name}${this.ds.synthetic ? " (synthetic benchmark data)" : ""} · ${fmt(this.nShown)} papers`, this.w - 8, this.h - 6);
    return points;
  }

  downloadPng(): void {
    const image = this.image(2);
    if (!image) return;
    image.toBlob((blob) => {
      if (!blob) return;
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = `${this.opts.pngName || "map"}.png`;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    }, "image/png");
  }

  // ---------------------------------------------------------------------------------------------
  // For tests and benchmarks
  // ---------------------------------------------------------------------------------------------

  debug(): Record<string, unknown> {
    const st = this.renderer?.stats;
    return {
      dataset: this.ds?.id ?? null,
      n: this.ds?.n ?? 0,
      shown: this.nShown,
      drawn: st?.drawn ?? 0,
      fullMs: st?.fullMs ?? 0,
      presentMs: st?.presentMs ?? 0,
      view: this.view,
      zoom: this.zoomRel(),
      maxZoom: this.maxZoom(),
      zoomNote: this.zoomNote.hidden ? null : this.zoomNoteText.textContent,
      highlight: this.opts.highlight,
      selection: this.selection ? this.selection.length : 0,
      busy: this.renderer?.busy ?? false,
      labels: this.placed.map((p) => ({ text: p.req.text, kind: p.req.kind, topic: p.req.topic ?? null, box: p.box })),
      size: [this.w, this.h],
    };
  }

  /** Page coordinates of shown rows in view, top-drawn first (``limit`` at most). */
  screenPoints(limit = 100_000): { row: number; x: number; y: number; layer: number }[] {
    const r = this.stage.getBoundingClientRect();
    return this.rowsInView(limit).map((row) => {
      const [x, y] = this.project(this.ds!.x[row], this.ds!.y[row]);
      return { row, x: r.left + x, y: r.top + y, layer: this.style[row] & 3 };
    });
  }

  screenOf(row: number): [number, number] | null {
    if (!this.ds || row < 0 || row >= this.ds.n) return null;
    const r = this.stage.getBoundingClientRect();
    const [x, y] = this.project(this.ds.x[row], this.ds.y[row]);
    return [r.left + x, r.top + y];
  }

  /** Screen position of a place on the map (page coordinates). */
  screenOfPoint(x: number, y: number): [number, number] {
    const r = this.stage.getBoundingClientRect();
    const [px, py] = this.project(x, y);
    return [r.left + px, r.top + py];
  }

  /** Time a few frames of panning (the cost a reader feels while dragging). */
  async panFrames(frames = 20): Promise<number[]> {
    const times: number[] = [];
    const gl = this.renderer!.gl;
    const px = new Uint8Array(4);
    for (let k = 0; k < frames; k++) {
      const t0 = performance.now();
      this.cam.cx += 3 / this.cam.scale;
      this.renderer!.present(this.cam, this.w, this.h);
      this.drawOverlay();
      gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); // wait for the GPU
      times.push(performance.now() - t0);
      await new Promise((r) => requestAnimationFrame(r));
    }
    this.cameraMoved(false);
    return times;
  }
}

function roundRect(ctx: CanvasRenderingContext2D, x: number, y: number, w: number, h: number, r: number): void {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}
