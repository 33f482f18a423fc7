// Touchpoint's console works without this script; with it, a form that
// cannot be undone asks first, the template editor's previews follow the
// text as it is typed, and the branding form gives its contrast advice as
// the colour changes. Allowed by its hash in the Content-Security-Policy.
(function () {
  'use strict';
  // A form with data-confirm asks before it is sent.
  document.addEventListener('submit', function (e) {
    var form = e.target, btn = e.submitter;
    var text = (btn && btn.getAttribute('data-confirm')) || form.getAttribute('data-confirm');
    if (text && !window.confirm(text)) e.preventDefault();
  });

  function debounce(fn, ms) {
    var t;
    return function () { clearTimeout(t); t = setTimeout(fn, ms); };
  }

  // The template editor: each preview frame shows the draft as it is.
  document.querySelectorAll('form[data-preview]').forEach(function (form) {
    var url = form.getAttribute('data-preview');
    var frames = document.querySelectorAll('iframe[data-preview-frame]');
    var fields = ['subject', 'preheader', 'heading', 'body', 'buttonLabel', 'text'];
    var update = debounce(function () {
      var q = new URLSearchParams();
      fields.forEach(function (name) {
        var el = form.elements[name];
        if (el) q.set(name, el.value);
      });
      q.set('draft', '1');
      frames.forEach(function (f) { f.src = url + (url.indexOf('?') < 0 ? '?' : '&') + q.toString(); });
    }, 400);
    form.addEventListener('input', update);
  });

  // The branding form: the contrast advice for the colour being chosen.
  document.querySelectorAll('[data-advice]').forEach(function (input) {
    var out = document.getElementById(input.getAttribute('data-advice-target'));
    var url = input.getAttribute('data-advice');
    if (!out) return;
    var update = debounce(function () {
      fetch(url + '?color=' + encodeURIComponent(input.value), {credentials: 'same-origin'})
        .then(function (r) { return r.ok ? r.text() : ''; })
        .then(function (html) { if (html) out.innerHTML = html; })
        .catch(function () {});
    }, 250);
    input.addEventListener('input', update);
  });
})();
