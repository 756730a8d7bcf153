// Benchmark (not a test): how long the worker takes to predict the Array view, with and without
// the IOPS-vs-latency curve, for one and four layouts, in headless Chromium.
//   node array-bench.mjs [FILE]     (default: the bundled pgbench sample)
//   CASES=0,2 node array-bench.mjs FILE   only these cases (0-3, in the order below)
//   UNTIL=cache node array-bench.mjs FILE  stop each case at the numbers with the cache (on a
//                                          trace of millions of requests the exact stages take minutes)
//   SWITCH=1 ... then choose depth 32 while the worker runs the next stage, and time the new
//                depth's numbers without and with the cache (a newer request replacing a running one)
// Prints, per case, the time from the first request leaving the UI to the numbers at the chosen
// depth being shown, to the numbers with the cache tier, and (with the curve, which comes in a
// later pass) to the curve being drawn. On a trace of more than 262,144 events these are first
// estimates (docs/web.md); the time to the exact numbers (the estimate notice gone) and, with
// the curve, to the exact curve follow.
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, serve } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const file = process.argv[2] ?? join(root, 'tests/data/sample/pgbench.tracefs.txt.zst');
const bin = process.env.BLOCKSIGHT_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', 'blocksight');

const { url: baseUrl, server } = await serve(bin, file);
const browser = await launch();
const four = 'raid5.6.sas-10k.65536.0,raid10.8.nvme.131072.1,raid6.12.sata-7k2.262144.0,raid0.4.sata-ssd.65536.0';
const cases = [
  ['1 layout, no curve', '&curve=0'],
  ['1 layout, curve', ''],
  ['4 layouts, no curve', `&curve=0&arr=${four}`],
  ['4 layouts, curve', `&arr=${four}`],
];
const only = process.env.CASES ? process.env.CASES.split(',').map(Number) : null;
const untilCache = process.env.UNTIL === 'cache';
try {
  for (const [name, hash] of cases.filter((_, i) => !only || only.includes(i))) {
    const page = await browser.context.newPage();
    await page.addInitScript(() => {
      window.__predict = [];
      new MutationObserver(() => {
        const v = document.querySelector('[data-testid=view-array]')?.dataset.computing;
        const last = window.__predict[window.__predict.length - 1];
        if (v && (!last || last.v !== v)) window.__predict.push({ v, t: performance.now() });
        if (!window.__curve && document.querySelector('#chart-latency-curve')) window.__curve = performance.now();
        if (!window.__numbers && document.querySelector('[data-testid=iops-0]')) window.__numbers = performance.now();
        if (!window.__cached && document.querySelector('[data-testid=iops-cache-0]')) window.__cached = performance.now();
        const estimate = !!document.querySelector('[data-testid=array-estimate]');
        if (window.__numbers && !estimate && !window.__exact) window.__exact = performance.now();
        if (window.__exact && !estimate && !window.__exactCurve && document.querySelector('#chart-latency-curve')
          && v === 'false') window.__exactCurve = performance.now();
      }).observe(document, { subtree: true, attributes: true, childList: true });
    });
    const curve = !hash.includes('curve=0');
    await page.goto(baseUrl + '#view=array' + hash);
    // Done: the last stage's answer is shown (no estimate notice, the worker idle) and, with
    // the curve on, drawn.
    await page.waitForFunction(([curve, untilCache]) => {
      if (untilCache) return !!window.__cached;
      const p = window.__predict;
      const idle = p.some((x) => x.v === 'true') && p[p.length - 1].v === 'false';
      const exact = !document.querySelector('[data-testid=array-estimate]');
      return idle && exact && window.__exact && (!curve || window.__exactCurve);
    }, [curve, untilCache], { timeout: 1_800_000, polling: 50 });
    const [p, c, numbers, cached, exact, exactCurve] = await page.evaluate(() =>
      [window.__predict, window.__curve, window.__numbers, window.__cached, window.__exact, window.__exactCurve]);
    const start = p.find((x) => x.v === 'true').t;
    const s = (t) => `${((t - start) / 1000).toFixed(2)} s`;
    console.log(`${name.padEnd(22)} numbers ${s(numbers)}, with cache ${s(cached)}`
      + (untilCache ? '' : (curve ? `, curve ${s(c)}` : '') + `; exact numbers ${s(exact)}`
      + (curve ? `, exact curve ${s(exactCurve)}` : '')));
    if (process.env.SWITCH === '1') {
      await page.waitForTimeout(300);
      const before = await page.evaluate(() => [
        document.querySelector('[data-testid=iops-0]')?.textContent,
        document.querySelector('[data-testid=iops-cache-0]')?.textContent,
        performance.now(),
      ]);
      await page.selectOption('[data-testid=array-qd]', '32');
      const [n, c] = await page.evaluate(([n0, c0]) => new Promise((ok) => {
        let n;
        const look = () => {
          const t = performance.now();
          const v = document.querySelector('[data-testid=iops-0]')?.textContent;
          if (!n && v && v !== n0) n = t;
          const c = document.querySelector('[data-testid=iops-cache-0]')?.textContent;
          if (n && c && c !== c0) ok([n, t]); else setTimeout(look, 5);
        };
        look();
      }), before);
      console.log(`${''.padEnd(22)} depth 32 chosen during the next stage: numbers ${((n - before[2]) / 1000).toFixed(2)} s, with cache ${((c - before[2]) / 1000).toFixed(2)} s`);
    }
    await page.close();
  }
} finally {
  await browser.close();
  server.kill();
}
