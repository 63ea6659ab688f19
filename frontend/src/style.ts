// The map's own stylesheet, inside its shadow root (nothing leaks into the page, nothing from the
// page leaks in). ``--s`` is the text scale (1 on a laptop, about 1.5 when presenting).

export const CSS = `
:host { display: block; }
.atlas { position: relative; display: flex; width: 100%; height: 100%; min-height: 160px; font-family: "Source Sans Pro", "Segoe UI", system-ui, -apple-system, Helvetica, Arial, sans-serif;
  color: #1f2328; font-size: calc(14px * var(--s, 1)); box-sizing: border-box; }
.atlas *, .atlas *::before, .atlas *::after { box-sizing: border-box; }
.atlas [hidden] { display: none !important; }
.stage { position: relative; flex: 1 1 auto; min-width: 0; height: 100%; overflow: hidden; border: 1px solid #e3e6ea; border-radius: 8px; background: #fff; touch-action: none; outline: none; }
.stage:focus-visible { box-shadow: 0 0 0 2px #0072B2; }
.stage canvas { position: absolute; left: 0; top: 0; width: 100%; height: 100%; display: block; }
.stage.pan { cursor: grab; } .stage.pan.dragging { cursor: grabbing; } .stage.box, .stage.lasso { cursor: crosshair; }
.stage.onpoint { cursor: pointer; }
.tools { position: absolute; left: 8px; top: 8px; display: flex; gap: 4px; z-index: 3; background: rgba(255,255,255,.92); border: 1px solid #e3e6ea; border-radius: 8px; padding: 3px; }
.tools button, .legend-toggle { width: calc(30px * var(--s, 1)); height: calc(30px * var(--s, 1)); display: inline-flex; align-items: center; justify-content: center; border: 1px solid transparent; border-radius: 6px; background: transparent; color: #1f2328; cursor: pointer; padding: 0; }
.tools button:hover, .legend-toggle:hover { background: #eef1f4; }
.tools button[aria-pressed="true"] { background: #dbeafe; border-color: #93c5fd; }
.tools .sep { width: 1px; background: #e3e6ea; margin: 3px 2px; }
.tools svg, .legend-toggle svg { width: calc(18px * var(--s, 1)); height: calc(18px * var(--s, 1)); }
.tip { position: absolute; z-index: 4; pointer-events: none; max-width: calc(380px * var(--s, 1)); background: #fff; border: 1px solid #c9d1d9; border-radius: 6px; padding: 7px 10px;
  box-shadow: 0 4px 14px rgba(0,0,0,.12); line-height: 1.35; font-size: calc(13.5px * var(--s, 1)); }
.tip .t { font-weight: 600; display: block; overflow-wrap: anywhere; }
.tip .m { color: #57606a; display: block; margin-top: 3px; }
.tip .sw { display: inline-block; width: .75em; height: .75em; border-radius: 50%; margin-right: .35em; vertical-align: -.05em; }
.tip .hint { color: #57606a; font-size: .9em; display: block; margin-top: 3px; }
.zoom-note { position: absolute; left: 50%; bottom: calc(12px * var(--s, 1)); transform: translateX(-50%); z-index: 3; background: rgba(255,255,255,.95); border: 1px solid #c9d1d9; border-radius: 8px; padding: 6px 10px; color: #1f2328; font-size: calc(13.5px * var(--s, 1)); box-shadow: 0 2px 8px rgba(0,0,0,.08); white-space: nowrap; }
.zoom-note button { font: inherit; color: #0969da; background: none; border: 0; padding: 0 0 0 4px; cursor: pointer; text-decoration: underline; }
.zoom-note[hidden] { display: none; }
.status { position: absolute; left: 50%; top: 50%; transform: translate(-50%, -50%); z-index: 2; background: rgba(255,255,255,.9); padding: 8px 14px; border-radius: 8px; color: #57606a; pointer-events: none; }
.status.error { color: #b42318; border: 1px solid #f3b8b0; pointer-events: auto; }
.legend { flex: 0 0 calc(225px * var(--s, 1)); height: 100%; display: flex; flex-direction: column; margin-left: 10px; border: 1px solid #e3e6ea; border-radius: 8px; background: #fff; min-width: 0; }
.legend[hidden] { display: none; }
.legend .head { display: flex; align-items: center; gap: 6px; padding: 7px 10px 5px; font-weight: 600; color: #57606a; font-size: .86em; text-transform: uppercase; letter-spacing: .03em; }
.legend .head .clear { margin-left: auto; text-transform: none; letter-spacing: 0; font-weight: 400; border: none; background: none; color: #0969da; cursor: pointer; font-size: 1em; padding: 0; }
.legend input { margin: 0 8px 6px; padding: 4px 8px; border: 1px solid #d0d7de; border-radius: 6px; font: inherit; font-size: .92em; }
.legend ul { list-style: none; margin: 0; padding: 0 4px 6px; overflow-y: auto; flex: 1 1 auto; }
.legend li button { display: flex; align-items: center; gap: 7px; width: 100%; text-align: left; border: 1px solid transparent; border-radius: 6px; background: none; padding: 4px 6px; cursor: pointer; font: inherit; color: inherit; font-size: .92em; line-height: 1.25; }
.legend li button:hover, .legend li button.hover { background: #f3f5f7; }
.legend li button.on { background: #fff8c5; border-color: #e3c85a; font-weight: 600; }
.legend li button.none { color: #8c959f; }
.legend .sw { flex: none; width: .8em; height: .8em; border-radius: 50%; }
.legend .lab { flex: 1 1 auto; min-width: 0; overflow: hidden; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow-wrap: anywhere; }
.legend .weak { flex: none; margin-left: -4px; }
.legend .n { flex: none; color: #57606a; font-variant-numeric: tabular-nums; font-size: .9em; }
.legend-toggle { position: absolute; right: 8px; top: 8px; z-index: 3; width: auto; padding: 0 10px; gap: 6px; background: rgba(255,255,255,.92); border: 1px solid #e3e6ea; font: inherit; font-size: .92em; }
.legend.floating { position: absolute; right: 8px; top: calc(46px * var(--s, 1)); bottom: 8px; z-index: 3; margin: 0; box-shadow: 0 4px 14px rgba(0,0,0,.12); }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

const svg = (path: string) =>
  `<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">${path}</svg>`;

/** Toolbar icons (our own constant markup, never data). */
export const ICONS = {
  pan: svg('<path d="M12 2v20M2 12h20M12 2l-3 3M12 2l3 3M12 22l-3-3M12 22l3-3M2 12l3-3M2 12l3 3M22 12l-3-3M22 12l-3 3"/>'),
  box: svg('<rect x="4" y="4" width="16" height="16" rx="1" stroke-dasharray="3 2"/>'),
  lasso: svg('<path d="M7 20c-2-1-3-3-2-5 1-3 5-3 6-6 1-2-1-4 2-5 4-1 8 2 7 6-1 5-9 4-10 8"/><circle cx="7" cy="20" r="1.5"/>'),
  plus: svg('<path d="M12 5v14M5 12h14"/>'),
  minus: svg('<path d="M5 12h14"/>'),
  reset: svg('<path d="M4 9V4h5M20 15v5h-5M4 4l6 6M20 20l-6-6"/>'),
  png: svg('<path d="M12 3v12M7 10l5 5 5-5M5 21h14"/>'),
  list: svg('<path d="M8 6h13M8 12h13M8 18h13"/><circle cx="3.5" cy="6" r="1"/><circle cx="3.5" cy="12" r="1"/><circle cx="3.5" cy="18" r="1"/>'),
};
