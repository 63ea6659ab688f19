// Label placement: most important first, each label at the first of its candidate positions that
// overlaps no label already placed and stays inside the map; a label with no free position is
// left out at this zoom (zooming in spreads the anchors apart, so it appears). Text widths are
// measured with the canvas's own font metrics, not estimated.

export type Box = [number, number, number, number]; // x0, y0, x1, y1 in CSS pixels

export interface LabelRequest {
  key: string;
  text: string;
  x: number; // anchor, CSS pixels
  y: number;
  size: number; // font size, CSS pixels
  bold: boolean;
  colour: string;
  kind: "overlay" | "highlight" | "topic" | "title";
  wrap: number; // break into two lines beyond this many characters (0: never)
  boxed: boolean; // a white box with a coloured border behind the text
  side: "centre" | "right"; // centred on the anchor, or beside a point
  topic?: number;
  around?: Box; // where the points it names lie: tried first just outside this box, not over it
}

export interface Placed {
  req: LabelRequest;
  lines: string[];
  box: Box;
  font: string;
  lineHeight: number;
}

export const FONT_FAMILY = '"Source Sans Pro", "Segoe UI", system-ui, -apple-system, Helvetica, Arial, sans-serif';

export function fontOf(req: { size: number; bold: boolean }): string {
  return `${req.bold ? 600 : 500} ${req.size.toFixed(1)}px ${FONT_FAMILY}`;
}

/** ``text`` in at most two lines, broken at the space nearest the middle when longer than ``wrap``. */
export function wrapText(text: string, wrap: number): string[] {
  if (!wrap || text.length <= wrap) return [text];
  const mid = text.length / 2;
  let best = -1;
  for (let i = 0; i < text.length; i++) if (text[i] === " " && (best < 0 || Math.abs(i - mid) < Math.abs(best - mid))) best = i;
  return best < 0 ? [text] : [text.slice(0, best), text.slice(best + 1)];
}

class BoxIndex {
  private cells = new Map<number, Box[]>();
  private readonly size = 96;
  add(b: Box): void {
    for (const c of this.keys(b)) {
      let list = this.cells.get(c);
      if (!list) this.cells.set(c, (list = []));
      list.push(b);
    }
  }
  hits(b: Box): boolean {
    for (const c of this.keys(b)) {
      const list = this.cells.get(c);
      if (list) for (const o of list) if (b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3]) return true;
    }
    return false;
  }
  private *keys(b: Box): Generator<number> {
    const s = this.size;
    for (let gy = Math.floor(b[1] / s); gy <= Math.floor(b[3] / s); gy++)
      for (let gx = Math.floor(b[0] / s); gx <= Math.floor(b[2] / s); gx++) yield (gy + 4096) * 8192 + (gx + 4096);
  }
}

export class LabelPlacer {
  private widths = new Map<string, number>();
  constructor(private ctx: CanvasRenderingContext2D) {}

  private width(text: string, font: string): number {
    const key = font + "\u0000" + text;
    let w = this.widths.get(key);
    if (w === undefined) {
      this.ctx.font = font;
      w = this.ctx.measureText(text).width;
      if (this.widths.size > 20000) this.widths.clear();
      this.widths.set(key, w);
    }
    return w;
  }

  /**
   * ``lines`` as they are when each fits in ``room`` pixels; otherwise ``text`` in two lines broken
   * near the middle, each line that is still too wide cut with "…". A label wider than a small map
   * (a paper's map beside its abstract) would otherwise run past both edges, cut on each side.
   */
  private fit(lines: string[], text: string, font: string, room: number): string[] {
    if (room <= 0 || lines.every((l) => this.width(l, font) <= room)) return lines;
    return wrapText(text, 1).map((line) => {
      let cut = line;
      while (cut.length > 1 && this.width(cut === line ? cut : cut + "…", font) > room) cut = cut.slice(0, -1).trimEnd();
      return cut === line ? line : cut + "…";
    });
  }

  /**
   * Place ``reqs`` (most important first) in a ``w`` x ``h`` map.
   * @param reserved boxes no label may cover (marks, the tooltip's anchor).
   */
  place(reqs: LabelRequest[], w: number, h: number, reserved: Box[] = []): Placed[] {
    const index = new BoxIndex();
    for (const b of reserved) index.add(b);
    const out: Placed[] = [];
    for (const req of reqs) {
      const font = fontOf(req);
      const pad = req.boxed ? 5 : 2;
      const lines = this.fit(wrapText(req.text, req.wrap), req.text, font, w - 2 - 2 * pad);
      const lineHeight = req.size * 1.18;
      const tw = Math.max(...lines.map((l) => this.width(l, font))) + 2 * pad;
      const th = lines.length * lineHeight + 2 * pad - (req.boxed ? 0 : 2);
      const candidates: [number, number][] =
        req.side === "right"
          ? [
              [req.x + 6, req.y - th / 2],
              [req.x - 6 - tw, req.y - th / 2],
              [req.x + 2, req.y - th - 3],
              [req.x + 2, req.y + 3],
              [req.x - tw - 2, req.y - th - 3],
              [req.x - tw - 2, req.y + 3],
            ]
          : [
              [req.x - tw / 2, req.y - th / 2],
              [req.x - tw / 2, req.y - th - 4],
              [req.x - tw / 2, req.y + 4],
              [req.x + 6, req.y - th / 2],
              [req.x - 6 - tw, req.y - th / 2],
            ];
      const must = req.kind === "overlay" || req.kind === "highlight";
      let placed: Box | null = null;
      if (req.around) {
        // beside the points it names (above, below, right, left of most of them), whole and
        // clear of other labels; else as any label, over them
        const [x0, y0, x1, y1] = req.around;
        const mid = Math.min(Math.max(req.x - tw / 2, 1), w - 1 - tw); // centred, or as near as the map allows
        for (const [bx, by] of [
          [mid, y0 - th - 4],
          [mid, y1 + 4],
          [x1 + 6, req.y - th / 2],
          [x0 - 6 - tw, req.y - th / 2],
        ]) {
          const box: Box = [bx, by, bx + tw, by + th];
          if (box[0] < 1 || box[1] < 1 || box[2] > w - 1 || box[3] > h - 1 || index.hits(box)) continue;
          placed = box;
          break;
        }
      }
      for (const [cx, cy] of placed ? [] : candidates) {
        // A label near the map's edge moves inward by up to half its size rather than disappear.
        const bx = req.side === "centre" ? Math.min(Math.max(cx, Math.min(1, cx + tw / 2)), Math.max(w - 1 - tw, cx - tw / 2)) : cx;
        const by = Math.min(Math.max(cy, Math.min(1, cy + th / 2)), Math.max(h - 1 - th, cy - th / 2));
        const box: Box = [bx, by, bx + tw, by + th];
        const inside = box[0] >= 1 && box[1] >= 1 && box[2] <= w - 1 && box[3] <= h - 1;
        if (!inside && !must) continue;
        if (index.hits(box)) continue;
        placed = box;
        break;
      }
      if (!placed && must) {
        const [bx, by] = candidates[0];
        placed = [bx, by, bx + tw, by + th];
      }
      if (!placed) continue;
      index.add(placed);
      out.push({ req, lines, box: placed, font, lineHeight });
    }
    return out;
  }
}
