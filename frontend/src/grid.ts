// A uniform grid over the map: which points lie near a place (hover, click) or inside a shape
// (box and lasso selection), without looking at every point. Built once per corpus in O(n)
// with a counting sort (about 8 bytes a point).

export class Grid {
  readonly x0: number;
  readonly y0: number;
  readonly cell: number;
  readonly nx: number;
  readonly ny: number;
  private start: Uint32Array; // cell c holds items[start[c] .. start[c + 1])
  private items: Uint32Array;

  constructor(readonly x: Float32Array, readonly y: Float32Array) {
    const n = x.length;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < n; i++) {
      const a = x[i], b = y[i];
      if (!(a === a && b === b)) continue; // NaN: never found
      if (a < x0) x0 = a;
      if (a > x1) x1 = a;
      if (b < y0) y0 = b;
      if (b > y1) y1 = b;
    }
    if (!(x1 >= x0)) (x0 = 0), (x1 = 1), (y0 = 0), (y1 = 1);
    const w = Math.max(x1 - x0, 1e-9), h = Math.max(y1 - y0, 1e-9);
    const cells = Math.max(16, Math.min(1 << 20, Math.ceil(n / 4)));
    this.cell = Math.sqrt((w * h) / cells) || 1;
    this.nx = Math.max(1, Math.ceil(w / this.cell) + 1);
    this.ny = Math.max(1, Math.ceil(h / this.cell) + 1);
    this.x0 = x0;
    this.y0 = y0;
    const count = new Uint32Array(this.nx * this.ny + 1);
    const where = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const c = this.cellOf(x[i], y[i]);
      where[i] = c;
      if (c >= 0) count[c + 1]++;
    }
    for (let c = 1; c < count.length; c++) count[c] += count[c - 1];
    this.start = count.slice();
    const fill = count;
    this.items = new Uint32Array(fill[fill.length - 1]);
    for (let i = 0; i < n; i++) if (where[i] >= 0) this.items[fill[where[i]]++] = i;
  }

  private cellOf(a: number, b: number): number {
    if (!(a === a && b === b)) return -1;
    const cx = Math.min(this.nx - 1, Math.max(0, Math.floor((a - this.x0) / this.cell)));
    const cy = Math.min(this.ny - 1, Math.max(0, Math.floor((b - this.y0) / this.cell)));
    return cy * this.nx + cx;
  }

  /** Call ``visit(i)`` for every point in the cells meeting the rectangle [ax, bx] x [ay, by]. */
  forEachIn(ax: number, ay: number, bx: number, by: number, visit: (i: number) => void): void {
    const cx0 = Math.max(0, Math.floor((ax - this.x0) / this.cell));
    const cx1 = Math.min(this.nx - 1, Math.floor((bx - this.x0) / this.cell));
    const cy0 = Math.max(0, Math.floor((ay - this.y0) / this.cell));
    const cy1 = Math.min(this.ny - 1, Math.floor((by - this.y0) / this.cell));
    for (let cy = cy0; cy <= cy1; cy++)
      for (let cx = cx0; cx <= cx1; cx++) {
        const c = cy * this.nx + cx;
        for (let k = this.start[c], e = this.start[c + 1]; k < e; k++) visit(this.items[k]);
      }
  }
}

/** Whether (px, py) lies inside the polygon ``poly`` ([x0, y0, x1, y1, ...]); even-odd rule. */
export function insidePolygon(px: number, py: number, poly: number[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 2; i < poly.length; j = i, i += 2) {
    const xi = poly[i], yi = poly[i + 1], xj = poly[j], yj = poly[j + 1];
    if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}
