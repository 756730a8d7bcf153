// Benchmark (not a test): how soon the Cache view answers a new size while its worker is busy,
// in headless Chromium. It opens the Cache view at 256 MiB, waits for the first answer, waits
// DELAY ms more (0: the old request's exact stage is running; 1,500 and 3,000: its variants or
// the curves' refinement), moves the size slider a step and times the new size's exact answer.
//   node busy-bench.mjs [FILE]     (default: the bundled pgbench sample)
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, serve } from './browser.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const file = process.argv[2] ?? join(root, 'tests/data/sample/pgbench.tracefs.txt.zst');
const bin = process.env.BLOCKSIGHT_BIN ?? join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'release', 'blocksight');
const { url, server } = await serve(bin, file);
const browser = await launch();
try {
  for (const delay of [0, 1500, 3000]) {
    const page = await browser.context.newPage();
    await page.goto(`${url}#view=cache&cache=268435456`);
    await page.locator('[data-testid=sim-hit]').waitFor({ timeout: 600_000 });
    await page.waitForTimeout(delay);
    const hit0 = await page.locator('[data-testid=sim-hit]').getAttribute('data-value');
    const t0 = await page.evaluate(() => performance.now());
    await page.locator('[data-testid=cache-size]').evaluate((el) => {
      el.value = String(Number(el.value) + 40);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    // The new size's exact answer: nothing computing, another hit ratio, no estimate notice.
    await page.waitForFunction((h) => {
      const computing = document.querySelector('[data-testid=cache-sim]')?.dataset.computing;
      const hit = document.querySelector('[data-testid=sim-hit]')?.dataset.value;
      return computing === 'false' && hit !== h && !document.querySelector('[data-testid=cache-estimate]');
    }, hit0, { timeout: 600_000, polling: 10 });
    const t1 = await page.evaluate(() => performance.now());
    console.log(`size moved ${delay} ms after the first answer: its exact answer in ${((t1 - t0) / 1000).toFixed(2)} s`);
    await page.close();
  }
} finally {
  await browser.close();
  server.kill();
}
