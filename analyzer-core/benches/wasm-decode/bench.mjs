// Times the wasm32 build of the native decode loop under Node. Usage: node bench.mjs PKG_DIR
// [FILE.bst] (PKG_DIR: the wasm-bindgen --target nodejs output). Prints one line per codec, like
// the host bench, then the web worker's load job (decode + stat + analysis) on the synthetic
// trace, or on FILE when given.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const pkg = require(path.resolve(process.argv[2], "wasm_decode_bench.js"));
const EVENTS = 1_000_000;

// Process CPU time as well as wall time: on a shared machine the CPU time is the steadier
// number (criterion on the host measures wall time; compare like with like).
const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

for (const lz4 of [false, true]) {
  const bytes = pkg.prepare(EVENTS, lz4);
  pkg.decode(); // warm-up
  const wall = [];
  const cpu = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const c0 = cpuSeconds();
    const n = pkg.decode();
    cpu.push(cpuSeconds() - c0);
    wall.push((performance.now() - t0) / 1000);
    if (n !== EVENTS) throw new Error(`decoded ${n} events, expected ${EVENTS}`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rate = (s) => `${(bytes / s / 1e6).toFixed(0)} MB/s, ${(EVENTS / s / 1e6).toFixed(1)} Mevents/s`;
  console.log(
    `wasm native decode ${lz4 ? "Lz4 " : "None"}: ${(bytes / EVENTS).toFixed(2)} bytes/event; ` +
      `wall ${rate(median(wall))}; cpu ${rate(median(cpu))} (medians of ${wall.length})`,
  );
}

// The worker's load job (`job::load`): decode + stat + analysis.
{
  const file = process.argv[3];
  const bytes = file ? pkg.load(fs.readFileSync(file)) : pkg.prepare(EVENTS, true);
  const events = pkg.analyze(); // warm-up, and the count
  if (!file && events !== EVENTS) throw new Error(`analysed ${events} events, expected ${EVENTS}`);
  const wall = [];
  const cpu = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const c0 = cpuSeconds();
    const n = pkg.analyze();
    cpu.push(cpuSeconds() - c0);
    wall.push((performance.now() - t0) / 1000);
    if (n !== events) throw new Error(`analysed ${n} events, expected ${events}`);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const what = file ? `${path.basename(file)}, ${events} events` : "Lz4";
  console.log(
    `wasm decode + stat + analysis (${what}, ${(bytes / events).toFixed(2)} bytes/event): ` +
      `wall ${(events / median(wall) / 1e6).toFixed(2)} Mevents/s; cpu ${(events / median(cpu) / 1e6).toFixed(2)} Mevents/s (medians of ${wall.length})`,
  );
}
