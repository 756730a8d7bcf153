// Benchmark (not a test): time from choosing a trace to the first chart, in headless Chromium.
//   node bench.mjs 100        generates a ~100 MB CSV trace (once) and measures it
//   node bench.mjs FILE       measures FILE
//   ... --export              then also times "Export report" (and prints the file's size)
//   WORKERS=1 node bench.mjs  the page believes the machine has one core: the load runs in one
//                             worker instead of two (hot data in the second), for comparison
//   MEM=1 node bench.mjs ...  also samples memory every 0.5 s from /proc (Linux): the peak RSS of
//                             the renderer (the page and its workers) and the peak PSS of all of
//                             Chromium's processes together (each shared page counted once, in
//                             proportion), before the file is chosen and while it loads
// Prints the drop -> first chart time (the live load-over-time chart drawn while reading, or the
// first view's chart for a small trace) and the drop -> results time (the full analysis).
import { spawn, execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const arg = process.argv[2] ?? '100';
const exporting = process.argv.includes('--export');
const bin = process.env.BLOCKSIGHT_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', 'blocksight');

/// A synthetic but realistic-shaped trace in Blocksight's CSV export format: 70% reads, a skewed
/// (Zipf-like) address distribution over 64 GiB, 4-64 KiB requests, 20k requests per second.
async function generate(megabytes, path) {
  const out = createWriteStream(path);
  out.write('time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid\n');
  let bytes = 0;
  let i = 0;
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  while (bytes < megabytes * 1e6) {
    let chunk = '';
    for (let k = 0; k < 10000; k++, i++) {
      const block = Math.floor(Math.pow(rnd(), 3) * 16777216);
      const len = 4096 << Math.floor(rnd() * 5);
      const line = `${i * 50000},sdb,${block * 4096},${len},${rnd() < 0.7 ? 'read' : 'write'},${100000 + Math.floor(rnd() * 900000)},${1000 + (i % 7)}\n`;
      chunk += line;
    }
    bytes += chunk.length;
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
}

/// The processes descending from this one (Chromium's browser, renderer, GPU and utility
/// processes), each with its PSS and RSS in KiB and whether it is a renderer.
function chromiumMemory() {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch { /* gone */ }
  }
  const out = [];
  const walk = (pid) => {
    for (const c of children.get(pid) ?? []) {
      try {
        const rollup = readFileSync(`/proc/${c}/smaps_rollup`, 'utf8');
        const field = (k) => Number((rollup.match(new RegExp(`^${k}:\\s+(\\d+)`, 'm')) ?? [0, 0])[1]);
        const cmd = readFileSync(`/proc/${c}/cmdline`, 'utf8');
        out.push({ pid: c, pss: field('Pss'), rss: field('Rss'), renderer: cmd.includes('--type=renderer') });
      } catch { /* gone */ }
      walk(c);
    }
  };
  walk(process.pid);
  return out;
}

/// Samples `chromiumMemory` every 0.5 s until `stop()`, which returns the peaks in MB.
function sampleMemory() {
  const peak = { renderer_rss_mb: 0, all_pss_mb: 0 };
  const take = () => {
    const procs = chromiumMemory();
    const pss = procs.reduce((a, p) => a + p.pss, 0) / 1024;
    const rss = Math.max(0, ...procs.filter((p) => p.renderer).map((p) => p.rss)) / 1024;
    peak.all_pss_mb = Math.max(peak.all_pss_mb, Math.round(pss));
    peak.renderer_rss_mb = Math.max(peak.renderer_rss_mb, Math.round(rss));
  };
  take();
  const timer = setInterval(take, 500);
  return () => { clearInterval(timer); take(); return peak; };
}

let file = arg;
if (/^\d+$/.test(arg)) {
  mkdirSync(join(root, 'target/e2e-work'), { recursive: true });
  file = join(root, 'target/e2e-work', `bench-${arg}MB.csv`);
  if (!existsSync(file)) await generate(Number(arg), file);
}
const size = statSync(file).size;
const server = spawn(bin, ['serve', '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((ok) => server.stdout.on('data', (d) => ok(String(d).trim().split('\n')[0])));
const { context, close } = await launch();
if (process.env.WORKERS === '1') {
  await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 1 }));
}
const page = await context.newPage();
await page.goto(url);
const measuring = process.env.MEM === '1';
let idle = null;
let stopSampling = null;
if (measuring) {
  await page.waitForTimeout(2000);
  idle = sampleMemory()();
  stopSampling = sampleMemory();
}
await page.locator('[data-testid=file-input]').setInputFiles(file);
await page.waitForFunction(() => ['ready', 'failed'].includes(document.querySelector('main')?.dataset.phase), null, { timeout: 3_600_000, polling: 500 });
if (measuring) console.log(JSON.stringify({ memory_before_file: idle, memory_peak_loading: stopSampling() }));
await page.waitForFunction(() => window.__blocksightTimings?.['first-chart'], null, { timeout: 60_000 }).catch(() => {});
const t = await page.evaluate(() => window.__blocksightTimings);
const phase = await page.evaluate(() => document.querySelector('main').dataset.phase);
const events = await page.locator('[data-testid=card-events]').getAttribute('data-value').catch(() => null);
const loadText = await page.locator('[data-testid=load-time]').innerText().catch(() => '');
console.log(JSON.stringify({ file, size_bytes: size, phase, events, drop_to_first_chart_ms: t && t['first-chart'] - t.drop, drop_to_results_ms: t && t.results - t.drop, load: loadText }));
if (phase === 'failed') console.log(await page.locator('[data-testid=error-text]').innerText());
if (exporting && phase === 'ready') {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 3_600_000 }),
    page.locator('[data-testid=export-report]').click(),
  ]);
  const out = join(root, 'target/e2e-work', download.suggestedFilename());
  await download.saveAs(out);
  const status = page.locator('[data-testid=export-status][data-bytes]');
  await status.waitFor();
  console.log(JSON.stringify({ export_ms: Number(await status.getAttribute('data-millis')),
    report_bytes: statSync(out).size, status: await status.innerText() }));
}
await close();
server.kill();
