/**
 * The console's result grid while scrolling a 100,000-row result (issue 31's target: no frame
 * over 50 ms). vdb runs as a child process (vdb-server.ts) and Debian's Chromium, headless,
 * drives the built console (web/dist). Three ways of scrolling, each timed frame by frame
 * (requestAnimationFrame to requestAnimationFrame) in the page:
 * - jumps: 200 steps of 500 rows, every step on rows not loaded yet (a page read per frame);
 * - wheel: 600 steps of 120 px, as a mouse wheel scrolls;
 * - back: the wheel steps again over rows read before (no reads: rendering alone).
 * Long animation frames (over 50 ms) are listed with the scripts Chromium blames for them.
 */
import fs from 'node:fs';
import os from 'node:os';
import { chromium, type Browser, type Page } from 'playwright-core';
import { median, table } from './measure.js';
import { PASSWORD, startVdb } from './vdb-server.js';

const CHROMIUM = process.env.VDB_CHROMIUM ?? '/usr/bin/chromium';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const STATEMENT = 'SELECT g AS n, g * 2 AS twice, md5(g::varchar) AS h FROM generate_series(1, 100000) t(g)';

interface Frames {
  longest: number;
  /** The longest task of the page's main thread, in its thread's CPU time (trace `tdur`): the page's own work, whatever else the machine runs. */
  cpu: number;
  /** The main thread's CPU time over the whole scroll, per frame (ms). */
  cpuPerFrame: number;
  p95: number;
  /** Long animation frames: duration and the scripts in them. */
  long: string[];
}

/** The longest task and the sum of all tasks (CPU ms) of a renderer's main thread in a Chromium trace. */
function mainThreadCpu(trace: Buffer): { longest: number; total: number } {
  const { traceEvents } = JSON.parse(trace.toString('utf8')) as {
    traceEvents: Array<{ name: string; ph: string; pid: number; tid: number; tdur?: number; args?: { name?: string } }>;
  };
  const main = new Set(
    traceEvents
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  );
  let longest = 0;
  let total = 0;
  for (const e of traceEvents) {
    if (e.name !== 'RunTask' || !main.has(`${e.pid}:${e.tid}`)) continue;
    longest = Math.max(longest, (e.tdur ?? 0) / 1000);
    total += (e.tdur ?? 0) / 1000;
  }
  return { longest, total };
}

/** Scrolls the grid `steps` times by `by` px (from `from`), one step a frame; the frames' lengths. */
async function scroll(browser: Browser, page: Page, from: number, by: number, steps: number): Promise<Frames> {
  await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline'] });
  const frames = await page.evaluate(
    async ({ from, by, steps }) => {
      const grid = document.querySelector<HTMLElement>('[data-testid=grid]')!;
      grid.scrollTop = from;
      await new Promise(requestAnimationFrame);
      const long: string[] = [];
      const observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries() as Array<
          PerformanceEntry & { scripts?: Array<{ sourceFunctionName: string; invoker: string; duration: number }> }
        >) {
          const scripts = (e.scripts ?? []).map((s) => `${s.invoker} ${Math.round(s.duration)}`).join(', ');
          long.push(`${Math.round(e.duration)} ms [${scripts}]`);
        }
      });
      observer.observe({ type: 'long-animation-frame', buffered: false });
      const frames: number[] = [];
      let last = performance.now();
      for (let i = 0; i < steps; i++) {
        grid.scrollTop += by;
        await new Promise(requestAnimationFrame);
        const now = performance.now();
        frames.push(now - last);
        last = now;
      }
      // Let the last reads land inside the measured window of long frames.
      await new Promise((r) => setTimeout(r, 300));
      observer.disconnect();
      frames.sort((a, b) => a - b);
      return { longest: frames[frames.length - 1]!, p95: frames[Math.floor(frames.length * 0.95)]!, long };
    },
    { from, by, steps },
  );
  const cpu = mainThreadCpu(await browser.stopTracing());
  return { ...frames, cpu: cpu.longest, cpuPerFrame: cpu.total / steps };
}

/** Signs in and runs the statement; the page holds the grid of 100,000 rows when this returns. */
async function open(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/`);
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('sql-editor').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(STATEMENT);
  return page;
}

async function main(): Promise<void> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  // BENCH_BEFORE_CLI: another build's dist/src/cli.js (its web/dist beside it), measured in turns with this one.
  const builds: Array<[string, string | undefined]> = [['this', undefined]];
  if (process.env.BENCH_BEFORE_CLI) builds.push(['before', process.env.BENCH_BEFORE_CLI]);
  const servers = await Promise.all(builds.map(([, cli]) => startVdb({ demo: false, ...(cli ? { cli } : {}) })));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const pages = await Promise.all(servers.map((server) => open(browser, server.url)));
    const rows: string[][] = [];
    const longest = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const perFrame = new Map<string, number[]>();
    console.log(
      `load average at the start: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')} (${os.cpus().length} cores)`,
    );
    for (let run = 0; run < RUNS; run++) {
      for (const [b, [build]] of builds.entries()) {
        const page = pages[b]!;
        await page.bringToFront();
        await page.getByTestId('run').click();
        await page.getByTestId('row-count').filter({ hasText: '100,000 rows' }).waitFor({ timeout: 60_000 });
        const measured: Array<[string, Frames]> = [
          ['jumps', await scroll(browser, page, 0, 500 * 26, 200)],
          ['wheel', await scroll(browser, page, 1_000_000, 120, 600)],
          ['back', await scroll(browser, page, 1_000_000, 120, 600)],
        ];
        for (const [name, f] of measured) {
          const key = `${build} ${name}`;
          longest.set(key, [...(longest.get(key) ?? []), f.longest]);
          rows.push([
            `${run + 1}`,
            build,
            name,
            f.longest.toFixed(0),
            f.p95.toFixed(0),
            `${f.long.length}`,
            f.cpu.toFixed(1),
            f.cpuPerFrame.toFixed(2),
          ]);
          cpu.set(key, [...(cpu.get(key) ?? []), f.cpu]);
          perFrame.set(key, [...(perFrame.get(key) ?? []), f.cpuPerFrame]);
          if (process.env.BENCH_DETAIL) console.error(`${run + 1} ${key}: ${f.long.join('; ')}`);
        }
      }
    }
    console.log(
      table(
        ['run', 'build', 'scroll', 'longest frame ms', 'p95 ms', 'frames over 50 ms', 'longest task CPU ms', 'CPU ms per frame'],
        rows,
        3,
      ),
    );
    console.log('\nmedians (target: no frame over 50 ms):');
    for (const [key, values] of longest) {
      console.log(
        `  ${key}: longest frame ${median(values).toFixed(0)} ms, longest task ${median(cpu.get(key)!).toFixed(1)} ms CPU, ` +
          `${median(perFrame.get(key)!).toFixed(2)} ms CPU per frame`,
      );
    }
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' / ')}`,
    );
  } finally {
    await browser.close();
    for (const server of servers) await server.stop();
  }
}

await main();
