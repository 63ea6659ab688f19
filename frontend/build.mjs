// Builds dist/atlas-map.js, the map component's one bundle (Streamlit loads it as an ES module;
// the offline export inlines it). The banner records a SHA-256 of every source file, so a test
// can tell, without Node, that the committed bundle was built from the committed sources
// (tests/test_frontend.py recomputes the same hash). Run through `make frontend`.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const here = new URL(".", import.meta.url).pathname;
const SOURCES = ["build.mjs", "package.json", "package-lock.json", "tsconfig.json", "src"];

function files(path) {
  const full = join(here, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).sort().flatMap((name) => files(join(path, name)));
}

export function sourcesHash() {
  const hash = createHash("sha256");
  for (const path of SOURCES.flatMap(files).sort()) {
    hash.update(path.split("\\").join("/") + "\0");
    hash.update(readFileSync(join(here, path)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

const digest = sourcesHash();
const result = await build({
  entryPoints: [join(here, "src/index.ts")],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  legalComments: "none",
  write: false,
  banner: { js: `/* atlas-map bundle | sources sha256 ${digest} | built by frontend/build.mjs: rebuild with \`make frontend\` */` },
});
const code = result.outputFiles[0].text;
if (/<\/script|<!--/i.test(code)) throw new Error("the bundle contains '</script' or '<!--': it could not be inlined in the export");
writeFileSync(join(here, "dist/atlas-map.js"), code);
console.log(`dist/atlas-map.js: ${(code.length / 1024).toFixed(1)} kB, sources ${digest.slice(0, 12)}`);
