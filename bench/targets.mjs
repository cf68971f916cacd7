// Performance targets from the issues, checked against a run's results. Each check gets
// { scenario (Corridor result of `scenario`), prism (Prism result, if any), ceilings, run } and
// returns { status: 'PASS' | 'FAIL' | 'SKIP', detail }. A scenario that had errors fails every
// target it is part of: throughput with failures is not throughput.

import { quoteTargets } from './scenarios/quotes.mjs';

const fmt = (n) => Math.round(n).toLocaleString('en-US');

function measured(result) {
  if (!result) return { status: 'SKIP', detail: 'scenario not run' };
  if (result.skipped) return { status: 'SKIP', detail: result.skipped };
  if (result.failed) return { status: 'FAIL', detail: result.failed };
  if (result.errors > 0) return { status: 'FAIL', detail: `${fmt(result.errors)} failed requests during the run` };
  return undefined;
}

export const TARGETS = [
  {
    issue: 2,
    scenario: 'customers.list',
    label: 'GET /customers?limit=20 ≥ 25% of the hello-world ceiling',
    check({ scenario, ceilings }) {
      const hello = ceilings['hello-world'];
      if (!hello || hello.skipped || hello.failed) return { status: 'SKIP', detail: 'hello-world ceiling not measured' };
      const share = scenario.rps / hello.rps;
      return { status: share >= 0.25 ? 'PASS' : 'FAIL', detail: `${fmt(scenario.rps)} req/s = ${(share * 100).toFixed(1)}% of ${fmt(hello.rps)}` };
    },
  },
  {
    issue: 2,
    scenario: 'customers.list',
    label: 'GET /customers?limit=20 p99 < 20 ms at 50 connections',
    check({ scenario, run }) {
      const note = run.connections === 50 ? '' : ` (this run used ${run.connections} connections)`;
      return { status: scenario.latency.p99 < 20 ? 'PASS' : 'FAIL', detail: `p99 ${scenario.latency.p99} ms${note}` };
    },
  },
  {
    issue: 2,
    scenario: 'customers.list',
    label: 'GET /customers?limit=20 ≥ 10× Prism',
    check({ scenario, prism }) {
      const skip = measured(prism);
      if (skip) return { status: 'SKIP', detail: `Prism: ${skip.detail}` };
      const ratio = scenario.rps / prism.rps;
      return { status: ratio >= 10 ? 'PASS' : 'FAIL', detail: `${ratio.toFixed(1)}× (Prism ${fmt(prism.rps)} req/s)` };
    },
  },
  ...quoteTargets,
];

/** Evaluates every target whose scenario was selected for this run (ran, skipped or failed). */
export function evaluateTargets({ corridor, prism, ceilings, run }) {
  return TARGETS.filter((target) => corridor.some((r) => r.key === target.scenario)).map((target) => {
    const scenario = corridor.find((r) => r.key === target.scenario);
    const prismResult = prism?.find((r) => r.key === target.scenario);
    const verdict = measured(scenario) ?? target.check({ scenario, prism: prismResult, ceilings, run });
    return { issue: target.issue, scenario: target.scenario, label: target.label, ...verdict };
  });
}
