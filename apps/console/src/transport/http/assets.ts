/**
 * The console's own script and style sheet, served from its origin as files (the content security
 * policy allows no inline script or style). Kept as text here so that the build carries them.
 */

/** Approval deadlines counting down: every `[data-deadline]` shows the time left, each second. */
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
  tick();
  setInterval(tick, 1000);
  document.addEventListener('htmx:afterSwap', tick);
})();
`;

export const CONSOLE_STYLE = `
body { font-family: system-ui, sans-serif; margin: 0; color: #1a1a1a; }
header { background: #1f2a44; color: #fff; padding: .6rem 1rem; display: flex; gap: 1rem; align-items: center; }
header a { color: #fff; }
header form { margin-left: auto; }
main { padding: 1rem; max-width: 76rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
.error { background: #fde8e8; border: 1px solid #d33; padding: .5rem; }
.notice { background: #eef6ff; border: 1px solid #69c; padding: .5rem; }
.late { color: #b00; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; }
dl.money { display: grid; grid-template-columns: max-content max-content; gap: .2rem 1rem; }
.actions form { display: inline; }
textarea { width: 30rem; height: 4rem; }
`;
