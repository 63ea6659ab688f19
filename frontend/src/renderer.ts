// WebGL 2 point renderer: every paper is one gl.POINTS vertex fed from binary arrays.
//
// Points are drawn into an offscreen texture (a "snapshot" of one camera). The screen shows that
// texture moved and scaled to the current camera, one textured quad per frame, so panning and
// zooming stay smooth whatever the number of points; the points are drawn again when the camera
// rests, in chunks spread over animation frames (a million points on a software renderer take
// most of a second), and the new snapshot replaces the old one when its last chunk is done.
//
// Draw order is the order of an index buffer sorted by layer (filtered-out context, faded,
// normal, highlighted), so the dot a reader sees on top is the one ``pick`` reports.

export interface Camera {
  cx: number; // centre, map units
  cy: number;
  scale: number; // CSS pixels per map unit
}

export const LAYERS = 4; // 0 context (filtered out), 1 faded, 2 normal, 3 highlighted
export const STYLE_REASSIGNED = 4;

export interface Look {
  sizes: [number, number, number, number]; // CSS pixels per layer
  alphas: [number, number, number, number];
  reassignedAlpha: number; // multiplies the alpha of reassigned papers
}

const POINT_VS = `#version 300 es
in float ax; in float ay; in float atopic; in float astyle;
uniform vec2 uCenter; uniform vec2 uScale;
uniform vec4 uSizes; uniform vec4 uAlphas; uniform float uReassigned;
uniform sampler2D uPalette; uniform int uPaletteW; uniform int uTopics; uniform vec4 uContext; uniform vec4 uOutlier;
out vec4 vColor; out float vRing; out float vSize;
void main() {
  int s = int(astyle + 0.5);
  int layer = s & 3;
  int t = int(atopic + 0.5);
  vec4 c = layer == 0 ? uContext : (t >= uTopics ? uOutlier : texelFetch(uPalette, ivec2(t % uPaletteW, t / uPaletteW), 0));
  float a = uAlphas[layer] * ((s & 4) != 0 ? uReassigned : 1.0);
  gl_Position = vec4((ax - uCenter.x) * uScale.x, (ay - uCenter.y) * uScale.y, 0.0, 1.0);
  gl_PointSize = uSizes[layer];
  vSize = uSizes[layer];
  vColor = vec4(c.rgb, a);
  vRing = layer == 3 ? 1.0 : 0.0;
}`;

const POINT_FS = `#version 300 es
precision mediump float;
in vec4 vColor; in float vRing; in float vSize;
out vec4 outColor;
void main() {
  vec2 p = gl_PointCoord * 2.0 - 1.0;
  float r = length(p);
  float aa = 2.0 / max(vSize, 1.0);
  float edge = 1.0 - smoothstep(1.0 - aa, 1.0, r);
  if (edge <= 0.0) discard;
  vec3 col = vColor.rgb;
  float a = vColor.a;
  if (vRing > 0.5 && r > 1.0 - 1.8 / max(vSize, 1.0)) { col = mix(col, vec3(0.12, 0.137, 0.157), 0.85); a = 1.0; }
  a *= edge;
  outColor = vec4(col * a, a);
}`;

const QUAD_VS = `#version 300 es
in vec2 apos; uniform vec4 uRect; out vec2 vUv;
void main() { vUv = apos; gl_Position = vec4(mix(uRect.xy, uRect.zw, apos), 0.0, 1.0); }`;

const QUAD_FS = `#version 300 es
precision mediump float;
in vec2 vUv; uniform sampler2D uTex; out vec4 outColor;
void main() { outColor = texture(uTex, vUv); }`;

interface Target {
  tex: WebGLTexture;
  fbo: WebGLFramebuffer;
  w: number; // device pixels
  h: number;
  cam: Camera | null;
  cssW: number;
  cssH: number;
}

export interface RenderStats {
  drawn: number; // points in the last finished snapshot
  fullMs: number; // its time from the first chunk to the GPU signalling the last one done
  presentMs: number; // the last screen frame (CPU side)
  chunks: number;
}

