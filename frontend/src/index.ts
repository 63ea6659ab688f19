// Entry point. Two hosts use the same map:
//
// * Streamlit (Components v2): the module's default export. A component instance gets either a
//   binary container (bytes: a corpus's points, a filter mask, marked rows), which it keeps in a
//   registry shared by every instance of the page, or the JSON state of a map, which names the
//   containers it draws by id. Containers travel outside the map's fragment and are cached by
//   Streamlit, so the state that changes on every hover or click stays a few hundred bytes.
// * The offline export: ``globalThis.AtlasMap`` (``mount`` and the helpers below).

import { AtlasMap, DEFAULTS } from "./map";
import { Blob, decode, fromBase64, peekId, toBase64 } from "./payload";
import { Dataset, Detail, Host, MapOptions, Mark, View } from "./types";

// Shared by every instance on the page. ``raw`` holds containers that the small data-only
// component (explorer/mapcomponent.py: DATA_JS) received before or while this bundle loads.
const registry: {
  blobs: Map<string, Blob>;
  waiting: Map<string, ((b: Blob) => void)[]>;
  raw: Uint8Array[];
  onraw?: () => void;
} = ((globalThis as any).__atlasBlobs ||= { blobs: new Map(), waiting: new Map(), raw: [] });
registry.blobs ||= new Map();
registry.waiting ||= new Map();
registry.raw ||= [];
function drain(): void {
  while (registry.raw.length) putBlob(registry.raw.shift()!);
}
registry.onraw = drain;

export function putBlob(bytes: Uint8Array): Blob | null {
  const id = peekId(bytes);
  if (id && registry.blobs.has(id)) return registry.blobs.get(id)!;
  const blob = decode(bytes);
  registry.blobs.set(blob.header.id, blob);
  // keep the most recent few: a corpus's points are the big ones
  const keys = Array.from(registry.blobs.keys());
  let points = 0;
  for (let k = keys.length - 1; k >= 0; k--) {
    const kind = registry.blobs.get(keys[k])!.header.kind;
    if ((kind === "points" && ++points > 3) || (k < keys.length - 40)) registry.blobs.delete(keys[k]);
  }
  for (const resolve of registry.waiting.get(blob.header.id) || []) resolve(blob);
  registry.waiting.delete(blob.header.id);
  return blob;
}

export function getBlob(id: string): Promise<Blob> {
  drain();
  const known = registry.blobs.get(id);
  if (known) return Promise.resolve(known);
  return new Promise((resolve) => {
    const list = registry.waiting.get(id) || [];
    list.push(resolve);
    registry.waiting.set(id, list);
  });
}

export function datasetOf(blob: Blob): Dataset {
  const h = blob.header, a = blob.arrays;
  return {
    id: h.id, n: h.n, x: a.x as Float32Array, y: a.y as Float32Array, topic: a.topic as Uint16Array, flags: a.flags as Uint8Array,
    topics: h.topics, outlierColour: h.outlier, contextColour: h.context, ink: h.ink, name: h.name, synthetic: !!h.synthetic,
    spacing: Number(h.spacing) > 0 ? Number(h.spacing) : 0,
  };
}

const datasets = new WeakMap<Blob, Dataset>();
function dataset(blob: Blob): Dataset {
  let ds = datasets.get(blob);
  if (!ds) datasets.set(blob, (ds = datasetOf(blob)));
  return ds;
}

// ---------------------------------------------------------------------------------------------
// Streamlit
// ---------------------------------------------------------------------------------------------

interface StreamlitArgs {
  data: unknown;
  parentElement: HTMLElement | ShadowRoot;
  setStateValue: (name: string, value: unknown) => void;
  setTriggerValue: (name: string, value: unknown) => void;
}

interface StateJson extends Partial<Omit<MapOptions, "mask" | "marks">> {
  points: string;
  mask?: string | null;
  marks?: { rows: string; shape: Mark["shape"]; colour: string; label: string }[];
  answer?: { seq: number; details: Record<string, Detail> } | null;
}

const maps = new WeakMap<object, { map: AtlasMap; args: StreamlitArgs; seq: number; answered: number; token: number }>();

export default function streamlitRenderer(args: StreamlitArgs): (() => void) | void {
  const { data, parentElement } = args;
  if (data instanceof Uint8Array) {
    putBlob(data);
    return;
  }
  const state = data as StateJson;
  let entry = maps.get(parentElement);
  if (!entry) {
    const host: Host = {
      click: (row) => entry!.args.setTriggerValue("click", row),
      select: (rows, kind) =>
        entry!.args.setStateValue("selection", { kind, n: rows.length, rows: toBase64(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength)), seq: ++entry!.seq }),
      view: (v: View | null) => entry!.args.setTriggerValue("view", v ? v.text ?? `${v.x},${v.y},${v.zoom}` : ""),
      topic: (t) => entry!.args.setTriggerValue("topic", t === null ? "" : String(t)),
      need: (rows) => entry!.args.setTriggerValue("ask", { rows, seq: ++entry!.seq }),
    };
    const root = parentElement as HTMLElement;
    entry = { map: new AtlasMap(root, host), args, seq: 0, answered: -1, token: 0 };
    maps.set(parentElement, entry);
  }
  entry.args = args;
  const token = ++entry.token;
  const e = entry;
  const wanted = [state.points, state.mask, ...(state.marks || []).map((m) => m.rows)].filter((v): v is string => !!v);
  Promise.all(wanted.map(getBlob)).then((blobs) => {
    if (token !== e.token) return; // a newer state arrived meanwhile
    const byId = new Map(blobs.map((b) => [b.header.id, b]));
    e.map.setData(dataset(byId.get(state.points)!));
    const marks: Mark[] = (state.marks || []).map((m) => ({ ...m, rows: byId.get(m.rows)!.arrays.rows as Uint32Array }));
    const mask = state.mask ? (byId.get(state.mask)!.arrays.bits as Uint8Array) : null;
    const { points, answer, ...rest } = state;
    void points;
    e.map.setOptions({ ...rest, mask, marks } as Partial<MapOptions>);
    if (answer && answer.seq !== e.answered) {
      e.answered = answer.seq;
      e.map.provide(answer.details);
    }
  });
  return () => {
    e.map.destroy();
    maps.delete(parentElement);
  };
}

// ---------------------------------------------------------------------------------------------
// The offline export (and any page without Streamlit)
// ---------------------------------------------------------------------------------------------

/** Mount a map in ``element`` (its own shadow root) for a page of our own. */
export function mount(element: HTMLElement, host: Host): AtlasMap {
  const root = element.shadowRoot || element.attachShadow({ mode: "open" });
  return new AtlasMap(root, host);
}

drain();
(globalThis as any).AtlasMap = { mount, putBlob, getBlob, datasetOf, decode, fromBase64, toBase64, DEFAULTS, version: 1 };
