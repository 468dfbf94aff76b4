/**
 * What a set of objects costs, from two V8 heap snapshots of one process: the objects of the
 * second snapshot whose ids the first does not have (allocated in between and still alive),
 * grouped by kind and constructor, with their count and self size, optionally per unit (per
 * stream, say). V8 keeps an object's id across snapshots of one process, so "new" is exact;
 * self size is the object's own bytes, not what it keeps alive.
 *
 *   node bench/heap-diff.mjs before.heapsnapshot after.heapsnapshot [units] [top]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function readSnapshot(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  return { nodes: snapshot.nodes, strings: snapshot.strings, width: fields.length, typeNames: types[0], at: Object.fromEntries(fields.map((f, i) => [f, i])) };
}

/** Closures by their function's name; plain objects and arrays by constructor; strings and code by kind. */
function groupOf(snapshot, offset) {
  const type = snapshot.typeNames[snapshot.nodes[offset + snapshot.at.type]];
  const name = snapshot.strings[snapshot.nodes[offset + snapshot.at.name]];
  if (type === 'object' || type === 'closure' || type === 'native') return `${type} ${name.length > 60 ? `${name.slice(0, 57)}...` : name}`;
  if (type === 'hidden' || type === 'array') return `${type} ${name.length > 40 ? `${name.slice(0, 37)}...` : name}`;
  return type;
}

export function heapDiff(beforeFile, afterFile, units = 1) {
  const before = readSnapshot(beforeFile);
  const known = new Set();
  for (let offset = 0; offset < before.nodes.length; offset += before.width) known.add(before.nodes[offset + before.at.id]);
  const after = readSnapshot(afterFile);
  const groups = new Map();
  let totalBytes = 0;
  let totalCount = 0;
  for (let offset = 0; offset < after.nodes.length; offset += after.width) {
    if (known.has(after.nodes[offset + after.at.id])) continue;
    const size = after.nodes[offset + after.at.self_size];
    // Synthetic roots and the like have no size of their own.
    if (size === 0) continue;
    const key = groupOf(after, offset);
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += size;
    groups.set(key, group);
    totalBytes += size;
    totalCount += 1;
  }
  const rows = [...groups.entries()]
    .map(([group, { count, bytes }]) => ({ group, perUnit: Math.round((count / units) * 100) / 100, bytesPerUnit: Math.round(bytes / units) }))
    .sort((a, b) => b.bytesPerUnit - a.bytesPerUnit);
  return { units, objectsPerUnit: Math.round((totalCount / units) * 10) / 10, bytesPerUnit: Math.round(totalBytes / units), rows };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [beforeFile, afterFile, units = '1', top = '30'] = process.argv.slice(2);
  if (!beforeFile || !afterFile) {
    process.stderr.write('usage: node bench/heap-diff.mjs before.heapsnapshot after.heapsnapshot [units] [top]\n');
    process.exit(2);
  }
  const diff = heapDiff(beforeFile, afterFile, Number(units));
  process.stdout.write(`new objects per unit: ${diff.objectsPerUnit}, ${diff.bytesPerUnit} B self size (${diff.units} units)\n`);
  for (const row of diff.rows.slice(0, Number(top))) process.stdout.write(`${String(row.bytesPerUnit).padStart(7)} B  ${String(row.perUnit).padStart(6)} x  ${row.group}\n`);
}
