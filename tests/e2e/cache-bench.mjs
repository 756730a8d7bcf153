// Benchmark (not a test): how long the Cache view's worker takes per product preset on a trace,
// in headless Chromium. For each preset (and none) it opens the Cache view at a fixed size,
// waits for the first answer (the simulation plus the policies' MiniSim curves), then moves the
// size and waits again (the simulation alone). Times are the page's own (sent -> answered). Since
// issue 12 the first answer's curves are a sample, refined in the background: it also waits for
// the refinement and prints its time (the bundle before that prints null). Since the estimate
// (issue 12, second round) the first answer is an estimate from a spatial sample, replaced by the
// exact simulation: `first_answer_ms` is the estimate's time and `exact_ms` the exact one's (the
// bundles before it print the same time for both), with the estimate's hit ratio and rate.
// The kernels' own models (dm-cache, bcache: issue 10) have no estimate and no curves: their
// first answer is the model's (`model_ms`, its passes over the trace), then a new size's; bcache
// runs with 64 KiB buckets (bcache wants more than 512 buckets). Since the variants (issue 12,
// third round) it also changes the write mode, the line size, the policy and the preset, in
// turn, and prints how soon each is answered from the estimates computed ahead
// (`computed_ahead`; null: not from them).
//   node cache-bench.mjs [FILE] [SIZE_BYTES]     default: the bundled sample, 256 MiB
//   PRESETS=none,dm-cache-approx node cache-bench.mjs   only these presets (default: all)
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const file = process.argv[2] ?? join(root, 'tests/data/sample/pgbench.tracefs.txt.zst');
const size = Number(process.argv[3] ?? 256 << 20);
const bin = process.env.BLOCKSIGHT_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', 'blocksight');
const presets = (process.env.PRESETS?.split(',') ?? ['none', 'dm-cache', 'bcache', 'dm-cache-approx', 'bcache-approx', 'opencas', 'opencas-nhit', 'cachecade1', 'cachecade2'])
  .map((p) => (p === 'none' ? '' : p));

const server = spawn(bin, ['serve', '--port', '0', file], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((ok) => server.stdout.on('data', (d) => ok(String(d).trim().split('\n')[0])));
const { context, close } = await launch();
const answered = (page) => page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
  && document.querySelector('[data-testid=cache-sim-time]'), null, { timeout: 600_000, polling: 200 });
const ms = (page) => page.locator('[data-testid=cache-sim-time]').getAttribute('data-value').then(Number);
// Moves the slider a little and waits for the answer at the new size.
async function newSize(page) {
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = String(Number(el.value) + 40);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'true'
    || !document.querySelector('[data-testid=cache-sim-time]'), null, { timeout: 60_000 }).catch(() => {});
  await answered(page);
}

// A kernel model: its answer, then a new size's.
async function kernel(p) {
  const page = await context.newPage();
  await page.goto(`${url}#view=cache&cache=${size}&cpreset=${p}${p.startsWith('bcache') ? '&cbucket=65536' : ''}`);
  await page.locator('[data-testid=model-result]').waitFor({ timeout: 600_000 });
  await answered(page);
  const first = await ms(page);
  const model = await page.locator('[data-testid=model-result]').getAttribute('data-model');
  const read = (id) => page.locator(`[data-testid=${id}]`).getAttribute('data-value').then(Number);
  const hit = await read(model === 'bcache-kernel' ? 'model-cache-hit-ratio' : 'model-read-hit-ratio');
  await newSize(page);
  console.log(JSON.stringify({ preset: p, model, size_bytes: size, hit_ratio: hit, model_ms: first,
    new_size_ms: await ms(page) }));
  await page.close();
}

try {
  for (const p of presets) {
    if (['dm-cache', 'bcache', 'dm-cache-smq', 'bcache-kernel'].includes(p)) {
      await kernel(p);
      continue;
    }
    const page = await context.newPage();
    await page.goto(`${url}#view=cache&cache=${size}${p ? `&cpreset=${p}` : ''}`);
    // The first answer: the estimate (or, before it, the exact answer).
    await page.waitForFunction(() => document.querySelector('[data-testid=sim-hit]'), null, { timeout: 600_000, polling: 50 });
    const estimated = await page.evaluate(() => {
      const r = document.querySelector('[data-testid=sim-result]');
      const e = document.querySelector('[data-testid=cache-estimate]');
      return r?.dataset.final === 'false' ? {
        hit: Number(document.querySelector('[data-testid=sim-hit]').dataset.value),
        rate: e ? Number(e.dataset.value) : null,
      } : null;
    });
    await answered(page);
    const withCurves = await ms(page);
    const firstEl = page.locator('[data-testid=cache-first-time]');
    const first = (await firstEl.count()) ? Number(await firstEl.getAttribute('data-value')) : withCurves;
    const hit = await page.locator('[data-testid=sim-hit]').getAttribute('data-value');
    // The refinement of the sampled curves (absent before issue 12).
    const state = page.locator('[data-testid=cache-curves-state]');
    let refined = null;
    let rate = null;
    if (await state.count()) {
      rate = Number(await state.getAttribute('data-rate'));
      await page.waitForFunction(() => document.querySelector('[data-testid=cache-curves-state]')?.dataset.value === 'done',
        null, { timeout: 600_000, polling: 200 });
      refined = Number(await state.getAttribute('data-refined-ms'));
    }
    await newSize(page);
    const simOnly = await ms(page);
    // A new write mode, then a new line size: answered from the estimates the worker computed
    // ahead (once they are in: `variants_ready_ms` after the new size's exact answer), in the
    // page's time from the select's change event to the answer on the page.
    const ahead = {};
    const someIn = () => page.waitForFunction(() => Number(document.querySelector('[data-testid=cache-sim]')?.dataset.variants) > 0,
      null, { timeout: 600_000, polling: 20 });
    const ready = () => page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.variantsDone === 'true',
      null, { timeout: 600_000, polling: 20 });
    const t = Date.now();
    await someIn();
    ahead.line_sizes_and_modes_ready_ms = Date.now() - t;
    await ready();
    ahead.variants_ready_ms = Date.now() - t;
    for (const [control, value] of [['cache-mode', 'wb'], ['cache-line', String(64 << 10)], ['cache-policy', 'sieve'],
      ['cache-preset', 'dm-cache-approx']]) {
      await ready();
      await page.evaluate(() => {
        window.aheadAt = null;
        document.addEventListener('change', () => { window.changedAt = performance.now(); }, { capture: true, once: true });
        const seen = new MutationObserver(() => {
          if (document.querySelector('[data-testid=cache-variant]')) { window.aheadAt = performance.now(); seen.disconnect(); }
        });
        seen.observe(document, { subtree: true, childList: true, attributes: true });
      });
      await page.locator(`[data-testid=${control}]`).selectOption(value);
      await page.waitForFunction(() => window.aheadAt !== null, null, { timeout: 60_000, polling: 10 }).catch(() => {});
      ahead[`${control.slice(6)}_ms`] = await page.evaluate(() => window.aheadAt && window.aheadAt - window.changedAt);
      await answered(page);
    }
    console.log(JSON.stringify({ preset: p || 'none', size_bytes: size, line_hit_ratio: Number(hit),
      first_answer_ms: first, estimate: estimated, exact_ms: withCurves, first_curves_rate: rate,
      curves_refined_ms: refined, new_size_exact_ms: simOnly, computed_ahead: ahead }));
    await page.close();
  }
} finally {
  await close();
  server.kill();
}
