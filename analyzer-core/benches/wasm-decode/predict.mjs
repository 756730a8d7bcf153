// Times the web app's Array view job (predict.rs's `Predict`, as the worker runs it) in wasm32
// under Node on a .bst file: the estimate the view shows first, with and without the cache
// tier, then (unless ESTIMATE_ONLY=1) the exact numbers. `node --cpu-prof predict.mjs ...`
// writes a profile of where the time goes (wasm functions by name).
// Usage: node predict.mjs PKG_DIR FILE.bst [LAYOUTS] [CACHE_BYTES]
// (the four layouts are array-bench.mjs's; CACHE_BYTES: the Cache view's recommended size,
// `blocksight analyze FILE` prints it)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const pkg = require(path.resolve(process.argv[2], "wasm_decode_bench.js"));
const bytes = pkg.load(readFileSync(process.argv[3]));
const layouts = Number(process.argv[4] ?? 4);
const cache = Number(process.argv[5] ?? 4 * 2 ** 30);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const cases = [["estimate, no cache", 0, true], ["estimate, with cache", cache, true]];
if (process.env.ESTIMATE_ONLY !== "1") cases.push(["exact, with cache", cache, false]);
for (const [name, size, estimate] of cases) {
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now(); const c0 = cpu();
    const iops = pkg.predict(layouts, size, estimate);
    console.log(`wasm ${name}, ${layouts} layouts: ${bytes} bytes, IOPS ${iops.toFixed(0)}, wall ${((performance.now() - t0) / 1000).toFixed(2)} s, cpu ${(cpu() - c0).toFixed(2)} s`);
  }
}
