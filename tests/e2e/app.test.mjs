// Browser end-to-end tests of the web app and the offline report, in Debian's headless Chromium
// through playwright-core. Run with `node --test` in this folder after scripts/build-web.sh.
//
// Each test uses real data: the bundled pgbench sample (tests/data/sample), compared number for
// number with `blocksight stat --json` / `analyze --json` on the same file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, watch } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const SAMPLE = join(root, 'tests/data/sample/pgbench.tracefs.txt.zst');
const SHOTS = join(root, 'target/e2e-screenshots');
const WORK = join(root, 'target/e2e-work');

function blocksightBin() {
  if (process.env.BLOCKSIGHT_BIN) return process.env.BLOCKSIGHT_BIN;
  const dirs = [process.env.CARGO_TARGET_DIR, join(root, 'target')].filter(Boolean);
  for (const d of dirs) {
    for (const p of ['release', 'debug']) {
      const bin = join(d, p, 'blocksight');
      if (existsSync(bin)) return bin;
    }
  }
  execFileSync('cargo', ['build', '-p', 'collector', '--quiet'], { cwd: root, stdio: 'inherit' });
  return join(process.env.CARGO_TARGET_DIR || join(root, 'target'), 'debug', 'blocksight');
}

const BIN = blocksightBin();
// The app under test is the fresh trunk build in dist/, not the bundle built into blocksight.
process.env.BLOCKSIGHT_WEB_DIR ??= join(root, 'dist');
const run = (args) => execFileSync(BIN, args, { cwd: root, maxBuffer: 1 << 28 }).toString();

let browser;
let server;
let baseUrl;
let stat;

before(async () => {
  assert.ok(existsSync(join(root, 'dist/index.html')), 'dist/ missing: run scripts/build-web.sh first');
  mkdirSync(SHOTS, { recursive: true });
  mkdirSync(WORK, { recursive: true });
  stat = JSON.parse(run(['stat', '--json', '-q', SAMPLE]));
  server = spawn(BIN, ['serve', '--port', '0', SAMPLE], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  baseUrl = await new Promise((ok, fail) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line) ok(line.trim());
    });
    server.on('exit', (c) => fail(new Error(`blocksight serve exited with ${c}`)));
  });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  server?.kill();
});

async function waitReady(page) {
  await page.waitForFunction(() => document.querySelector('main')?.dataset.phase === 'ready', null, { timeout: 120_000 });
}

async function card(page, key) {
  return page.locator(`[data-testid=card-${key}]`).getAttribute('data-value');
}

/// Drops `bytes` as a file named `name` on the drop zone, as a user's drag and drop does.
async function drop(page, name, bytes) {
  // The app mounts once its wasm has compiled, after the page's load event.
  await page.locator('[data-testid=drop-zone]').waitFor();
  await page.evaluate(([name, b64]) => {
    const bin = atob(b64);
    const arr = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) arr[i] = bin.charCodeAt(i);
    const dt = new DataTransfer();
    dt.items.add(new File([arr], name));
    const zone = document.querySelector('[data-testid=drop-zone]');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [name, Buffer.from(bytes).toString('base64')]);
}

async function assertOverviewMatchesStat(page) {
  assert.equal(await card(page, 'events'), String(stat.events));
  assert.equal(await card(page, 'reads'), String(stat.reads));
  assert.equal(await card(page, 'writes'), String(stat.writes));
  assert.equal(await card(page, 'footprint'), String(stat.footprint_bytes));
  assert.equal(await card(page, 'duration'), String(stat.duration_nanos));
}

test('dropping the real sample trace shows the same numbers as blocksight stat and analyze', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl.replace(/\?.*$/, ''));
  await drop(page, 'pgbench.tracefs.txt.zst', readFileSync(SAMPLE));
  await waitReady(page);
  await assertOverviewMatchesStat(page);
  const text = await page.locator('[data-testid=trace-line]').innerText();
  assert.match(text, /tracefs/);
  await page.locator('[data-testid=chart-sizes]').waitFor();
  await page.screenshot({ path: join(SHOTS, 'overview.png'), fullPage: true });

  // Hover read-out and "show as table".
  const canvas = page.locator('#chart-sizes');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.6);
  assert.match(await page.locator('[data-testid=readout-sizes]').innerText(), /requests/);
  await page.getByRole('button', { name: 'Show as table' }).first().click();
  const rows = await page.locator('[data-testid=table-sizes] tbody tr').count();
  assert.ok(rows > 0);
  assert.match(page.url(), /table=sizes/);

  // Hot data: the views of the engine's analysis; the heat map toggle lives in the URL.
  await page.locator('[data-testid=tab-hot]').click();
  await page.locator('[data-testid=view-hot]').waitFor();
  await page.locator('[data-testid=heat-writes]').click();
  assert.match(page.url(), /heat=writes/);
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const hot80 = analyze.hot.all.hot_sizes.find((h) => Math.abs(h.io_fraction - 0.8) < 1e-9);
  if (hot80) {
    assert.match(await page.locator('[data-testid=hot80]').innerText(), /80% of block accesses/);
  }
  await page.screenshot({ path: join(SHOTS, 'hot-data.png'), fullPage: true });

  // The brush: drag across the middle of the timeline; every view is re-scoped to the window.
  await page.locator('#chart-timeline').scrollIntoViewIfNeeded();
  const tl = await page.locator('#chart-timeline').boundingBox();
  await page.mouse.move(tl.x + tl.width * 0.4, tl.y + tl.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(tl.x + tl.width * 0.6, tl.y + tl.height * 0.5, { steps: 5 });
  await page.mouse.up();
  await page.locator('[data-testid=window-banner]').waitFor();
  assert.match(page.url(), /win=/);
  await waitReady(page);
  await page.locator('[data-testid=tab-overview]').click();
  const scoped = Number(await card(page, 'events'));
  assert.ok(scoped > 0 && scoped < stat.events, `scoped events ${scoped} of ${stat.events}`);
  await page.screenshot({ path: join(SHOTS, 'time-window.png'), fullPage: true });
  // The link reproduces the window: a new tab given the same trace (served, as by
  // `blocksight serve`) and this hash reads the whole trace, then scopes it.
  const windowLink = baseUrl.replace(/#.*$/, '') + new URL(page.url()).hash;
  await page.getByRole('button', { name: 'Show the whole trace' }).click();
  await page.waitForFunction((n) => document.querySelector('[data-testid=card-events]')?.dataset.value === n, String(stat.events));
  assert.deepEqual(problems, []);
  await page.close();
  const linked = await browser.context.newPage();
  await linked.goto(windowLink);
  await linked.locator('[data-testid=window-banner]').waitFor({ timeout: 120_000 });
  await linked.waitForFunction((n) => document.querySelector('[data-testid=card-events]')?.dataset.value === n, String(scoped), { timeout: 120_000 });
  await linked.close();
});

