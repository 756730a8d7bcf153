// Shared helpers for the end-to-end tests: launch Debian's Chromium through playwright-core
// with a fresh profile and no background network, and clean up after it.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  const profile = mkdtempSync(join(tmpdir(), 'blocksight-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
      '--disable-dev-shm-usage', '--allow-file-access-from-files',
    ],
  });
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
    // Chromium leaves scoped dirs in the temp folder.
    for (const name of readdirSync(tmpdir())) {
      if (name.startsWith('org.chromium.Chromium.scoped_dir.')) {
        rmSync(join(tmpdir(), name), { recursive: true, force: true });
      }
    }
  };
  return { context, close };
}

/// Collects page errors and console errors, so tests can assert there were none.
export function watch(page) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  return problems;
}

/// Starts `blocksight serve` of `file` on a free loopback port (`bin`: the blocksight binary);
/// resolves to `{ url, server }` once it prints its address (`server.kill()` stops it).
export function serve(bin, file, options = {}) {
  const server = spawn(bin, ['serve', '--port', '0', file], { stdio: ['ignore', 'pipe', 'inherit'], ...options });
  return new Promise((ok, fail) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line) ok({ url: line.trim(), server });
    });
    server.on('exit', (c) => fail(new Error(`blocksight serve exited with ${c}`)));
  });
}
