/**
 * Summarises a V8 .cpuprofile: self time by category (package, app folder, node core, GC,
 * PGlite's WebAssembly), the functions with the most self time, and the functions with the
 * most inclusive time (time with that function anywhere on the stack).
 *
 *   node bench/profile.mjs some.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function categoryOf(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) {
    if (functionName.startsWith('(')) return functionName;
    return 'v8/native';
  }
  if (url.startsWith('wasm://')) return 'wasm (PGlite)';
  if (url.startsWith('node:')) return 'node core';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const app = /\/dist\/(src|adapters)\/([^/]+)/.exec(url);
  if (app) return app[1] === 'adapters' ? 'app: adapters' : `app: src/${app[2].replace(/\.js$/, '')}`;
  if (url.includes('/bench/')) return 'bench harness';
  return 'other';
}

function frameName(callFrame) {
  const file = callFrame.url ? callFrame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, 'dist/').replace(/^file:\/\//, '') : '';
  return `${callFrame.functionName || '(anonymous)'}${file ? ` ${file}:${callFrame.lineNumber + 1}` : ''}`;
}

export function summariseProfile(profile, top = 25) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let totalUs = 0;
  const categories = new Map();
  const self = new Map();
  const inclusive = new Map();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    totalUs += us;
    const category = categoryOf(node.callFrame);
    categories.set(category, (categories.get(category) ?? 0) + us);
    const name = frameName(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + us);
    const seen = new Set();
    for (let cursor = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const frame = byId.get(cursor).callFrame;
      if (frame.functionName === '(root)') continue;
      const key = frameName(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const idleUs = categories.get('(idle)') ?? 0;
  const busyUs = totalUs - idleUs;
  const rows = (map, limit) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), pctOfBusy: Math.round((1000 * us) / busyUs) / 10 }));
  return {
    wallMs: Math.round(totalUs / 1000),
    busyMs: Math.round(busyUs / 1000),
    idleMs: Math.round(idleUs / 1000),
    byCategory: rows(new Map([...categories].filter(([name]) => name !== '(idle)')), 40),
    topSelf: rows(new Map([...self].filter(([name]) => name !== '(idle)')), top),
    topInclusive: rows(inclusive, top),
  };
}

export function formatSummary(summary) {
  const lines = [`wall ${summary.wallMs} ms, busy ${summary.busyMs} ms, idle ${summary.idleMs} ms`, '', 'self time by category (% of busy):'];
  for (const row of summary.byCategory) lines.push(`  ${String(row.pctOfBusy).padStart(5)}%  ${row.name}`);
  lines.push('', 'top self:');
  for (const row of summary.topSelf) lines.push(`  ${String(row.pctOfBusy).padStart(5)}%  ${row.name}`);
  lines.push('', 'top inclusive:');
  for (const row of summary.topInclusive) lines.push(`  ${String(row.pctOfBusy).padStart(5)}%  ${row.name}`);
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node bench/profile.mjs file.cpuprofile [top]\n');
    process.exit(2);
  }
  const summary = summariseProfile(JSON.parse(readFileSync(file, 'utf8')), Number(process.argv[3] ?? 30));
  process.stdout.write(`${formatSummary(summary)}\n`);
}