test('the cache view answers from the precomputed curve when the size moves', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  // `blocksight serve` preloads the trace through ?url=.
  await page.goto(baseUrl);
  await waitReady(page);
  await assertOverviewMatchesStat(page);
  await page.locator('[data-testid=tab-cache]').click();
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const rec = analyze.cache_sizing.recommendation?.recommended;
  if (rec) assert.equal(await card(page, 'recommended'), String(rec.size_bytes));
  const prediction = page.locator('[data-testid=cache-prediction]');
  const before = await prediction.getAttribute('data-value');
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = '150';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction((b) => document.querySelector('[data-testid=cache-prediction]').dataset.value !== b, before);
  const after = await prediction.getAttribute('data-value');
  assert.notEqual(after, before);
  assert.match(page.url(), /cache=\d+/);
  await page.screenshot({ path: join(SHOTS, 'cache.png'), fullPage: true });
  // The URL hash alone reproduces the view.
  const again = await browser.context.newPage();
  await again.goto(page.url());
  await waitReady(again);
  assert.equal(await again.locator('[data-testid=cache-prediction]').getAttribute('data-value'), after);
  await again.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the cache view simulates the chosen cache in the worker and overlays policy curves', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl + '#view=cache');
  await waitReady(page);
  const simDone = () => page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
    && document.querySelector('[data-testid=sim-hit]'), null, { timeout: 120_000 });
  await simDone();
  const value = (id) => page.locator(`[data-testid=${id}]`).getAttribute('data-value').then(Number);

  // The chosen cache (recommended size, LRU, write-through), the same as blocksight simulate.
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const sizing = analyze.cache_sizing;
  const size = sizing.recommendation?.recommended?.size_bytes;
  if (size) {
    const sim = JSON.parse(run(['simulate', '--json', '-q', SAMPLE, '--cache-size', String(size),
      '--line-size', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wt'])).runs[0];
    assert.equal(await value('sim-hit'), sim.result.whole.ratios.line_hit_ratio);
    assert.equal(await value('sim-backend-writes'), sim.result.whole.counts.backend.write_ops);
  }
  // The MiniSim curves of the other policies are drawn over the exact LRU curve: first the
  // estimated ones, labelled with their sample's rate, later the refined ones.
  await page.locator('[data-testid=chart-mrc]').getByRole('button', { name: 'Show as table' }).click();
  const header = await page.locator('[data-testid=table-mrc] thead').innerText();
  assert.ok(header.includes('lru (exact)'), `lru (exact) missing from ${header}`);
  for (const p of ['fifo', 'arc', 's3fifo', 'lirs']) {
    assert.match(header, new RegExp(`${p} \\((MiniSim(, sampled ≥ [0-9.]+%)?|estimate, [0-9.]+% sample)\\)`),
      `${p} (MiniSim … or estimate …) missing from ${header}`);
  }

  // Write-back instead of write-through: recomputed in the worker, again simulate's numbers
  // (fewer bytes written to the disks, but one write per dirty 4 KiB line).
  const wtWrites = await value('sim-backend-writes');
  await page.locator('[data-testid=cache-mode]').selectOption('wb');
  assert.match(page.url(), /cmode=wb/);
  await page.waitForFunction((w) => {
    const el = document.querySelector('[data-testid=sim-backend-writes]');
    return el && Number(el.dataset.value) !== w;
  }, wtWrites, { timeout: 120_000 });
  if (size) {
    const wb = JSON.parse(run(['simulate', '--json', '-q', SAMPLE, '--cache-size', String(size),
      '--line-size', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wb'])).runs[0];
    assert.equal(await value('sim-backend-writes'), wb.result.whole.counts.backend.write_ops);
    assert.equal(await value('sim-backend-reads'), wb.result.whole.counts.backend.read_ops);
    assert.equal(await value('sim-hit'), wb.result.whole.ratios.line_hit_ratio);
  }
  await page.screenshot({ path: join(SHOTS, 'cache-policies.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

// Issue 12: on a trace of more than 512 Ki line accesses the first answer is an estimate from a
// spatial sample, marked as one, and the exact simulation replaces it (blocksight simulate's
// numbers); the estimated curves are refined after. A MutationObserver records every state the
// answer card went through. (The sample trace is small enough for its first answer to be exact.)
/// A 7 MB CSV: 150,000 requests of 8-32 KiB (about 700,000 line accesses), skewed addresses.
function estimateCsv() {
  const file = join(WORK, 'estimate-150k.csv');
  if (!existsSync(file)) {
    const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos'];
    let seed = 11;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 150_000; i++) {
      lines.push(`${i * 20000},sdc,${Math.floor(Math.pow(rnd(), 2) * 4e6) * 4096},${8192 << Math.floor(rnd() * 3)},${rnd() < 0.7 ? 'read' : 'write'},${50000 + Math.floor(rnd() * 500000)}`);
    }
    writeFileSync(file, lines.join('\n') + '\n');
  }
  return file;
}

test('the cache view answers with an estimate first, then the exact simulation, then refined curves', async () => {
  const file = estimateCsv();
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.addInitScript(() => {
    window.simStates = [];
    new MutationObserver(() => {
      const r = document.querySelector('[data-testid=sim-result]');
      if (!r) return;
      const hit = r.querySelector('[data-testid=sim-hit]')?.dataset.value;
      const rate = document.querySelector('[data-testid=cache-estimate]')?.dataset.value ?? null;
      const state = { final: r.dataset.final, hit: Number(hit), rate: rate && Number(rate) };
      const last = window.simStates.at(-1);
      if (!last || last.final !== state.final || last.hit !== state.hit) window.simStates.push(state);
    }).observe(document, { subtree: true, childList: true, attributes: true });
  });
  const size = 256 << 20;
  await page.goto(`${baseUrl.replace(/\?.*$/, '')}#view=cache&cache=${size}&cpol=arc`);
  await page.locator('[data-testid=file-input]').setInputFiles(file);
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
    && document.querySelector('[data-testid=sim-result]')?.dataset.final === 'true', null, { timeout: 180_000 });
  const states = await page.evaluate(() => window.simStates);
  const sim = JSON.parse(run(['simulate', '--json', '-q', file, '--cache-size', String(size),
    '--policy', 'arc', '--mode', 'wt'])).runs[0];
  const exact = sim.result.whole.ratios.line_hit_ratio;
  // First the estimate: not final, with its sampling rate, close to the exact answer.
  assert.equal(states[0].final, 'false', JSON.stringify(states));
  assert.ok(states[0].rate > 0 && states[0].rate < 1, `estimate rate ${states[0].rate}`);
  assert.ok(Math.abs(states[0].hit - exact) <= 0.015, `estimate ${states[0].hit} vs exact ${exact}`);
  // Then the exact answer, the same as blocksight simulate's.
  assert.equal(states.at(-1).final, 'true');
  assert.equal(states.at(-1).hit, exact);
  assert.equal(Number(await page.locator('[data-testid=sim-backend-reads]').getAttribute('data-value')),
    sim.result.whole.counts.backend.read_ops);
  const first = Number(await page.locator('[data-testid=cache-first-time]').getAttribute('data-value'));
  const final = Number(await page.locator('[data-testid=cache-sim-time]').getAttribute('data-value'));
  assert.ok(first <= final, `first answer ${first} ms, exact ${final} ms`);
  // The curves: estimated from the same sample, then refined.
  const curves = page.locator('[data-testid=cache-curves-state]');
  await page.waitForFunction(() => document.querySelector('[data-testid=cache-curves-state]')?.dataset.value === 'done',
    null, { timeout: 300_000 });
  assert.ok(Number(await curves.getAttribute('data-refined-ms')) > 0);
  // A new size answers at once from the arc curve on the page, labelled as an estimate.
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = String(Number(el.value) + 60);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const answer = page.locator('[data-testid=cache-curve-answer]');
  await answer.waitFor({ timeout: 5_000 });
  assert.ok(Number(await answer.getAttribute('data-value')) > 0);
  assert.match(await answer.innerText(), /estimate/);
  await page.screenshot({ path: join(SHOTS, 'cache-estimate.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('a new line size, write mode, policy or preset answers at once from estimates computed ahead, then exactly (issue 12)', async () => {
  // About 700,000 line accesses of 4 KiB: the estimate samples them; at 64 KiB lines few
  // enough that the first answer is exact.
  const file = estimateCsv();
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.addInitScript(() => {
    window.simStates = [];
    document.addEventListener('change', () => { window.changedAt = performance.now(); }, true);
    new MutationObserver(() => {
      const r = document.querySelector('[data-testid=sim-result]');
      if (!r) return;
      const state = {
        final: r.dataset.final,
        hit: Number(r.querySelector('[data-testid=sim-hit]')?.dataset.value),
        ahead: !!document.querySelector('[data-testid=cache-variant]'),
        heading: document.querySelector('[data-testid=cache-sim] h3')?.textContent,
        at: performance.now(),
      };
      const last = window.simStates.at(-1);
      if (!last || last.final !== state.final || last.hit !== state.hit || last.ahead !== state.ahead
        || last.heading !== state.heading) window.simStates.push(state);
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  const size = 256 << 20;
  await page.goto(`${baseUrl.replace(/\?.*$/, '')}#view=cache&cache=${size}&cpol=arc`);
  await page.locator('[data-testid=file-input]').setInputFiles(file);
  await waitReady(page);
  // Both parts: line sizes and modes, then policies and presets.
  const variantsReady = () => page.waitForFunction(
    () => document.querySelector('[data-testid=cache-sim]')?.dataset.variantsDone === 'true', null, { timeout: 180_000 });
  const cli = (args) => JSON.parse(run(['simulate', '--json', '-q', file, '--cache-size', String(size), ...args]))
    .runs[0].result.whole.ratios.line_hit_ratio;
  // Each change (a control of the list: mode, line size, policy, product preset): the
  // answer is on the page in the same render (computed ahead), then the choice's own stages
  // replace it: the same estimate first, then the exact answer, `blocksight simulate`'s.
  for (const [control, value, args, heading, aheadExact] of [
    ['cache-mode', 'wb', ['--policy', 'arc', '--line-size', '4096', '--mode', 'wb'], /arc of .* with 4 KiB lines, wb/, false],
    ['cache-line', String(64 << 10), ['--policy', 'arc', '--line-size', '65536', '--mode', 'wb'], /arc of .* with 64 KiB lines, wb/, true],
    ['cache-policy', 'sieve', ['--policy', 'sieve', '--line-size', '65536', '--mode', 'wb'], /sieve of .* with 64 KiB lines, wb/, true],
    ['cache-preset', 'bcache-approx', ['--preset', 'bcache-approx'], /bcache-approx preset, lru of .* with 4 KiB lines, wt/, false],
    ['cache-preset', 'dm-cache-approx', ['--preset', 'dm-cache-approx'], /dm-cache-approx preset, slru of .* with 64 KiB lines, wb/, true],
  ]) {
    await variantsReady();
    const from = await page.evaluate(() => window.simStates.length);
    await page.locator(`[data-testid=${control}]`).selectOption(value);
    await page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
      && document.querySelector('[data-testid=sim-result]')?.dataset.final === 'true'
      && !document.querySelector('[data-testid=cache-variant]'), null, { timeout: 180_000 });
    const states = (await page.evaluate(() => window.simStates)).slice(from);
    const exact = cli(args);
    const ahead = states[0];
    assert.ok(ahead.ahead, `${control}=${value}: the first answer was computed ahead: ${JSON.stringify(states)}`);
    assert.match(ahead.heading, heading);
    const changedAt = await page.evaluate(() => window.changedAt);
    console.log(`${control}=${value}: answered from the variants ${(ahead.at - changedAt).toFixed(1)} ms after the change event`);
    if (aheadExact) {
      // Few line accesses: the variant was simulated exactly, as its first stage is.
      assert.equal(ahead.final, 'true');
      assert.equal(ahead.hit, exact, `${control}=${value}`);
    } else {
      assert.equal(ahead.final, 'false');
      assert.ok(Math.abs(ahead.hit - exact) <= 0.015, `${control}=${value}: ahead ${ahead.hit} vs exact ${exact}`);
      // The choice's own estimate brings the same number; only the exact answer changes it.
      const changed = states.filter((s) => s.hit !== ahead.hit);
      assert.ok(changed.every((s) => s.final === 'true'), JSON.stringify(states));
    }
    assert.equal(states.at(-1).hit, exact, `${control}=${value}`);
  }
  await page.screenshot({ path: join(SHOTS, 'cache-variants.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('the cache view simulates product presets and admission rules, hits and fills over time, and a brushed window', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl + '#view=cache');
  await waitReady(page);
  const value = (id) => page.locator(`[data-testid=${id}]`).getAttribute('data-value').then(Number);
  // The worker's answer is shown only once it is for the current controls.
  const simDone = () => page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
    && document.querySelector('[data-testid=sim-hit]'), null, { timeout: 180_000 });
  const change = (id, v) => page.locator(`[data-testid=${id}]`).evaluate((el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, v);
  await simDone();

  // A fixed size (the slider), then the bcache preset with Open CAS's nhit admission at N = 3.
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = '300';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.locator('[data-testid=cache-preset]').selectOption('bcache-approx');
  assert.match(page.url(), /cpreset=bcache-approx/);
  assert.match(await page.locator('[data-testid=cache-preset-info]').innerText(), /sequential_cutoff 4\.0M/);
  assert.equal(await page.locator('[data-testid=cache-policy]').inputValue(), 'lru');
  assert.equal(await page.locator('[data-testid=cache-line]').inputValue(), '4096');
  await page.locator('[data-testid=cache-admission]').selectOption('nhit');
  await change('cache-nhit', '3');
  assert.match(page.url(), /cadm=nhit:3/);
  await simDone();
  const size = await value('cache-size-value');
  const sim = JSON.parse(run(['simulate', '--json', '-q', SAMPLE, '--preset', 'bcache-approx', '--admission', 'nhit:3',
    '--cache-size', String(size)])).runs[0];
  const w = sim.result.whole;
  assert.equal(await value('sim-hit'), w.ratios.line_hit_ratio);
  assert.equal(await value('sim-backend-reads'), w.counts.backend.read_ops);
  assert.equal(await value('sim-backend-writes'), w.counts.backend.write_ops);
  assert.ok(w.counts.bypassed_lines > 0, 'nhit:3 leaves some missed lines out');
  console.log(`cache worker: bcache + nhit:3, ${await value('cache-sim-time')} ms`);

  // Hits and fills over time: drawn, with a read-out, and its table totals are simulate's bins.
  const chart = page.locator('[data-testid=chart-hits-fills]');
  await chart.waitFor();
  const canvas = page.locator('#chart-hits-fills');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  assert.match(await page.locator('[data-testid=readout-hits-fills]').innerText(), /line accesses, [\d,]+ hits/);
  await page.screenshot({ path: join(SHOTS, 'cache-presets.png'), fullPage: true });
  await chart.getByRole('button', { name: 'Show as table' }).click();
  assert.match(page.url(), /table=hits-fills/);
  const num = (t) => Number(t.replace(/,/g, ''));
  const rows = page.locator('[data-testid=table-hits-fills] tbody tr');
  assert.equal(await rows.count(), sim.result.bins.length + 1);
  const total = await rows.last().locator('td').allInnerTexts();
  const sum = (k) => sim.result.bins.reduce((a, b) => a + b[k], 0);
  assert.equal(total[0], 'total');
  assert.equal(num(total[1]), sum('requests'));
  assert.equal(num(total[2]), sum('lines'));
  assert.equal(num(total[3]), sum('line_hits'));
  assert.equal(num(total[5]), sum('fills'));
  await chart.getByRole('button', { name: 'Show as chart' }).click();

  // Another preset: dm-cache-approx (slru, 64 KiB lines, write-back, smq admission); the link
  // reproduces it.
  await page.locator('[data-testid=cache-preset]').selectOption('dm-cache-approx');
  assert.doesNotMatch(page.url(), /cadm=/);
  await simDone();
  const dm = JSON.parse(run(['simulate', '--json', '-q', SAMPLE, '--preset', 'dm-cache-approx',
    '--cache-size', String(await value('cache-size-value'))])).runs[0];
  assert.equal(await value('sim-hit'), dm.result.whole.ratios.line_hit_ratio);
  assert.equal(await value('sim-backend-writes'), dm.result.whole.counts.backend.write_ops);
  console.log(`cache worker: dm-cache-approx, ${await value('cache-sim-time')} ms`);
  const again = await browser.context.newPage();
  await again.goto(page.url());
  await waitReady(again);
  // The exact answer (an estimate from a sample comes first).
  await again.locator('[data-testid=sim-result][data-final=true]').waitFor({ timeout: 180_000 });
  assert.equal(await again.locator('[data-testid=cache-preset]').inputValue(), 'dm-cache-approx');
  assert.equal(await again.locator('[data-testid=sim-hit]').getAttribute('data-value'), String(dm.result.whole.ratios.line_hit_ratio));
  await again.close();

  // Back to bcache + seqcut:1MiB, then brush a window on the Hot data view: the simulation
  // covers only that window. The CLI has no time filter, so its input is the trace exported as
  // CSV with only the window's rows (times relative to the first request, as the worker cuts).
  await page.locator('[data-testid=cache-preset]').selectOption('bcache-approx');
  await page.locator('[data-testid=cache-admission]').selectOption('seqcut');
  await change('cache-seqcut', '1MiB');
  assert.match(page.url(), /cadm=seqcut:1048576/);
  await simDone();
  const wholeHit = await value('sim-hit');
  await page.locator('[data-testid=tab-hot]').click();
  await page.locator('#chart-timeline').scrollIntoViewIfNeeded();
  const tl = await page.locator('#chart-timeline').boundingBox();
  await page.mouse.move(tl.x + tl.width * 0.3, tl.y + tl.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(tl.x + tl.width * 0.6, tl.y + tl.height * 0.5, { steps: 5 });
  await page.mouse.up();
  await page.locator('[data-testid=window-banner]').waitFor();
  await waitReady(page);
  await page.locator('[data-testid=tab-cache]').click();
  await page.waitForFunction(() => document.querySelector('[data-testid=cache-sim]')?.dataset.windowNanos
    && document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false', null, { timeout: 180_000 });
  await simDone();
  assert.match(await page.locator('[data-testid=cache-sim] h3').innerText(), /Simulated on the window/);
  const [from, to] = (await page.locator('[data-testid=cache-sim]').getAttribute('data-window-nanos')).split('-').map(BigInt);
  const csv = join(WORK, 'cache-window.csv');
  run(['export', '-q', SAMPLE, '--to', 'csv', '-o', csv]);
  const lines = readFileSync(csv, 'utf8').split('\n').filter((l) => l);
  const t0 = BigInt(lines[1].split(',')[0]);
  const kept = lines.slice(1).filter((l) => {
    const t = BigInt(l.split(',')[0]) - t0;
    return t >= from && t < to;
  });
  assert.ok(kept.length > 0 && kept.length < lines.length - 1);
  const windowCsv = join(WORK, 'cache-window-only.csv');
  writeFileSync(windowCsv, [lines[0], ...kept].join('\n') + '\n');
  const ws = JSON.parse(run(['simulate', '--json', '-q', windowCsv, '--preset', 'bcache-approx', '--admission', 'seqcut:1MiB',
    '--cache-size', String(await value('cache-size-value'))])).runs[0];
  const scopedHit = await value('sim-hit');
  assert.equal(scopedHit, ws.result.whole.ratios.line_hit_ratio);
  assert.equal(await value('sim-backend-reads'), ws.result.whole.counts.backend.read_ops);
  assert.equal(await value('sim-backend-writes'), ws.result.whole.counts.backend.write_ops);
  const wc = ws.result.whole.counts;
  assert.equal(wc.read.requests + wc.write.requests + wc.discards + wc.flushes, kept.length);
  assert.notEqual(scopedHit, wholeHit);
  await page.locator('#chart-hits-fills').waitFor();
  await page.screenshot({ path: join(SHOTS, 'cache-window.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

// Issue 10, one engine: the product choices dm-cache and bcache run the kernels' own models in
// the worker, the job `blocksight simulate --preset dm-cache|bcache` runs, so every counter is
// the CLI's, for the same size, mode and model settings.
test('the cache view runs the kernels\' own models, dm-cache and bcache, with the counters of blocksight simulate --preset', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl + '#view=cache');
  await waitReady(page);
  const value = (id) => page.locator(`[data-testid=${id}]`).getAttribute('data-value').then(Number);
  const change = (id, v) => page.locator(`[data-testid=${id}]`).evaluate((el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, v);
  // The model's answer for the current controls: computing is over and the card is the model's.
  const modelDone = (model) => page.waitForFunction((m) => document.querySelector('[data-testid=cache-sim]')?.dataset.computing === 'false'
    && document.querySelector(`[data-testid=model-result][data-model="${m}"]`), model, { timeout: 180_000 });
  const cli = (args) => JSON.parse(run(['simulate', '--json', '-q', SAMPLE, ...args]));
  const sameCounters = async (result, names, where) => {
    for (const [id, v] of names) assert.equal(await value(`model-${id}`), v, `${id} ${where}`);
    const shown = await page.locator('[data-testid=model-assumptions] li').allInnerTexts();
    assert.deepEqual(shown, result.assumptions, `assumptions ${where}`);
  };
  const dmNames = (r) => ['read_hits', 'read_misses', 'write_hits', 'write_misses', 'demotions', 'promotions', 'dirty', 'writebacks']
    .map((k) => [k, r.result.status[k]]);
  const bcNames = (r) => [['cache_hits', 'cache_hits'], ['cache_misses', 'cache_misses'], ['cache_bypass_hits', 'cache_bypass_hits'],
    ['cache_bypass_misses', 'cache_bypass_misses'], ['cache_miss_collisions', 'cache_miss_collisions'], ['bypassed', 'bypassed_bytes'],
    ['dirty_data', 'dirty_bytes'], ['writeback', 'writeback_bytes']]
    .map(([id, k]) => [id, r.result.stats[k]]);
  const times = [];
  const timed = async (what) => {
    const ms = await value('cache-sim-time');
    times.push(`${what} ${ms} ms`);
  };
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = '300';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });

  // dm-cache, the kernel's model, at its defaults (64 KiB blocks, writeback, the origin measured).
  await page.locator('[data-testid=cache-preset]').selectOption('dm-cache');
  assert.match(page.url(), /cpreset=dm-cache(&|$)/);
  assert.match(await page.locator('[data-testid=cache-preset] option:checked').innerText(), /^dm-cache \(Linux dm-cache, smq\)$/);
  assert.ok(await page.locator('[data-testid=cache-policy]').isDisabled());
  assert.ok(await page.locator('[data-testid=cache-admission]').isDisabled());
  assert.match(await page.locator('[data-testid=cache-generic-off]').innerText(), /dm-cache-approx/);
  assert.deepEqual(await page.locator('[data-testid=cache-mode] option').allInnerTexts(), ['wb', 'wt']);
  await modelDone('dm-cache-smq');
  const size = await value('cache-size-value');
  const dm = cli(['--preset', 'dm-cache', '--cache-size', String(size)]);
  assert.equal(dm.model, 'dm-cache-smq');
  await sameCounters(dm, dmNames(dm), 'dm-cache wb');
  const s = dm.result.status;
  assert.ok(s.read_hits > 0 && s.promotions > 0, JSON.stringify(s));
  assert.equal(await value('model-read-hit-ratio'), s.read_hits / (s.read_hits + s.read_misses));
  assert.match(await page.locator('[data-testid=cache-effective]').innerText(), new RegExp(`--preset dm-cache --cache-size ${size} --mode wb`));
  assert.match(await page.locator('[data-testid=model-assumptions]').innerText(), /Origin .*: the highest byte the trace touches/);
  await timed('dm-cache wb');
  await page.screenshot({ path: join(SHOTS, 'cache-dm-cache-model.png'), fullPage: true });

  // Write-through with 128 KiB blocks; then a share of the footprint, as --cache-size 10%.
  await change('cache-mode', 'wt');
  await change('cache-line', '131072');
  assert.match(page.url(), /cmode=wt/);
  await modelDone('dm-cache-smq');
  const wt = cli(['--preset', 'dm-cache', '--cache-size', String(size), '--mode', 'wt', '--line-size', '128KiB']);
  await sameCounters(wt, dmNames(wt), 'dm-cache wt 128 KiB');
  await timed('dm-cache wt');
  await change('cache-percent', '10');
  assert.match(page.url(), /cpct=10/);
  await modelDone('dm-cache-smq');
  const pct = cli(['--preset', 'dm-cache', '--cache-size', '10%', '--mode', 'wt', '--line-size', '128KiB']);
  assert.ok(pct.footprint.bytes > 0);
  await sameCounters(pct, dmNames(pct), 'dm-cache 10%');
  await timed('dm-cache 10%');
  // The link reopens the same model and answer.
  const again = await browser.context.newPage();
  await again.goto(page.url());
  await waitReady(again);
  await again.locator('[data-testid=model-result][data-model=dm-cache-smq]').waitFor({ timeout: 180_000 });
  assert.equal(await again.locator('[data-testid=cache-preset]').inputValue(), 'dm-cache');
  assert.equal(await again.locator('[data-testid=model-read_hits]').getAttribute('data-value'), String(pct.result.status.read_hits));
  await again.close();

  // bcache, the kernel's model: 16 KiB buckets (bcache wants more than 512), write-around,
  // a 1 MiB sequential cutoff; the slider's size again.
  await page.locator('[data-testid=cache-preset]').selectOption('bcache');
  assert.match(await page.locator('[data-testid=cache-preset] option:checked').innerText(), /^bcache \(Linux bcache\)$/);
  assert.deepEqual(await page.locator('[data-testid=cache-mode] option').allInnerTexts(), ['wt', 'wb', 'wa']);
  assert.equal(await page.locator('[data-testid=cache-line]').count(), 0, 'bcache has buckets, not lines');
  // At make-bcache's default 512 KiB buckets this size is too few buckets: the job refuses it,
  // in the words the CLI prints.
  const refusal = page.locator('[data-testid=cache-sim] [role=alert]');
  await refusal.waitFor({ timeout: 180_000 });
  assert.match(await refusal.innerText(), /bcache refuses a cache of \d+ buckets/);
  assert.throws(() => execFileSync(BIN, ['simulate', '-q', SAMPLE, '--preset', 'bcache', '--cache-size', String(size)],
    { cwd: root, stdio: 'pipe' }), /bcache refuses a cache of \d+ buckets/);
  await change('cache-bucket', '16384');
  await change('cache-mode', 'wa');
  await change('cache-kernel-seqcut', '1MiB');
  assert.match(page.url(), /cpreset=bcache&cmode=wa&cseq=1048576&cbucket=16384/);
  await modelDone('bcache-kernel');
  const bc = cli(['--preset', 'bcache', '--cache-size', String(size), '--bucket-size', '16KiB', '--mode', 'wa', '--seq-cutoff', '1MiB']);
  assert.equal(bc.model, 'bcache-kernel');
  await sameCounters(bc, bcNames(bc), 'bcache wa');
  const st = bc.result.stats;
  assert.ok(st.cache_hits > 0 && st.writes_bypassed > 0, JSON.stringify(st));
  assert.equal(await value('model-cache-hit-ratio'), st.cache_hits / (st.cache_hits + st.cache_misses));
  await timed('bcache wa');
  await change('cache-mode', 'wb');
  await modelDone('bcache-kernel');
  const wb = cli(['--preset', 'bcache', '--cache-size', String(size), '--bucket-size', '16KiB', '--mode', 'wb', '--seq-cutoff', '1MiB']);
  await sameCounters(wb, bcNames(wb), 'bcache wb');
  await timed('bcache wb');
  await page.screenshot({ path: join(SHOTS, 'cache-bcache-model.png'), fullPage: true });
  console.log(`cache worker, kernel models on the sample: ${times.join(', ')}`);

  // The Array view's cache tier is then the kernel's model too: `blocksight predict --preset
  // dm-cache` on the trace (its default layout at QD 16, the curve off).
  const arr = await browser.context.newPage();
  await arr.goto(`${baseUrl}#view=array&cache=${size}&cpreset=dm-cache&curve=0`);
  await waitReady(arr);
  await arr.locator('[data-testid=iops-cache-0]').waitFor({ timeout: 180_000 });
  const tier = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '6',
    '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16', '--cache-size', String(size), '--preset', 'dm-cache'])).configs[0];
  assert.equal(Number(await arr.locator('[data-testid=iops-cache-0]').getAttribute('data-value')), tier.with_cache.iops);
  await arr.close();

  // An old link, from when dm-cache meant the approximation here, with its admission rule:
  // it opens the approximation and says so; the same name alone is the kernel's model.
  const old = await browser.context.newPage();
  await old.goto(`${baseUrl}#view=cache&cpreset=dm-cache&cadm=smq`);
  await waitReady(old);
  assert.equal(await old.locator('[data-testid=cache-preset]').inputValue(), 'dm-cache-approx');
  assert.match(await old.locator('[data-testid=cache-preset-fallback]').innerText(), /only the generic approximation has \(admission\)/);
  await old.locator('[data-testid=sim-result][data-final=true]').waitFor({ timeout: 180_000 });
  await old.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the array view predicts layouts in the worker, the same numbers as blocksight predict', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl + '#view=array');
  await waitReady(page);
  await page.locator('[data-testid=view-array]').waitFor();
  await page.locator('[data-testid=iops-0]').waitFor({ timeout: 120_000 });
  const iops = (id) => page.locator(`[data-testid=${id}]`).getAttribute('data-value').then(Number);

  // The default layout (RAID 5, 6 × sas-10k, 64 KiB, md) at 16 outstanding I/Os, with the cache
  // the Cache view chose (the recommended size, LRU, write-through): same as the CLI.
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const sizing = analyze.cache_sizing;
  const size = sizing.recommendation?.recommended?.size_bytes;
  if (size) {
    const cli = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '6',
      '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16', '--cache-size', String(size),
      '--cache-line', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wt'])).configs[0];
    assert.equal(await iops('iops-0'), cli.without_cache.iops);
    assert.equal(await iops('iops-cache-0'), cli.with_cache.iops);
  }
  const before = await iops('iops-0');

  // Twelve disks instead of six: recomputed in the worker, again the CLI's numbers.
  await page.locator('[data-testid=array-disks-0]').evaluate((el) => {
    el.value = '12';
    el.dispatchEvent(new Event('change', { bubbles: true }));
  });
  assert.match(page.url(), /arr=raid5\.12\.sas-10k/);
  await page.waitForFunction((b) => {
    const el = document.querySelector('[data-testid=iops-0]');
    return el && Number(el.dataset.value) !== b;
  }, before, { timeout: 120_000 });
  const twelve = await iops('iops-0');
  const cli12 = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '12',
    '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16'])).configs[0];
  assert.equal(twelve, cli12.without_cache.iops);
  assert.equal(await page.locator('[data-testid=array-config-0] .disk-bars').first().locator('.disk-bar').count(), 12);

  // A second layout side by side: RAID 10 on NVMe.
  await page.locator('[data-testid=array-add]').click();
  await page.locator('[data-testid=array-level-1]').selectOption('raid10');
  await page.locator('[data-testid=array-disk-1]').selectOption('nvme');
  await page.waitForFunction(() => /arr=.*raid10\.12\.nvme/.test(location.hash)
    && document.querySelector('[data-testid=view-array]').dataset.computing === 'false'
    && document.querySelector('[data-testid=iops-1]'), null, { timeout: 120_000 });
  const nvme = await iops('iops-1');
  assert.ok(nvme > twelve, `NVMe RAID 10 ${nvme} IOPS vs SAS RAID 5 ${twelve}`);
  assert.equal(await page.locator('[data-testid=array-table] tbody tr').count(), 2);

  // A named controller for the second layout: the CLI's --controller, same numbers.
  const answered = (i, text) => page.waitForFunction(([i, text]) => {
    const row = document.querySelector(`[data-testid=array-row-${i}] td`);
    return row && row.textContent.includes(text)
      && document.querySelector('[data-testid=view-array]').dataset.computing === 'false';
  }, [i, text], { timeout: 120_000 });
  assert.equal(await page.locator('[data-testid=array-md-1]').count(), 1);
  await page.locator('[data-testid=array-controller-1]').selectOption('perc-h730');
  await answered(1, 'controller perc-h730');
  assert.match(page.url(), /raid10\.12\.nvme\.65536\.1\.ctl:perc-h730/);
  assert.equal(await page.locator('[data-testid=array-md-1]').count(), 0);
  const perc = await iops('iops-1');
  const cliPerc = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid10', '--disks', '12',
    '--disk', 'nvme', '--chunk', '65536', '--qd', '16', '--controller', 'perc-h730'])).configs[0];
  assert.equal(perc, cliPerc.without_cache.iops);
  assert.ok(perc !== nvme, `PERC H730 ${perc} IOPS, md ${nvme}`);
  assert.match(await page.locator('[data-testid=array-table] ~ ul.hint').innerText(), /perc-h730|PERC H730/);

  // md's settings on the first (RAID 5 under md): the CLI's flags, same numbers.
  await page.locator('[data-testid=array-sc-0]').selectOption('4096');
  await page.locator('[data-testid=array-gt-0]').selectOption('2');
  await page.locator('[data-testid=array-bm-0]').selectOption('none');
  await answered(0, 'group_thread_cnt 2, bitmap none');
  assert.match(page.url(), /raid5\.12\.sas-10k\.65536\.0\.sc:4096\.gt:2\.bm:none/);
  const tuned = await iops('iops-0');
  const cliMd = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '12',
    '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16', '--stripe-cache-size', '4096',
    '--group-thread-cnt', '2', '--md-bitmap', 'none'])).configs[0];
  assert.equal(tuned, cliMd.without_cache.iops);

  // md rebuilding a failed disk of the first beside the load: the CLI's --failed 0 --rebuilding.
  assert.equal(await page.locator('[data-testid=array-rebuilding-0]').count(), 0);
  await page.locator('[data-testid=array-failed-0]').selectOption('0');
  await answered(0, 'failed disk 0');
  await page.locator('[data-testid=array-rebuilding-0]').check();
  await answered(0, 'failed disk 0 rebuilding');
  assert.match(page.url(), /raid5\.12\.sas-10k\.65536\.0\.sc:4096\.gt:2\.bm:none\.f:0\.rb:1/);
  const rebuilding = await iops('iops-0');
  const cliRebuilding = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '12',
    '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16', '--stripe-cache-size', '4096',
    '--group-thread-cnt', '2', '--md-bitmap', 'none', '--failed', '0', '--rebuilding'])).configs[0];
  assert.equal(rebuilding, cliRebuilding.without_cache.iops);
  assert.ok(cliRebuilding.without_cache.rebuild.bytes_per_sec > 0);
  const rebuildLine = page.locator('[data-testid=array-config-0] [data-testid=rebuild]');
  assert.equal(Number(await rebuildLine.getAttribute('data-value')), cliRebuilding.rebuild_secs);
  assert.match(await rebuildLine.innerText(), /md rebuilds .*\/s of each replacement beside this load/);
  // Disk 0 is the replacement being written, not a failed disk any more.
  const replacement = page.locator('[data-testid=array-config-0] .disk-bars').first().locator('.disk-bar.replacement');
  assert.deepEqual(await replacement.locator('.disk-label').allTextContents(), ['0']);
  assert.match(await replacement.locator('.disk-value').innerText(), /rebuild/);

  // Degraded mode on the second (the controller's RAID 10 of pairs): two failed disks, one in
  // each of two pairs, as the CLI's --failed; then RAID 60 in three groups, keeping them.
  const failedOptions = await page.locator('[data-testid=array-failed-1] option').allTextContents();
  assert.deepEqual(failedOptions.slice(0, 3), ['none', '1 (disk 0)', '2 (disks 0, 2)']);
  assert.equal(failedOptions.length, 7); // none, then up to one disk in each of the six pairs
  await page.locator('[data-testid=array-failed-1]').selectOption('0-2');
  await answered(1, 'failed disks 0, 2');
  assert.match(page.url(), /raid10\.12\.nvme\.65536\.1\.ctl:perc-h730\.f:0-2/);
  const degraded = await iops('iops-1');
  const cliDegraded = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid10', '--disks', '12',
    '--disk', 'nvme', '--chunk', '65536', '--qd', '16', '--controller', 'perc-h730', '--failed', '0,2'])).configs[0];
  assert.equal(degraded, cliDegraded.without_cache.iops);
  assert.match(cliDegraded.description, /DEGRADED/);
  assert.deepEqual(await page.locator('[data-testid=array-config-1] .disk-bars').first()
    .locator('.disk-bar.failed .disk-label').allTextContents(), ['0', '2']);
  assert.equal(Number(await page.locator('[data-testid=array-config-1] [data-testid=rebuild]').getAttribute('data-value')),
    cliDegraded.rebuild_secs);
  await page.locator('[data-testid=array-level-1]').selectOption('raid60');
  assert.deepEqual(await page.locator('[data-testid=array-groups-1] option').allTextContents(),
    ['default (2)', '2 of 6 disks', '3 of 4 disks']);
  await page.locator('[data-testid=array-groups-1]').selectOption('3');
  await answered(1, 'raid60, 64.0 KiB chunk, controller perc-h730, 3 groups, failed disks 0, 2');
  const sixty = await iops('iops-1');
  const sixtyArgs = ['predict', '--json', '-q', SAMPLE, '--layout', 'raid60', '--disks', '12',
    '--disk', 'nvme', '--chunk', '65536', '--qd', '16', '--controller', 'perc-h730', '--groups', '3',
    '--failed', '0,2'];
  const cliSixty = JSON.parse(run(sixtyArgs)).configs[0];
  const cliSixtyCached = (disk = 'sata-ssd') => JSON.parse(run([...sixtyArgs, '--cache-size', String(size),
    '--cache-line', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wt', '--cache-disk', disk])).configs[0];
  assert.equal(sixty, cliSixty.without_cache.iops);

  // The cache tier on two NVMe drives instead of two SATA SSDs (the CLI's --cache-disk and
  // --cache-disks): in front of the NVMe RAID 60 the SATA pair was the bottleneck.
  if (size) {
    const sataCached = await iops('iops-cache-1');
    assert.equal(sataCached, cliSixtyCached().with_cache.iops);
    await page.locator('[data-testid=array-cache-disk]').selectOption('nvme');
    assert.match(page.url(), /cdev=nvme\.2/);
    await page.waitForFunction((b) => {
      const el = document.querySelector('[data-testid=iops-cache-1]');
      return el && Number(el.dataset.value) !== b
        && document.querySelector('[data-testid=view-array]').dataset.computing === 'false';
    }, sataCached, { timeout: 120_000 });
    const nvmeCached = await iops('iops-cache-1');
    assert.equal(nvmeCached, cliSixtyCached('nvme').with_cache.iops);
    assert.ok(nvmeCached > sataCached, `NVMe cache ${nvmeCached} IOPS, SATA SSD cache ${sataCached}`);
  }
  await page.screenshot({ path: join(SHOTS, 'array.png'), fullPage: true });

  // The link reproduces both layouts, their settings and their numbers.
  const again = await browser.context.newPage();
  await again.goto(page.url());
  await waitReady(again);
  await again.locator('[data-testid=iops-1]').waitFor({ timeout: 120_000 });
  assert.equal(Number(await again.locator('[data-testid=iops-1]').getAttribute('data-value')), sixty);
  assert.equal(Number(await again.locator('[data-testid=iops-0]').getAttribute('data-value')), rebuilding);
  assert.ok(await again.locator('[data-testid=array-rebuilding-0]').isChecked());
  assert.equal(await again.locator('[data-testid=array-controller-1]').inputValue(), 'perc-h730');
  assert.equal(await again.locator('[data-testid=array-groups-1]').inputValue(), '3');
  assert.equal(await again.locator('[data-testid=array-failed-1]').inputValue(), '0-2');
  if (size) assert.equal(await again.locator('[data-testid=array-cache-disk]').inputValue(), 'nvme');
  assert.equal(await again.locator('[data-testid=array-sc-0]').inputValue(), '4096');
  await again.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the array view draws each layout\'s IOPS-vs-latency curve, the points of blocksight predict --curve', async () => {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl + '#view=array');
  await waitReady(page);
  const card = page.locator('[data-testid=chart-latency-curve]');
  await card.waitFor({ timeout: 120_000 });
  await page.locator('#chart-latency-curve').waitFor();
  assert.match(await card.locator('h3').innerText(), /● 16 outstanding/);
  await page.screenshot({ path: join(SHOTS, 'array-curve.png'), fullPage: true });

  // The curve as a table: the default layout's points without the cache are the CLI's.
  const rows = async () => page.locator('[data-testid=table-latency-curve] tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  await card.getByText('Show as table').click();
  assert.match(page.url(), /table=latency-curve/);
  const common = ['--layout', 'raid5', '--disks', '6', '--disk', 'sas-10k', '--chunk', '65536'];
  const cli = JSON.parse(run(['predict', '--json', '-q', SAMPLE, ...common, '--qd', '16', '--curve'])).configs[0];
  // A depth curve's points carry their load as {"outstanding": N} (docs/model.md).
  const depth = (l) => { assert.ok(l && 'outstanding' in l, JSON.stringify(l)); return String(l.outstanding); };
  const point = (p) => [depth(p.load), p.iops.toFixed(1), (p.mean_latency_nanos / 1e6).toFixed(3),
    (p.p99_latency_nanos / 1e6).toFixed(3)];
  let table = await rows();
  const plain = table.filter((r) => r[1] === 'without');
  assert.equal(cli.curve.length, 9);
  assert.deepEqual(plain.map((r) => r.slice(2, 6)), cli.curve.map(point));
  // The chosen depth is marked on both lines (without and with the cache), and only there.
  assert.deepEqual(table.filter((r) => r[6] === '●').map((r) => r[2]), ['16', '16']);

  // The CLI has no curve with the cache: its single runs at a few depths give the same points.
  const sizing = JSON.parse(run(['analyze', '--json', '-q', SAMPLE])).cache_sizing;
  const size = sizing.recommendation?.recommended?.size_bytes;
  const cached = table.filter((r) => r[1] === 'with');
  if (size) {
    assert.equal(cached.length, 9);
    for (const qd of [1, 64]) {
      const c = JSON.parse(run(['predict', '--json', '-q', SAMPLE, ...common, '--qd', String(qd),
        '--cache-size', String(size), '--cache-line', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wt'])).configs[0];
      const row = cached.find((r) => r[2] === String(qd));
      assert.deepEqual(row.slice(2, 6), point({ load: { outstanding: qd }, iops: c.with_cache.iops,
        mean_latency_nanos: c.with_cache.latency.mean_nanos, p99_latency_nanos: c.with_cache.latency.p99_nanos }));
    }
  }

  // A second layout adds its curves; a new depth moves the mark.
  await page.locator('[data-testid=array-add]').click();
  await page.locator('[data-testid=array-disk-1]').selectOption('nvme');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=table-latency-curve] tbody tr td:first-child')]
    .some((td) => td.textContent.startsWith('2: ') && td.textContent.includes('nvme')), null, { timeout: 120_000 });
  table = await rows();
  assert.equal(table.length, 2 * (size ? 18 : 9));
  await page.locator('[data-testid=array-qd]').selectOption('4');
  await page.waitForFunction(() => {
    const marked = [...document.querySelectorAll('[data-testid=table-latency-curve] tbody tr')]
      .filter((tr) => tr.cells[6].textContent === '●');
    return marked.length > 0 && marked.every((tr) => tr.cells[2].textContent === '4');
  }, null, { timeout: 120_000 });
  assert.equal((await rows()).filter((r) => r[6] === '●').length, size ? 4 : 2);
  await card.getByText('Show as chart').click();
  await page.locator('#chart-latency-curve').waitFor();
  assert.match(await card.locator('h3').innerText(), /● 4 outstanding/);
  assert.equal(await card.locator('.legend span').count(), 2);
  await page.screenshot({ path: join(SHOTS, 'array-curve-two-layouts.png'), fullPage: true });

  // The curve is a toggle in the link (off, a new layout or depth replays only the chosen depth).
  await page.locator('[data-testid=array-curve]').uncheck();
  assert.match(page.url(), /curve=0/);
  await page.waitForFunction(() => document.querySelector('[data-testid=view-array]').dataset.computing === 'false'
    && document.querySelector('[data-testid=iops-1]') && !document.querySelector('[data-testid=chart-latency-curve]'),
  null, { timeout: 120_000 });

  // A brushed time window scopes the prediction: fewer requests replayed, and the view says so.
  const replayed = async (p) => Number((await p.locator('[data-testid=array-table] ~ p.hint').innerText()).match(/^([\d,]+) requests/)[1].replaceAll(',', ''));
  const whole = await replayed(page);
  const scoped = await browser.context.newPage();
  await scoped.goto(baseUrl + '#view=hot&curve=0');
  await waitReady(scoped);
  const tl = await scoped.locator('#chart-timeline').boundingBox();
  await scoped.mouse.move(tl.x + tl.width * 0.4, tl.y + tl.height * 0.5);
  await scoped.mouse.down();
  await scoped.mouse.move(tl.x + tl.width * 0.5, tl.y + tl.height * 0.5, { steps: 5 });
  await scoped.mouse.up();
  await scoped.locator('[data-testid=window-banner]').waitFor();
  await waitReady(scoped);
  await scoped.locator('[data-testid=tab-array]').click();
  await scoped.locator('[data-testid=array-window]').waitFor();
  await scoped.locator('[data-testid=iops-0]').waitFor({ timeout: 120_000 });
  const part = await replayed(scoped);
  assert.ok(part > 0 && part < whole / 2, `${part} of ${whole} requests replayed in the window`);
  await scoped.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('the exported report opens from file:// with no network, renders and its knobs work', async () => {
  const out = join(WORK, 'report.html');
  execFileSync(BIN, ['report', '-q', SAMPLE, '-o', out], { cwd: root });
  const context = browser.context;
  const page = await context.newPage();
  const problems = watch(page);
  const external = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://') || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  await page.goto('file://' + out);
  await page.locator('[data-testid=card-events]').waitFor({ timeout: 60_000 });
  await waitReady(page);
  await assertOverviewMatchesStat(page);
  assert.match(await page.title(), /pgbench/);
  await page.locator('[data-testid=tab-cache]').click();
  const prediction = page.locator('[data-testid=cache-prediction]');
  const before = await prediction.getAttribute('data-value');
  await page.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = '900';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction((b) => document.querySelector('[data-testid=cache-prediction]').dataset.value !== b, before);
  await page.locator('[data-testid=tab-hot]').click();
  await page.locator('[data-testid=heat-reads]').click();
  await page.locator('#chart-heatmap').waitFor();
  await page.screenshot({ path: join(SHOTS, 'report-offline.png'), fullPage: true });
  assert.deepEqual(external, [], 'the report made network requests');
  assert.deepEqual(problems, []);
  await page.close();
});

/// Opens `file` from file:// in a new page with every non-file request aborted; returns the page,
/// its problems and the list of requests it tried to make elsewhere.
async function openOffline(file) {
  const page = await browser.context.newPage();
  const problems = watch(page);
  const external = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file://') || url.startsWith('blob:') || url.startsWith('data:')) return route.continue();
    external.push(url);
    return route.abort();
  });
  await page.goto('file://' + file);
  return { page, problems, external };
}

/// Clicks "Export report" and saves the download as `out`; returns the status line's numbers.
async function exportReport(page, out) {
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 180_000 }),
    page.locator('[data-testid=export-report]').click(),
  ]);
  await download.saveAs(out);
  const status = page.locator('[data-testid=export-status][data-bytes]');
  await status.waitFor({ timeout: 60_000 });
  return {
    name: download.suggestedFilename(),
    bytes: Number(await status.getAttribute('data-bytes')),
    millis: Number(await status.getAttribute('data-millis')),
    text: await status.innerText(),
  };
}

test('"Export report" in the app downloads a report that opens offline, matches the CLI and exports itself again', async () => {
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const page = await browser.context.newPage();
  const problems = watch(page);
  // The export carries the view and knobs: the report opens at the Cache view, writes heat map.
  await page.goto(baseUrl + '#view=cache&heat=writes');
  await waitReady(page);
  await page.locator('[data-testid=view-cache]').waitFor();
  const first = join(WORK, 'exported.html');
  const done = await exportReport(page, first);
  console.log(`# export from the served app: ${done.bytes} bytes in ${done.millis} ms (${done.text})`);
  assert.equal(done.name, 'pgbench.tracefs-blocksight.html');
  assert.match(done.text, /whole trace/);
  assert.equal(readFileSync(first).length, done.bytes);
  assert.deepEqual(problems, []);
  await page.close();

  const { page: rp, problems: rprobs, external } = await openOffline(first);
  await rp.locator('[data-testid=view-cache]').waitFor({ timeout: 60_000 });
  await waitReady(rp);
  assert.match(rp.url(), /view=cache/);
  assert.match(rp.url(), /heat=writes/);
  assert.match(await rp.title(), /pgbench/);
  // A knob works: the cache size slider changes the prediction.
  const prediction = rp.locator('[data-testid=cache-prediction]');
  const before = await prediction.getAttribute('data-value');
  await rp.locator('[data-testid=cache-size]').evaluate((el) => {
    el.value = '900';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await rp.waitForFunction((b) => document.querySelector('[data-testid=cache-prediction]').dataset.value !== b, before);
  await rp.locator('[data-testid=tab-overview]').click();
  await assertOverviewMatchesStat(rp);
  assert.equal(await card(rp, 'events'), String(analyze.summary.events));
  const hot90 = analyze.hot.all.hot_sizes.find((h) => Math.abs(h.io_fraction - 0.9) < 1e-9);
  assert.equal(await card(rp, 'hot-size'), String(hot90.bytes));
  const rec = analyze.cache_sizing.recommendation?.recommended;
  if (rec) assert.equal(await card(rp, 'recommended-cache'), String(rec.size_bytes));

  // The exported file exports itself again, from file://, with no network.
  const second = join(WORK, 'exported-again.html');
  const again = await exportReport(rp, second);
  console.log(`# re-export from the report: ${again.bytes} bytes in ${again.millis} ms`);
  assert.equal(again.name, done.name);
  assert.deepEqual(external, [], 'the exported report made network requests');
  assert.deepEqual(rprobs, []);
  await rp.close();

  const { page: rp2, problems: p2, external: ext2 } = await openOffline(second);
  await waitReady(rp2);
  await rp2.locator('[data-testid=tab-overview]').click();
  await assertOverviewMatchesStat(rp2);
  assert.deepEqual(ext2, []);
  assert.deepEqual(p2, []);
  await rp2.close();

  // A report without the app's JavaScript as data (as older ones were) cannot export itself,
  // and the button says why in words.
  const old = join(WORK, 'exported-without-glue.html');
  writeFileSync(old, readFileSync(second, 'utf8').replace(/<script type="application\/octet-stream" id="bs-main-js">[^<]*<\/script>\n/, ''));
  const { page: rp3 } = await openOffline(old);
  await waitReady(rp3);
  await rp3.locator('[data-testid=export-report]').click();
  assert.match(await rp3.locator('[data-testid=export-error]').innerText(), /cannot export itself/);
  await rp3.close();
});

test('"Export report" of a hostile trace keeps its strings as text and its file name plain', async () => {
  const evil = '<img src=x onerror=window.__pwned=1>';
  const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid'];
  for (let i = 0; i < 200; i++) lines.push(`${i * 1000000},${evil},${(i % 50) * 4096},4096,read,,`);
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl.replace(/\?.*$/, ''));
  await drop(page, '<script>window.__pwned=2</script>.csv', Buffer.from(lines.join('\n') + '\n'));
  await waitReady(page);
  const out = join(WORK, 'hostile-exported.html');
  const done = await exportReport(page, out);
  assert.match(done.name, /^[A-Za-z0-9._-]+-blocksight\.html$/);
  const html = readFileSync(out, 'utf8');
  assert.ok(!html.includes('<img'), 'trace text appears verbatim in the exported report');
  assert.ok(!html.includes('<script>window'), 'the file name appears verbatim in the exported report');
  await page.close();
  const { page: rp, problems: rprobs, external } = await openOffline(out);
  await waitReady(rp);
  assert.equal(await rp.locator('[data-testid=devices]').innerText(), evil);
  assert.match(await rp.locator('[data-testid=file-name]').innerText(), /<script>/);
  assert.equal(await rp.locator('main img').count(), 0);
  assert.equal(await rp.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(external, []);
  assert.deepEqual([...problems, ...rprobs], []);
  await rp.close();
});

test('the overview states hot data, the recommended cache and the predicted speed-up as the CLI does', async () => {
  const analyze = JSON.parse(run(['analyze', '--json', '-q', SAMPLE]));
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl);
  await waitReady(page);
  const hot90 = analyze.hot.all.hot_sizes.find((h) => Math.abs(h.io_fraction - 0.9) < 1e-9);
  assert.equal(await card(page, 'hot-size'), String(hot90.bytes));
  const sizing = analyze.cache_sizing;
  const rec = sizing.recommendation.recommended;
  assert.equal(await card(page, 'recommended-cache'), String(rec.size_bytes));
  // The Array view's first (default) layout, RAID 5 of 6 × sas-10k, 64 KiB chunks, md, QD 16,
  // with and without an LRU write-through cache of the recommended size.
  await page.waitForFunction(() => document.querySelector('[data-testid=card-speedup]')?.dataset.value, null, { timeout: 180_000 });
  const cli = JSON.parse(run(['predict', '--json', '-q', SAMPLE, '--layout', 'raid5', '--disks', '6',
    '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16', '--cache-size', String(rec.size_bytes),
    '--cache-line', String(sizing.line_bytes), '--policy', 'lru', '--mode', 'wt'])).configs[0];
  const speed = page.locator('[data-testid=card-speedup]');
  assert.equal(Number(await speed.getAttribute('data-iops-without')), cli.without_cache.iops);
  assert.equal(Number(await speed.getAttribute('data-iops-with')), cli.with_cache.iops);
  assert.equal(Number(await speed.getAttribute('data-value')), cli.with_cache.iops / cli.without_cache.iops);
  const assumptions = await page.locator('[data-testid=speedup-assumptions]').innerText();
  assert.match(assumptions, /6 × sas-10k raid5/);
  assert.match(assumptions, /QD 16/);
  assert.match(assumptions, /LRU, write-through/);
  await page.screenshot({ path: join(SHOTS, 'overview-cards.png'), fullPage: true });
  // The Array view shows the same answer without asking again.
  await page.locator('[data-testid=tab-array]').click();
  await page.locator('[data-testid=iops-0]').waitFor({ timeout: 120_000 });
  assert.equal(Number(await page.locator('[data-testid=iops-0]').getAttribute('data-value')), cli.without_cache.iops);
  assert.deepEqual(problems, []);
  await page.close();

  // A report whose trace copy is a sample cannot replay the trace: the card says why.
  const out = join(WORK, 'report-sampled.html');
  execFileSync(BIN, ['report', '-q', SAMPLE, '--embed-events', '20000', '-o', out], { cwd: root });
  const { page: rp, problems: rprobs, external } = await openOffline(out);
  await waitReady(rp);
  assert.equal(await card(rp, 'hot-size'), String(hot90.bytes));
  assert.match(await rp.locator('[data-testid=card-speedup]').innerText(), /sample of the trace/);
  // Its re-export keeps the same sampled copy.
  const again = await exportReport(rp, join(WORK, 'report-sampled-again.html'));
  assert.match(again.text, /spatial sample/);
  assert.deepEqual(external, []);
  assert.deepEqual(rprobs, []);
  await rp.close();
});

test('a hostile trace shows its strings as text, never as markup', async () => {
  const evil = '<img src=x onerror=window.__pwned=1>';
  const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid'];
  for (let i = 0; i < 200; i++) lines.push(`${i * 1000000},${evil},${(i % 50) * 4096},4096,${i % 3 ? 'read' : 'write'},,`);
  const csv = lines.join('\n') + '\n';
  const file = join(WORK, 'hostile.csv');
  writeFileSync(file, csv);
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl.replace(/\?.*$/, ''));
  await drop(page, '<script>window.__pwned=2</script>.csv', Buffer.from(csv));
  await waitReady(page);
  assert.equal(await page.locator('[data-testid=devices]').innerText(), evil);
  assert.match(await page.locator('[data-testid=file-name]').innerText(), /<script>/);
  await page.locator('[data-testid=tab-hot]').click();
  await page.locator('#chart-heatmap').waitFor();
  assert.equal(await page.locator('main img').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.screenshot({ path: join(SHOTS, 'hostile.png'), fullPage: true });
  await page.close();

  // The same file as a report.
  const out = join(WORK, 'hostile.html');
  execFileSync(BIN, ['report', '-q', file, '-o', out], { cwd: root });
  const html = readFileSync(out, 'utf8');
  assert.ok(!html.includes('<img'), 'trace text appears verbatim in the report');
  const rp = await browser.context.newPage();
  await rp.goto('file://' + out);
  await waitReady(rp);
  assert.equal(await rp.locator('[data-testid=devices]').innerText(), evil);
  assert.equal(await rp.locator('main img').count(), 0);
  assert.equal(await rp.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(problems, []);
  await rp.close();
});

test('a file that is not a trace gets a plain-words error', async () => {
  const page = await browser.context.newPage();
  await page.goto(baseUrl.replace(/\?.*$/, ''));
  await drop(page, 'notes.pdf', Buffer.from('%PDF-1.7\n' + 'x'.repeat(5000)));
  await page.locator('[data-testid=error-text]').waitFor();
  assert.match(await page.locator('[data-testid=error-text]').innerText(), /does not recognise this file/);
  await page.screenshot({ path: join(SHOTS, 'error.png'), fullPage: true });
  await page.close();
});

test('a large trace shows its load over time while it is still being read', async () => {
  // A 40 MB CSV (10 of the worker's 4 MiB slices): OLTP-like, 70% reads, skewed addresses.
  const file = join(WORK, 'live-40MB.csv');
  if (!existsSync(file)) {
    const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos'];
    let seed = 7;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    let bytes = 0;
    for (let i = 0; bytes < 40e6; i++) {
      const line = `${i * 20000},sdc,${Math.floor(Math.pow(rnd(), 2) * 4e6) * 4096},${4096 << Math.floor(rnd() * 3)},${rnd() < 0.7 ? 'read' : 'write'},${50000 + Math.floor(rnd() * 500000)}`;
      bytes += line.length + 1;
      lines.push(line);
    }
    writeFileSync(file, lines.join('\n') + '\n');
  }
  const expected = JSON.parse(run(['stat', '--json', '-q', file]));
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl.replace(/\?.*$/, ''));
  await page.locator('[data-testid=file-input]').setInputFiles(file);
  // The live chart is drawn from the worker's progress reports, before the results exist.
  await page.locator('[data-testid=live-timeline] canvas').waitFor({ timeout: 60_000 });
  assert.notEqual(await page.evaluate(() => document.querySelector('main')?.dataset.phase), 'ready');
  await page.screenshot({ path: join(SHOTS, 'loading-live-timeline.png'), fullPage: true });
  await waitReady(page);
  assert.equal(await page.locator('[data-testid=live-timeline]').count(), 0, 'the live chart gives way to the views');
  assert.equal(await card(page, 'events'), String(expected.events));
  const t = await page.evaluate(() => window.__blocksightTimings);
  assert.ok(t['first-chart'] < t.results, `first chart ${t['first-chart']} before results ${t.results}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a load split over two workers gives exactly the one-worker analysis and blocksight analyze --per-device (issue 12)', async () => {
  // 200,000 requests on three volumes, skewed, some sequential runs, a few bad records.
  const file = join(WORK, 'split-3dev.csv');
  if (!existsSync(file)) {
    const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos'];
    let seed = 11;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 200_000; i++) {
      const dev = ['vol-a', 'vol-b', 'vol-c'][Math.floor(Math.pow(rnd(), 2) * 3)];
      const block = i % 20 < 3 ? i : Math.floor(Math.pow(rnd(), 3) * 3e6);
      lines.push(`${i * 25000},${dev},${block * 4096},${4096 << Math.floor(rnd() * 4)},${rnd() < 0.65 ? 'read' : 'write'},${40000 + Math.floor(rnd() * 400000)}`);
      if (i % 50_000 === 7) lines.push(`${i * 25000},vol-a,not-a-number,4096,read,1`);
    }
    writeFileSync(file, lines.join('\n') + '\n');
  }
  const cli = JSON.parse(run(['analyze', '--per-device', '--json', '-q', file]));
  assert.equal(cli.per_device.devices, 3);
  for (const cores of [1, 4]) {
    const page = await browser.context.newPage();
    const problems = watch(page);
    await page.addInitScript((n) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => n }), cores);
    await page.goto(baseUrl.replace(/\?.*$/, ''));
    await page.locator('[data-testid=file-input]').setInputFiles(file);
    await waitReady(page);
    // One engine worker, or two: the second counted hot data.
    assert.equal(page.workers().length, cores === 1 ? 1 : 2, `workers with ${cores} cores`);
    const out = join(WORK, `split-${cores}.html`);
    await exportReport(page, out);
    const html = readFileSync(out, 'utf8');
    const b64 = html.match(/<script type="application\/octet-stream" id="bs-results">([^<]*)<\/script>/)[1];
    const results = JSON.parse(Buffer.from(b64.replace(/\s+/g, ''), 'base64').toString('utf8'));
    assert.deepEqual(results.analysis, cli, `the page's analysis with ${cores} cores`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('the Array view estimates a large trace from slices first, then replays it whole (issue 12)', async () => {
  // 300,000 requests (more than the 262,144 events that get an estimate first).
  const n = 300_000;
  const file = join(WORK, 'array-300k.csv');
  if (!existsSync(file)) {
    const lines = ['time_nanos,device,offset_bytes,len_bytes,op,latency_nanos,pid'];
    let seed = 11;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < n; i++) {
      lines.push(`${i * 50000},sdd,${Math.floor(Math.pow(rnd(), 3) * 2e6) * 4096},4096,${rnd() < 0.7 ? 'read' : 'write'},200000,1`);
    }
    writeFileSync(file, lines.join('\n') + '\n');
  }
  const layout = ['--layout', 'raid5', '--disks', '6', '--disk', 'sas-10k', '--chunk', '65536', '--qd', '16'];
  const estimate = JSON.parse(run(['predict', '--json', '-q', file, ...layout, '--sample', `1024/${Math.floor(n / 32)}`]));
  const exact = JSON.parse(run(['predict', '--json', '-q', file, ...layout]));
  assert.equal(estimate.replayed_requests, 32 * 1024);
  assert.equal(estimate.trace_requests, n);
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(baseUrl.replace(/\?.*$/, '') + '#view=array&curve=0');
  await page.locator('[data-testid=file-input]').setInputFiles(file);
  // The estimate first: the notice, and the numbers without the cache equal the CLI's --sample
  // (read in one go, while the notice is up).
  await page.locator('[data-testid=array-estimate]').waitFor({ timeout: 120_000 });
  await page.locator('[data-testid=iops-0]').waitFor({ timeout: 120_000 });
  const first = await page.evaluate(() => ({
    notice: document.querySelector('[data-testid=array-estimate]')?.innerText,
    iops: document.querySelector('[data-testid=iops-0]')?.dataset.value,
  }));
  if (first.notice) {
    assert.match(first.notice, /32,768 of the trace's 300,000 requests replayed/);
    assert.equal(Number(first.iops), estimate.configs[0].without_cache.iops);
  }
  await page.screenshot({ path: join(SHOTS, 'array-estimate.png'), fullPage: true });
  // Then the whole replay replaces it, equal to the CLI's.
  await page.waitForFunction(() => !document.querySelector('[data-testid=array-estimate]')
    && document.querySelector('[data-testid=view-array]')?.dataset.computing === 'false'
    && document.querySelector('[data-testid=iops-cache-0]'), null, { timeout: 300_000 });
  assert.equal(Number(await page.locator('[data-testid=iops-0]').getAttribute('data-value')), exact.configs[0].without_cache.iops);
  assert.ok(first.notice, 'the estimate was shown before the whole replay');
  assert.deepEqual(problems, []);
  await page.close();
});
