// The live page: one self-contained HTML document (no external assets, nothing to build) that
// polls the JSON report and draws the table and a chart of QPS and amplification per workload.

import { POLICY_ANNOTATION, WEBHOOK_NOTE } from '../../poddns/annotations.js';
import { REPORT_POLL_MS } from './report.js';

const STYLE = `
body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .3em; }
#status { color: #666; margin-bottom: 1em; }
#note { color: #666; font-size: .9em; }
table { border-collapse: collapse; margin-top: 1em; }
th, td { text-align: left; padding: .25em .8em; border-bottom: 1px solid #ddd; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.hot td.amp { color: #b00; font-weight: bold; }
.charts { display: flex; gap: 2em; flex-wrap: wrap; }
svg { border: 1px solid #ddd; background: #fafafa; }
.legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: .8em; height: .8em; margin-right: .3em; }
`;

// Runs in the browser: plain ES2017, no modules, no libraries.
const SCRIPT = `
const POLL_MS = ${REPORT_POLL_MS};
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
let refreshes = 0;
const SVG_TAGS = { text: 1, line: 1, polyline: 1, circle: 1 };
function el(tag, attrs, text) {
  // Chart parts must be made in the SVG namespace, or the browser draws nothing.
  const e = SVG_TAGS[tag] ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function label(w) { return w.workload.charAt(0) === '_' ? w.workload : w.namespace + '/' + w.kind.toLowerCase() + '/' + w.workload; }
function fixed(n, d) { return n === null || n === undefined ? '-' : n.toFixed(d); }
function drawTable(list) {
  const body = document.getElementById('rows');
  body.textContent = '';
  for (const w of list) {
    const tr = el('tr', { 'data-workload': label(w), class: w.amplification !== null && w.amplification >= 1.5 ? 'hot' : '' });
    tr.appendChild(el('td', {}, w.namespace || '-'));
    tr.appendChild(el('td', {}, w.workload.charAt(0) === '_' ? w.workload : w.kind.toLowerCase() + '/' + w.workload));
    tr.appendChild(el('td', { class: 'num qps' }, fixed(w.qps, 1)));
    tr.appendChild(el('td', { class: 'num nx' }, Math.round(w.nxdomainShare * 100) + '%'));
    tr.appendChild(el('td', { class: 'num amp' }, fixed(w.amplification, 1)));
    tr.appendChild(el('td', { class: 'autopath' }, w.autopath ? 'yes' : '-'));
    tr.appendChild(el('td', { class: 'suggestion' }, w.suggestion));
    body.appendChild(tr);
  }
}
function drawChart(id, list, pick) {
  const svg = document.getElementById(id);
  const W = 460, H = 180, P = 30;
  svg.textContent = '';
  const series = list.slice(0, COLORS.length).map(function (w) { return w.history.map(function (p) { return [p.t, pick(p)]; }).filter(function (p) { return p[1] !== null; }); });
  let t0 = Infinity, t1 = -Infinity, max = 0;
  for (const s of series) for (const p of s) { t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); max = Math.max(max, p[1]); }
  if (!isFinite(t0) || max === 0) { svg.setAttribute('data-points', '0'); svg.appendChild(el('text', { x: P, y: H / 2 }, 'collecting (one point per 10 s)')); return; }
  const x = function (t) { return P + (t1 === t0 ? 0 : (t - t0) / (t1 - t0)) * (W - 2 * P); };
  const y = function (v) { return H - P + 10 - (v / max) * (H - 2 * P); };
  svg.appendChild(el('text', { x: 2, y: y(max) + 4, 'font-size': 10 }, max.toFixed(1)));
  svg.appendChild(el('line', { x1: P, y1: y(0), x2: W - P, y2: y(0), stroke: '#999' }));
  svg.setAttribute('data-points', '0');
  series.forEach(function (s, i) {
    svg.appendChild(el('polyline', { fill: 'none', stroke: COLORS[i], 'stroke-width': 2, 'data-workload': label(list[i]), points: s.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' ') }));
    // Dots too: a line needs two points, and the first minute has only one or two.
    for (const p of s) svg.appendChild(el('circle', { cx: x(p[0]).toFixed(1), cy: y(p[1]).toFixed(1), r: 3, fill: COLORS[i] }));
  });
  // What the browser drew as SVG (tests read it: an element in the wrong namespace is not drawn).
  let drawn = 0;
  for (const c of svg.children) if (c instanceof SVGCircleElement) drawn++;
  svg.setAttribute('data-points', String(drawn));
}
function drawLegend(list) {
  const legend = document.getElementById('legend');
  legend.textContent = '';
  list.slice(0, COLORS.length).forEach(function (w, i) {
    const s = el('span');
    s.appendChild(el('i', { style: 'background:' + COLORS[i] }));
    s.appendChild(document.createTextNode(label(w)));
    legend.appendChild(s);
  });
}
async function refresh() {
  const status = document.getElementById('status');
  try {
    const res = await fetch('api/workloads', { cache: 'no-store' });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    const report = await res.json();
    drawTable(report.workloads);
    drawChart('qps', report.workloads, function (p) { return p.qps; });
    drawChart('amp', report.workloads, function (p) { return p.amplification; });
    drawLegend(report.workloads);
    refreshes++;
    status.setAttribute('data-refreshes', String(refreshes));
    status.textContent = 'Updated ' + new Date(report.time).toLocaleTimeString() + ' - rates over the last ' + report.windowSeconds + ' s - ' + report.workloads.length + ' workloads';
  } catch (e) {
    status.textContent = 'Cannot read the report: ' + e.message;
  }
  setTimeout(refresh, POLL_MS);
}
refresh();
`;

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>kdns: DNS load by workload</title>
<style>${STYLE}</style>
</head>
<body>
<h1>DNS load by workload</h1>
<div id="status" data-refreshes="0">Loading…</div>
<div class="charts">
  <div><div>Queries per second</div><svg id="qps" width="460" height="180"></svg></div>
  <div><div>Queries per lookup (amplification)</div><svg id="amp" width="460" height="180"></svg></div>
</div>
<div class="legend" id="legend"></div>
<table>
<thead><tr><th>Namespace</th><th>Workload</th><th>QPS</th><th>NXDOMAIN</th><th>Amplification</th><th>Autopath</th><th>Suggestion</th></tr></thead>
<tbody id="rows"></tbody>
</table>
<p id="note">Autopath: the workload's lookups go through ClusterFirstWithAutopath, whichever way its pods asked for it. A suggested policy is asked for with the ${POLICY_ANNOTATION} annotation on the pod template, ${WEBHOOK_NOTE}.</p>
<script>${SCRIPT}</script>
</body>
</html>
`;