function compile(gl: WebGL2RenderingContext, vs: string, fs: string): WebGLProgram {
  const prog = gl.createProgram()!;
  for (const [type, src] of [
    [gl.VERTEX_SHADER, vs],
    [gl.FRAGMENT_SHADER, fs],
  ] as const) {
    const sh = gl.createShader(type)!;
    gl.shaderSource(sh, src);
    gl.compileShader(sh);
    if (!gl.getShaderParameter(sh, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(sh) || "shader");
    gl.attachShader(prog, sh);
  }
  gl.linkProgram(prog);
  if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog) || "link");
  return prog;
}

export class PointRenderer {
  readonly gl: WebGL2RenderingContext;
  private prog: WebGLProgram;
  private quad: WebGLProgram;
  private vao: WebGLVertexArrayObject;
  private quadVao: WebGLVertexArrayObject;
  private buffers: Record<string, WebGLBuffer> = {};
  private index: WebGLBuffer;
  private palette: WebGLTexture;
  private loc: Record<string, WebGLUniformLocation | null> = {};
  private front: Target | null = null;
  private back: Target | null = null;
  private n = 0;
  private order = 0; // points in the index buffer
  private topics = 0;
  private paletteW = 1;
  look: Look = { sizes: [2, 3, 4, 6], alphas: [0.35, 0.2, 0.8, 0.95], reassignedAlpha: 0.45 };
  private context = [0.82, 0.82, 0.82, 1];
  private outlier = [0.62, 0.62, 0.62, 1];
  private job: { cam: Camera; start: number; next: number; first: number; fence: WebGLSync | null } | null = null;
  private chunk = 250_000;
  private dirty = true; // the snapshot no longer matches the data or the style
  private raf = 0;
  dpr = 1;
  stats: RenderStats = { drawn: 0, fullMs: 0, presentMs: 0, chunks: 0 };
  onDrawn: (() => void) | null = null;

