// Line charts drawn as SVG by hand: one polyline a series, scaled to the largest value shown. The
// numbers themselves (the latest value of each series, the scale) are HTML text beside the chart,
// so they are read out and stay sharp at any width.
import { h } from './dom.js';
import { formatNumber } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 300;
const HEIGHT = 100;
/** Series colours are classes of console.css; more series than these reuse them. */
const PALETTE = 6;

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attributes
 */
function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

/**
 * The points of a polyline for `values` in a box of WIDTH × HEIGHT; gaps (null) split the line.
 *
 * @param {Array<number | null>} values
 * @param {number} max
 * @param {number} slots how many values the chart has room for
 * @returns {string[]} one points attribute per unbroken run
 */
export function polylines(values, max, slots) {
  const step = WIDTH / Math.max(1, slots - 1);
  const offset = slots - values.length;
  /** @type {string[][]} */
  const runs = [[]];
  values.forEach((value, index) => {
    if (value === null) {
      if ((runs.at(-1) ?? []).length > 0) runs.push([]);
      return;
    }
    const x = (offset + index) * step;
    const y = HEIGHT - (max <= 0 ? 0 : (value / max) * HEIGHT);
    runs.at(-1)?.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  return runs.filter((run) => run.length > 0).map((run) => run.join(' '));
}

/**
 * A chart as a figure: its title and scale, the lines, and a legend with each latest value.
 *
 * @param {import('./metrics-series.js').Chart} chart
 * @param {number} slots
 */
export function lineChart(chart, slots) {
  const all = chart.series.flatMap((series) => series.values).filter((value) => value !== null);
  const max = Math.max(0, ...all);
  const unit = chart.unit === '' ? '' : ` ${chart.unit}`;
  const drawing = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', class: 'chart', role: 'img', 'aria-label': `${chart.title}: the last ${slots} readings` });
  drawing.append(svg('line', { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: 'axis' }));
  const legend = h('ul', { className: 'legend' });
  chart.series.forEach((series, index) => {
    const colour = `series-${index % PALETTE}`;
    for (const points of polylines(series.values, max, slots)) drawing.append(svg('polyline', { points, class: `line ${colour}`, 'data-series': series.name }));
    const latest = [...series.values].reverse().find((value) => value !== null);
    const item = h('li', { 'data-series': series.name, 'data-latest': latest ?? '' }, h('span', { className: `swatch ${colour}`, 'aria-hidden': 'true' }), `${series.name}: `, h('strong', null, latest === undefined || latest === null ? '—' : `${formatNumber(latest)}${unit}`));
    legend.append(item);
  });
  const caption = h('figcaption', null, h('strong', null, chart.title), h('span', { className: 'muted' }, ` up to ${formatNumber(max)}${unit}`));
  const empty = chart.series.length === 0 ? h('p', { className: 'muted' }, 'Waiting for the next readings…') : null;
  return h('figure', { className: 'chart-figure', id: chart.id, 'data-points': Math.max(0, ...chart.series.map((series) => series.values.length)) }, caption, drawing, legend, empty);
}
