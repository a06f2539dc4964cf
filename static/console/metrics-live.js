// The live charts of the metrics page: GET /_node/_local/_stats and /_node/_local/_system read
// every few seconds while the page is shown, the charts drawn again after each reading.
import { api, failure } from './api.js';
import { field, h } from './dom.js';
import { lineChart } from './charts.js';
import { KEEP, charts } from './metrics-series.js';

export const INTERVALS = ['1', '2', '5', '10'];
const DEFAULT_INTERVAL = '2';

/**
 * The section; it reads and redraws until it leaves the page.
 *
 * @param {any} firstStats the reading the page already made
 */
export function liveCharts(firstStats) {
  /** @type {import('./metrics-series.js').Sample[]} */
  const samples = [{ time: Date.now(), stats: firstStats, system: undefined }];
  const interval = field('Read every (seconds)', { id: 'metrics-interval', tag: 'select', options: INTERVALS });
  interval.control.value = DEFAULT_INTERVAL;
  const grid = h('div', { className: 'charts', id: 'metrics-charts' });
  const note = h('p', { className: 'notice', id: 'metrics-live-note', hidden: true });
  const section = h('section', { id: 'metrics-live', 'aria-labelledby': 'live-heading' }, h('h2', { id: 'live-heading' }, 'Live'), h('div', { className: 'inline-form' }, interval.wrapper), note, grid);
  const draw = () => grid.replaceChildren(...charts(samples).map((chart) => lineChart(chart, KEEP)));
  draw();
  const read = async () => {
    const [stats, system] = await Promise.all([api('GET', '/_node/_local/_stats'), api('GET', '/_node/_local/_system')]);
    note.hidden = stats.ok;
    if (!stats.ok) {
      note.textContent = failure('The latest reading failed', stats);
      return;
    }
    samples.push({ time: Date.now(), stats: stats.body, system: system.ok ? system.body : undefined });
    if (samples.length > KEEP + 1) samples.splice(0, samples.length - KEEP - 1);
    draw();
  };
  const loop = async () => {
    // The section is added to the page after this starts; it stops once the page replaced it.
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, Number(interval.control.value) * 1000));
      if (!section.isConnected) return;
      await read();
    }
  };
  void loop();
  return section;
}
