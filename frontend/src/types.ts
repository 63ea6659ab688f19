// Shapes shared by the map, its host glue (Streamlit or the offline export) and the Python side.

export interface TopicInfo {
  id: number; // the canonical topic id
  label: string;
  size: number;
  x: number | null; // label position (median of the topic's papers)
  y: number | null;
  colour: string; // "#rrggbb", from explorer/palette.py
}

/** A corpus's points: what every map of it draws. Row ``i`` is paper row ``i``. */
export interface Dataset {
  id: string;
  n: number;
  x: Float32Array;
  y: Float32Array;
  topic: Uint16Array; // index into ``topics``; NO_TOPIC for papers outside any topic
  flags: Uint8Array; // FLAG_* bits
  topics: TopicInfo[];
  outlierColour: string;
  contextColour: string;
  ink: string;
  name: string;
  synthetic: boolean;
  spacing: number; // how close the closest papers lie (map units; 0: unknown): bounds the zoom
}

export const NO_TOPIC = 0xffff;
export const FLAG_REASSIGNED = 1; // clustering left it out at first (a border paper); placed afterwards
export const FLAG_PLACED = 2; // added after the topics were fitted
export const FLAG_MOVED = 4; // moved to another topic by hand

/** Rows drawn with a mark on top of their dots (search hits, the reading list, a selection). */
export interface Mark {
  rows: Uint32Array;
  shape: "ring" | "diamond";
  colour: string;
  label: string;
}

/** An extra point with its own position, label and colour ("this paper", another corpus's paper). */
export interface OverlayPoint {
  x: number;
  y: number;
  label: string;
  colour: string;
  shape: "star" | "circle" | "diamond";
  size?: number; // CSS pixels (before the scale)
  named?: boolean; // its label is drawn beside it (default); false: shown on hover only (many points)
}

/** A view: centre in map units and zoom relative to the whole map (1 = everything fits). */
export interface View {
  x: number;
  y: number;
  zoom: number;
  text?: string; // as the map writes it ("x,y,zoom"): hosts keep this exact string (the map knows its own)
}

export interface Detail {
  title: string;
  topic?: number | null;
  venue?: string | null;
  year?: number | null;
  authors?: string | null;
  note?: string | null;
}

export interface MapOptions {
  highlight: number | null;
  mask: Uint8Array | null; // packed bits, numpy's big-endian bit order: 1 = kept by the filters
  marks: Mark[];
  overlay: OverlayPoint[];
  view: View | null; // a view the host asks for (a link, a tour step); null: the whole map
  viewKey: string; // changes when the host asks for a view again (reset)
  scale: number; // text and mark size (present mode on a projector: about 1.5)
  legend: boolean;
  tools: boolean; // toolbar with box and lasso selection, zoom, PNG
  select: boolean; // box and lasso
  clickable: boolean; // a click reports the paper
  titles: boolean; // paper titles as labels when zoomed in far enough
  topicLabels: "all" | "highlight"; // every topic's label, or only the highlighted topic's (small maps)
  pngName: string;
  caption: string; // accessible name of the map
}

/** What the map tells its host. */
export interface Host {
  click(row: number): void;
  select(rows: Uint32Array, kind: "box" | "lasso"): void;
  view(view: View | null): void;
  topic(topic: number | null): void;
  /** Titles and details of rows the map wants to show (hovered, clicked, or labelled). */
  need(rows: number[]): void;
}
