// The printed report: one table of scenarios, then ceilings, Prism, CPU and targets.

const int = (n) => (n === undefined || n === null || Number.isNaN(n) ? '–' : Math.round(n).toLocaleString('en-US'));
const ms = (n) => (n === undefined || n === null || Number.isNaN(n) ? '–' : n.toFixed(2));
const pct = (n) => (n === undefined || n === null ? '–' : `${n}%`);

function table(headers, rows, align) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (align[i] === 'l' ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)].join('\n');
}

function status(result) {
  if (result.skipped) return `skipped: ${result.skipped}`;
  if (result.failed) return `FAILED: ${result.failed}`;
  return undefined;
}

export function renderReport(results) {
  const { run, ceilings, corridor, prism, targets } = results;
  const out = [];
  const hello = ceilings['hello-world'];
  const helloRps = hello && !hello.skipped && !hello.failed ? hello.rps : undefined;
  const dbLabel = run.database.kind === 'postgres' ? `PostgreSQL ${run.database.serverVersion}` : 'PGlite (embedded)';

  out.push('');
  out.push(
    `Corridor bench · ${dbLabel} · ${run.connections} connections · ${run.duration} s per run (+${run.warmup} s warm-up) · ` +
      `${run.machine.cpus} × ${run.machine.cpuModel} · Node ${run.machine.node}`,
  );
  if (run.build.warning) out.push(`WARNING: ${run.build.warning}`);
  out.push('');

  const anyPairs = corridor.some((r) => r.pairs);
  const headers = ['Scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', '% hello-world', '× Prism', 'db tx/req', 'server µs/req', 'pg µs/req'];
  const rows = [];
  const notes = [];
  for (const r of corridor) {
    const problem = status(r);
    if (problem) {
      rows.push([r.name, '–', '–', '–', '–', '–', '–', '–', '–', '–']);
      notes.push(`${r.name}: ${problem}`);
      continue;
    }
    const p = prism?.find((x) => x.key === r.key);
    const ratio = p && !status(p) && p.rps > 0 ? `${(r.rps / p.rps).toFixed(1)}×` : '–';
    const flag = r.errors > 0 ? ' ✗' : '';
    const name = r.pairs ? `${r.name} [${int(r.opsPerSecond)} ops/s]` : r.name;
    rows.push([
      `${name}${flag}`,
      int(r.rps),
      ms(r.latency.p50),
      ms(r.latency.p99),
      int(r.errors),
      helloRps ? `${((r.rps / helloRps) * 100).toFixed(1)}%` : '–',
      ratio,
      r.dbTransactionsPerRequest === undefined ? '–' : r.dbTransactionsPerRequest.toFixed(2),
      int(r.cpuMicrosPerRequest?.server),
      int(r.cpuMicrosPerRequest?.postgres),
    ]);
    if (r.jobsOverdue > 0) notes.push(`${r.name}: ${int(r.jobsOverdue)} jobs overdue by more than 2 s when the load stopped — the job runner fell behind, so this rate is not sustainable`);
    if (r.errors > 0) notes.push(`${r.name}: ${int(r.errors)} failed requests (status codes ${JSON.stringify(r.statusCodes)}, socket errors ${r.socketErrors}, timeouts ${r.timeouts}) — req/s counts 2xx only`);
  }
  out.push(table(headers, rows, ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r']));
  if (anyPairs) out.push('[n ops/s]: a pair scenario; req/s counts each request of the pair, ops/s counts whole operations.');
  for (const n of notes) out.push(`  ✗ ${n}`);

  out.push('');
  out.push(`Ceilings (same machine, same run, ${run.connections} concurrent clients)`);
  if (Object.keys(ceilings).length === 0) out.push('  none measured (BENCH_CEILINGS)');
  const ceilingRows = Object.values(ceilings).map((c) => {
    const problem = status(c);
    if (problem) return [c.name, problem, '', '', '', ''];
    return [c.name, `${int(c.rps)} ${c.unit}`, ms(c.latency.p50), ms(c.latency.p99), int(c.errors), c.cpu ? `${pct(c.cpu.server ?? undefined)}` : '–'];
  });
  if (ceilingRows.length) out.push(table(['Ceiling', 'throughput', 'p50 ms', 'p99 ms', 'errors', 'own CPU'], ceilingRows, ['l', 'r', 'r', 'r', 'r', 'r']));
  if (run.database.kind === 'pglite' && ceilingRows.length) {
    out.push('  (DB ceilings ran on PGlite in its own process: one connection, so transactions run one at a time and');
    out.push('   their latency is service time, not queueing.)');
  }

  out.push('');
  if (prism) {
    out.push(`Prism ${run.prism.version} mocking ${run.prism.spec} (base path "${run.prism.basePath}", log level ${run.prism.logLevel})`);
    out.push(
      table(
        ['Scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
        prism.map((p) => (status(p) ? [p.name, status(p), '', '', ''] : [p.name, int(p.rps), ms(p.latency.p50), ms(p.latency.p99), int(p.errors)])),
        ['l', 'r', 'r', 'r', 'r'],
      ),
    );
  } else {
    out.push(`Prism: ${run.prism.skipped}`);
  }

  out.push('');
  out.push('CPU during each measured run (% of one core; this machine has ' + run.machine.cpus + ')');
  const cpuRows = [
    ...corridor.filter((r) => r.cpu).map((r) => [`Corridor ${r.name}`, r.cpu]),
    ...(prism ?? []).filter((r) => r.cpu).map((r) => [`Prism ${r.name}`, r.cpu]),
    ...Object.values(ceilings)
      .filter((c) => c.cpu)
      .map((c) => [`ceiling ${c.key}`, c.cpu]),
  ].map(([name, c]) => [name, pct(c.server), pct(c.serverSystem), pct(c.postgres), pct(c.loadGenerator), pct(c.other), pct(c.machine)]);
  out.push(table(['Run', 'server', '(kernel)', 'postgres', 'autocannon', 'other', 'machine'], cpuRows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']));
  const busy = [...corridor, ...(prism ?? []), ...Object.values(ceilings)].filter((r) => r.cpu && r.cpu.other > 25);
  if (busy.length) {
    out.push(`  ! Other processes used more than a quarter of a core during ${busy.length} run(s) (up to ${Math.max(...busy.map((r) => r.cpu.other))}%):`);
    out.push('    those runs understate what this machine can do; compare µs/req rather than req/s, or rerun on a quiet machine.');
  }

  out.push('');
  const onPg = run.database.kind === 'postgres';
  out.push(`Targets${onPg ? '' : ' (the issue sets them for PostgreSQL; on PGlite they are informational)'}`);
  for (const t of targets) out.push(`  ${t.status.padEnd(4)}  [issue ${t.issue}] ${t.label}: ${t.detail}`);
  if (targets.length === 0) out.push('  none for the selected scenarios');
  return out.join('\n');
}
