// pglock dashboard: asks before destructive actions, and refreshes the live parts of the page
// (elements with data-live and an id) by fetching the same page again, without reloading it.
(function () {
  'use strict';
  document.addEventListener('submit', function (e) {
    var message = e.target.getAttribute('data-confirm');
    if (message && !window.confirm(message)) {
      e.preventDefault();
    }
  });
  var every = parseInt(document.body.getAttribute('data-refresh') || '0', 10);
  if (!every) {
    return;
  }
  var status = document.getElementById('live-status');
  var busy = false;
  function typing() {
    var a = document.activeElement;
    return a && (a.tagName === 'INPUT' || a.tagName === 'SELECT' || a.tagName === 'TEXTAREA');
  }
  function refresh() {
    // Not while hidden, while the operator types, or while a stack trace is open: a refresh would
    // throw away what they are doing.
    if (busy || document.hidden || typing() || document.querySelector('details[open]')) {
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: 'same-origin', headers: { 'X-Pglock-Live': '1' } })
      .then(function (r) {
        if (!r.ok) {
          throw new Error('HTTP ' + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, 'text/html');
        document.querySelectorAll('[data-live][id]').forEach(function (el) {
          var next = fresh.getElementById(el.id);
          if (next) {
            el.replaceWith(document.importNode(next, true));
          }
        });
        document.body.setAttribute('data-updated', String(Date.now()));
        if (status) {
          status.textContent = 'live: updated ' + new Date().toLocaleTimeString();
        }
      })
      .catch(function (err) {
        if (status) {
          status.textContent = 'live updates failing: ' + err.message;
        }
      })
      .finally(function () {
        busy = false;
      });
  }
  setInterval(refresh, every);
})();