  constructor(readonly canvas: HTMLCanvasElement) {
    const gl = canvas.getContext("webgl2", { antialias: false, alpha: false, preserveDrawingBuffer: false, premultipliedAlpha: true });
    if (!gl) throw new Error("WebGL 2 is not available in this browser");
    this.gl = gl;
    this.prog = compile(gl, POINT_VS, POINT_FS);
    this.quad = compile(gl, QUAD_VS, QUAD_FS);
    for (const name of ["uCenter", "uScale", "uSizes", "uAlphas", "uReassigned", "uPalette", "uPaletteW", "uTopics", "uContext", "uOutlier"])
      this.loc[name] = gl.getUniformLocation(this.prog, name);
    for (const name of ["uRect", "uTex"]) this.loc["q" + name] = gl.getUniformLocation(this.quad, name);
    this.vao = gl.createVertexArray()!;
    this.index = gl.createBuffer()!;
    this.palette = gl.createTexture()!;
    this.quadVao = gl.createVertexArray()!;
    gl.bindVertexArray(this.quadVao);
    const qb = gl.createBuffer()!;
    gl.bindBuffer(gl.ARRAY_BUFFER, qb);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([0, 0, 1, 0, 0, 1, 1, 1]), gl.STATIC_DRAW);
    const ql = gl.getAttribLocation(this.quad, "apos");
    gl.enableVertexAttribArray(ql);
    gl.vertexAttribPointer(ql, 2, gl.FLOAT, false, 0, 0);
    gl.bindVertexArray(null);
  }

  private attribute(name: string, data: ArrayBufferView, type: number, usage: number): void {
    const gl = this.gl;
    gl.bindVertexArray(this.vao);
    let buf = this.buffers[name];
    if (!buf) {
      buf = this.buffers[name] = gl.createBuffer()!;
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      const loc = gl.getAttribLocation(this.prog, name);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, 1, type, false, 0, 0);
    }
    gl.bindBuffer(gl.ARRAY_BUFFER, buf);
    gl.bufferData(gl.ARRAY_BUFFER, data, usage);
    gl.bindVertexArray(null);
  }

  /** The points: positions and topic indexes (``topics`` colours, ``topic >= topics``: outlier). */
  setPoints(x: Float32Array, y: Float32Array, topic: Uint16Array): void {
    const gl = this.gl;
    this.n = x.length;
    this.attribute("ax", x, gl.FLOAT, gl.STATIC_DRAW);
    this.attribute("ay", y, gl.FLOAT, gl.STATIC_DRAW);
    this.attribute("atopic", topic, gl.UNSIGNED_SHORT, gl.STATIC_DRAW);
    this.dirty = true;
  }

  /** Topic colours (RGBA bytes, 4 per topic), the outlier and the context colour. */
  setPalette(rgba: Uint8Array, outlier: number[], context: number[]): void {
    const gl = this.gl;
    this.topics = rgba.length / 4;
    this.paletteW = Math.max(1, Math.min(1024, this.topics));
    const h = Math.max(1, Math.ceil(this.topics / this.paletteW));
    const data = new Uint8Array(this.paletteW * h * 4);
    data.set(rgba);
    gl.bindTexture(gl.TEXTURE_2D, this.palette);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, this.paletteW, h, 0, gl.RGBA, gl.UNSIGNED_BYTE, data);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    this.outlier = outlier;
    this.context = context;
    this.dirty = true;
  }

  /** Per-point style bytes (layer | STYLE_REASSIGNED) and the draw order (rows by layer). */
  setStyle(style: Uint8Array, order: Uint32Array): void {
    const gl = this.gl;
    this.attribute("astyle", style, gl.UNSIGNED_BYTE, gl.DYNAMIC_DRAW);
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.index);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, order, gl.DYNAMIC_DRAW);
    gl.bindVertexArray(null);
    this.order = order.length;
    this.dirty = true;
  }

  setLook(look: Look): void {
    this.look = look;
    this.dirty = true;
  }

  private target(old: Target | null, w: number, h: number): Target {
    const gl = this.gl;
    if (old && old.w === w && old.h === h) return old;
    if (old) {
      gl.deleteTexture(old.tex);
      gl.deleteFramebuffer(old.fbo);
    }
    const tex = gl.createTexture()!;
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, w, h, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    const fbo = gl.createFramebuffer()!;
    gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, tex, 0);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    return { tex, fbo, w, h, cam: null, cssW: 0, cssH: 0 };
  }

  /** Draw points [from, to) of the draw order for ``cam`` into the bound framebuffer (w x h CSS px). */
  private drawPoints(cam: Camera, cssW: number, cssH: number, dpr: number, from: number, to: number): void {
    const gl = this.gl;
    gl.useProgram(this.prog);
    gl.bindVertexArray(this.vao);
    gl.uniform2f(this.loc.uCenter, cam.cx, cam.cy);
    gl.uniform2f(this.loc.uScale, (2 * cam.scale) / cssW, (2 * cam.scale) / cssH);
    const s = this.look.sizes.map((v) => Math.max(1, v * dpr));
    gl.uniform4f(this.loc.uSizes, s[0], s[1], s[2], s[3]);
    gl.uniform4f(this.loc.uAlphas, ...this.look.alphas);
    gl.uniform1f(this.loc.uReassigned, this.look.reassignedAlpha);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.palette);
    gl.uniform1i(this.loc.uPalette, 0);
    gl.uniform1i(this.loc.uPaletteW, this.paletteW);
    gl.uniform1i(this.loc.uTopics, this.topics);
    gl.uniform4f(this.loc.uContext, this.context[0], this.context[1], this.context[2], this.context[3]);
    gl.uniform4f(this.loc.uOutlier, this.outlier[0], this.outlier[1], this.outlier[2], this.outlier[3]);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    if (to > from) gl.drawElements(gl.POINTS, to - from, gl.UNSIGNED_INT, from * 4);
    gl.bindVertexArray(null);
  }

  /** Ask for the points to be drawn again for ``cam`` (progressively, then swapped in). */
  render(cam: Camera, cssW: number, cssH: number): void {
    if (!this.dirty && this.front?.cam && same(this.front.cam, cam) && this.front.cssW === cssW && this.front.cssH === cssH) return;
    if (this.job && same(this.job.cam, cam) && !this.dirty && this.back?.cssW === cssW && this.back?.cssH === cssH) return;
    const w = Math.max(1, Math.round(cssW * this.dpr));
    const h = Math.max(1, Math.round(cssH * this.dpr));
    this.back = this.target(this.back, w, h);
    this.back.cam = { ...cam };
    this.back.cssW = cssW;
    this.back.cssH = cssH;
    this.dirty = false;
    if (this.job?.fence) this.gl.deleteSync(this.job.fence); // a newer camera replaces a draw in progress
    this.job = { cam: { ...cam }, start: performance.now(), next: 0, first: 1, fence: null };
    this.step();
  }

  get busy(): boolean {
    return this.job !== null;
  }

  private step = (): void => {
    this.raf = 0;
    const job = this.job;
    const back = this.back;
    if (!job || !back) return;
    const gl = this.gl;
    if (job.fence) {
      const status = gl.getSyncParameter(job.fence, gl.SYNC_STATUS);
      if (status !== gl.SIGNALED) {
        this.raf = requestAnimationFrame(this.step);
        return;
      }
      gl.deleteSync(job.fence);
      this.job = null;
      const done = this.back!;
      this.back = this.front;
      this.front = done;
      this.stats = { ...this.stats, drawn: this.order, fullMs: performance.now() - job.start };
      this.present(this.lastCam ?? done.cam!, this.lastW || done.cssW, this.lastH || done.cssH);
      this.onDrawn?.();
      return;
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, back.fbo);
    gl.viewport(0, 0, back.w, back.h);
    if (job.next === 0) {
      gl.clearColor(0, 0, 0, 0);
      gl.clear(gl.COLOR_BUFFER_BIT);
    }
    const end = Math.min(this.order, job.next + this.chunk);
    this.drawPoints(job.cam, back.cssW, back.cssH, this.dpr, job.next, end);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    job.next = end;
    this.stats.chunks += 1;
    if (end >= this.order) {
      job.fence = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
      gl.flush();
    }
    this.raf = requestAnimationFrame(this.step);
  };

  private lastCam: Camera | null = null;
  private lastW = 0;
  private lastH = 0;

  /** Show the current snapshot for ``cam`` (moved and scaled): one quad, cheap at any size. */
  present(cam: Camera, cssW: number, cssH: number): void {
    const t0 = performance.now();
    this.lastCam = { ...cam };
    this.lastW = cssW;
    this.lastH = cssH;
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.clearColor(1, 1, 1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    const snap = this.front;
    if (snap?.cam) {
      // The snapshot covers map units [c - size / 2 / scale, c + size / 2 / scale]; place it in clip space.
      const s = snap.cam;
      const x0 = s.cx - snap.cssW / 2 / s.scale, x1 = s.cx + snap.cssW / 2 / s.scale;
      const y0 = s.cy - snap.cssH / 2 / s.scale, y1 = s.cy + snap.cssH / 2 / s.scale;
      const cx = (v: number) => ((v - cam.cx) * cam.scale * 2) / cssW;
      const cy = (v: number) => ((v - cam.cy) * cam.scale * 2) / cssH;
      gl.useProgram(this.quad);
      gl.bindVertexArray(this.quadVao);
      gl.uniform4f(this.loc.quRect, cx(x0), cy(y0), cx(x1), cy(y1));
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, snap.tex);
      gl.uniform1i(this.loc.quTex, 0);
      gl.enable(gl.BLEND);
      gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
      gl.bindVertexArray(null);
    }
    this.stats.presentMs = performance.now() - t0;
  }

  /** Draw every point at once for ``cam`` into a new canvas (PNG download), at ``ratio`` device pixels per CSS pixel. */
  snapshotImage(cam: Camera, cssW: number, cssH: number, ratio: number): HTMLCanvasElement {
    const gl = this.gl;
    const w = Math.round(cssW * ratio), h = Math.round(cssH * ratio);
    const t = this.target(null, w, h);
    gl.bindFramebuffer(gl.FRAMEBUFFER, t.fbo);
    gl.viewport(0, 0, w, h);
    gl.clearColor(1, 1, 1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    this.drawPoints(cam, cssW, cssH, ratio, 0, this.order);
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteTexture(t.tex);
    gl.deleteFramebuffer(t.fbo);
    const out = document.createElement("canvas");
    out.width = w;
    out.height = h;
    const ctx = out.getContext("2d")!;
    const image = ctx.createImageData(w, h);
    for (let row = 0; row < h; row++) image.data.set(pixels.subarray((h - 1 - row) * w * 4, (h - row) * w * 4), row * w * 4);
    ctx.putImageData(image, 0, 0);
    return out;
  }

  destroy(): void {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.job = null;
    const ext = this.gl.getExtension("WEBGL_lose_context");
    ext?.loseContext();
  }
}

function same(a: Camera, b: Camera): boolean {
  return a.cx === b.cx && a.cy === b.cy && a.scale === b.scale;
}
