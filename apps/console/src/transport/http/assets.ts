/**
 * The console's own script and style sheet, served from its origin as files (the content security
 * policy allows no inline script or style). Kept as text here so that the build carries them.
 */

/**
 * Approval deadlines counting down: every `[data-deadline]` shows the time left, each second.
 * Every `time.local` written in the viewer's time zone (UTC on hover).
 * The Watch page's live list: `#liveEvents[data-stream]` is filled from the console's own
 * server-sent events (rows the server rendered and escaped), newest first, `data-keep` at most.
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  function pad(n) { return n < 10 ? '0' + n : String(n); }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('[data-deadline]').forEach(function (el) {
      var left = Math.floor((Date.parse(el.getAttribute('data-deadline')) - now) / 1000);
      if (isNaN(left)) return;
      if (left <= 0) { el.textContent = 'deadline passed'; el.classList.add('late'); return; }
      var h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      el.textContent = (h > 0 ? h + 'h ' : '') + pad(m) + 'm ' + pad(s) + 's left';
    });
  }
  // Times in the viewer's own time zone; the UTC text stays on hover (title) and in datetime.
  function localTimes() {
    document.querySelectorAll('time.local[datetime]').forEach(function (el) {
      var at = new Date(el.getAttribute('datetime'));
      if (isNaN(at.getTime()) || el.getAttribute('data-local') === '1') return;
      el.textContent = at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
      el.setAttribute('data-local', '1');
    });
  }
  tick();
  localTimes();
  setInterval(tick, 1000);
  document.addEventListener('htmx:afterSwap', tick);
  document.addEventListener('htmx:afterSettle', localTimes);

  var list = document.getElementById('liveEvents');
  var status = document.getElementById('liveStatus');
  if (list && status && window.EventSource) {
    var keep = Number(list.getAttribute('data-keep')) || 200;
    var say = function (state, text) { status.setAttribute('data-state', state); status.textContent = text; };
    var source = new EventSource(list.getAttribute('data-stream'));
    source.addEventListener('ready', function () { say('live', 'live'); });
    source.addEventListener('outcome', function (e) {
      list.insertAdjacentHTML('afterbegin', e.data);
      while (list.children.length > keep) list.removeChild(list.lastElementChild);
    });
    source.addEventListener('signed-out', function () { source.close(); window.location.assign('/sign-in'); });
    source.addEventListener('api-error', function () { say('error', 'the admin API refused the stream'); });
    source.addEventListener('error', function () {
      if (status.getAttribute('data-state') !== 'error') say('reconnecting', 'reconnecting…');
    });
  }
})();
`;

export const CONSOLE_STYLE = `
body { font-family: system-ui, sans-serif; margin: 0; color: #1a1a1a; }
header { background: #1f2a44; color: #fff; padding: .6rem 1rem; display: flex; gap: 1rem; align-items: center; }
header a { color: #fff; }
header form { margin-left: auto; }
main { padding: 1rem; max-width: 76rem; }
table { border-collapse: collapse; width: 100%; }
header .scope { font-size: .85rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
.error { background: #fde8e8; border: 1px solid #d33; padding: .5rem; }
.notice { background: #eef6ff; border: 1px solid #69c; padding: .5rem; }
.late { color: #b00; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; }
dl.money { display: grid; grid-template-columns: max-content max-content; gap: .2rem 1rem; }
.actions form { display: inline; }
textarea { width: 30rem; height: 4rem; }
figure.chart { margin: .5rem 0; }
figure.chart svg { display: block; background: #f7f8fa; max-width: 100%; height: auto; }
figure.chart rect.bar { fill: #3b6fb6; }
figure.chart line.axis { stroke: #888; stroke-width: 1; }
tr.live-event.moved td:last-child { font-weight: bold; }
#liveStatus[data-state="live"] { color: #1a7f37; }
#liveStatus[data-state="reconnecting"], #liveStatus[data-state="error"] { color: #b00; }
a { color: #1f4f99; }
header a { color: #fff; }
/* Phones (390 px): the menu wraps instead of hiding, tables scroll in their own box, forms fit. */
@media (max-width: 40rem) {
  header { flex-wrap: wrap; gap: .4rem .8rem; }
  header form { margin-left: 0; }
  main { padding: .6rem; overflow-wrap: anywhere; }
  th, td { overflow-wrap: normal; }
  table { display: block; overflow-x: auto; }
  dl.money { grid-template-columns: max-content 1fr; }
  textarea { width: 100%; box-sizing: border-box; }
  form.filters label { flex: 1 1 45%; }
  form.filters input, form.filters select { width: 100%; box-sizing: border-box; }
}
`;
