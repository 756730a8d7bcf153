// Times the web app's Cache view job (simulate.rs's `Simulate`, as the worker runs it) in wasm32
// under Node on a .bst file: decode + the exact simulation alone, and the first answer (the
// estimate stage: the cache and the policies' curves from one spatial sample).
// Usage: node sim.mjs PKG_DIR FILE.bst FOOTPRINT_LINES LINE_ACCESSES [SIZE_BYTES]
// (`cargo run --release -p analyzer-core --example cache_stages -- FILE.bst` prints both counts.)
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const pkg = require(path.resolve(process.argv[2], "wasm_decode_bench.js"));
const bytes = pkg.load(readFileSync(process.argv[3]));
const footprint = Number(process.argv[4]);
const accesses = Number(process.argv[5]);
const size = Number(process.argv[6] ?? 256 * 2 ** 20);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
for (const first of [false, true]) {
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now(); const c0 = cpu();
    const hit = pkg.simulate(size, first, footprint, accesses);
    console.log(`wasm ${first ? "first answer (estimate + curves)" : "exact simulation"}: ${bytes} bytes, hit ${hit.toFixed(4)}, wall ${((performance.now() - t0) / 1000).toFixed(2)} s, cpu ${(cpu() - c0).toFixed(2)} s`);
  }
}
