/**
 * The inspector's page: one HTML document and one script, no framework, nothing fetched from
 * elsewhere (the CSP of api.ts allows only this origin). Captured requests are attacker-written
 * text: the script puts them into the page with `textContent` only, never as markup.
 */

/** inspectorPage is the HTML served at `/`. */
export const inspectorPage = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tuna inspector</title>
<style>
  :root { --fg: #1d2733; --muted: #6b7785; --line: #dfe4ea; --accent: #0b6bcb; --bg: #f6f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: var(--fg); background: #fff; }
  header { display: flex; gap: 8px; align-items: center; padding: 8px 12px; border-bottom: 1px solid var(--line); background: var(--bg); }
  header h1 { font-size: 15px; margin: 0 12px 0 0; }
  header input[type=search] { flex: 1; min-width: 160px; padding: 4px 6px; }
  #count { color: var(--muted); white-space: nowrap; }
  main { display: flex; height: calc(100vh - 45px); }
  #list { flex: 1 1 55%; overflow: auto; border-right: 1px solid var(--line); }
  #detail { flex: 1 1 45%; overflow: auto; padding: 8px 12px; }
  table { border-collapse: collapse; width: 100%; }
  #requests th, #requests td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
  #requests td.path { max-width: 28em; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; }
  #requests tbody tr { cursor: pointer; }
  #requests tbody tr:hover { background: var(--bg); }
  #requests tbody tr.selected { background: #e3effb; }
  .s2 { color: #1a7f37; } .s3 { color: #0b6bcb; } .s4 { color: #b35900; } .s5, .aborted { color: #c62828; } .pending { color: var(--muted); }
  #empty { color: var(--muted); padding: 12px; }
  .bar { display: flex; gap: 10px; align-items: center; }
  .bar h2 { font-size: 14px; margin: 4px 0; font-family: ui-monospace, monospace; word-break: break-all; flex: 1; }
  #replay-result { color: var(--muted); }
  h3 { font-size: 13px; margin: 14px 0 4px; border-bottom: 1px solid var(--line); }
  table.headers td { padding: 1px 6px; vertical-align: top; font-family: ui-monospace, monospace; font-size: 12px; }
  table.headers td:first-child { color: var(--muted); white-space: nowrap; }
  table.headers td.redacted { color: #c62828; }
  pre { background: var(--bg); padding: 6px; white-space: pre-wrap; word-break: break-all; max-height: 40vh; overflow: auto; margin: 4px 0; }
  .meta { color: var(--muted); }
</style>
</head>
<body>
<header>
  <h1>tuna inspector</h1>
  <input id="search" type="search" placeholder="search method, host, path, status" aria-label="search">
  <select id="method" aria-label="method">
    <option value="">any method</option><option>GET</option><option>POST</option><option>PUT</option><option>PATCH</option><option>DELETE</option><option>HEAD</option><option>OPTIONS</option>
  </select>
  <select id="status" aria-label="status">
    <option value="">any status</option><option>2xx</option><option>3xx</option><option>4xx</option><option>5xx</option><option>pending</option><option>aborted</option>
  </select>
  <span id="count"></span>
  <button id="clear" type="button">Clear</button>
</header>
<main>
  <section id="list">
    <table id="requests">
      <thead><tr><th>time</th><th>method</th><th>host</th><th>path</th><th>status</th><th>duration</th><th>size</th></tr></thead>
      <tbody></tbody>
    </table>
    <p id="empty">No requests yet. Requests through the tunnel appear here as they arrive.</p>
  </section>
  <section id="detail" hidden>
    <div class="bar"><h2 id="detail-title"></h2><button id="replay" type="button">Replay</button></div>
    <p id="replay-result"></p>
    <p id="detail-meta" class="meta"></p>
    <h3>Request</h3>
    <table class="headers" id="request-headers"></table>
    <pre id="request-body"></pre>
    <h3>Response <span id="response-status"></span></h3>
    <table class="headers" id="response-headers"></table>
    <pre id="response-body"></pre>
  </section>
</main>
<script src="/inspector.js"></script>
</body>
</html>
`;

/** inspectorScript is the page's script, served at `/inspector.js`. */
export const inspectorScript = String.raw`(function () {
  'use strict';
  var state = { listKey: '', selected: null, detailVersion: -1, version: -1 };
  function byId(id) { return document.getElementById(id); }
  function cell(tr, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  function size(n) {
    if (n < 1024) return n + ' B';
    if (n < 1048576) return (n / 1024).toFixed(1) + ' KiB';
    return (n / 1048576).toFixed(1) + ' MiB';
  }
  function duration(r) { return r.durationMs === null ? '…' : r.durationMs + ' ms'; }
  function statusText(r) {
    if (r.status !== 0) return String(r.status);
    return r.state === 'pending' ? '…' : 'reset';
  }
  function statusClass(r) {
    if (r.state === 'aborted') return 'aborted';
    if (r.status === 0) return 'pending';
    return 's' + Math.floor(r.status / 100);
  }
  function query() {
    var p = new URLSearchParams();
    var q = byId('search').value.trim();
    if (q) p.set('q', q);
    if (byId('method').value) p.set('method', byId('method').value);
    if (byId('status').value) p.set('status', byId('status').value);
    var s = p.toString();
    return s ? '?' + s : '';
  }
  function getJson(url) {
    return fetch(url, { cache: 'no-store' }).then(function (res) { return res.json(); });
  }
  function refresh() {
    var qs = query();
    return getJson('/api/requests' + qs).then(function (data) {
      state.version = data.version;
      var key = qs + '|' + data.version;
      if (key !== state.listKey) {
        state.listKey = key;
        renderList(data);
      }
      if (state.selected !== null && state.detailVersion !== data.version) loadDetail(state.selected);
    }, function () {
      byId('count').textContent = 'the inspector does not answer';
    });
  }
  function renderList(data) {
    var tbody = byId('requests').tBodies[0];
    tbody.textContent = '';
    data.requests.forEach(function (r) {
      var tr = document.createElement('tr');
      tr.dataset.id = r.id;
      if (r.id === state.selected) tr.className = 'selected';
      cell(tr, new Date(r.startedAt).toLocaleTimeString());
      cell(tr, r.method);
      cell(tr, r.host);
      cell(tr, r.path, 'path');
      cell(tr, statusText(r) + (r.replayOf ? ' (replay)' : ''), statusClass(r));
      cell(tr, duration(r));
      cell(tr, size(r.responseBytes));
      tr.addEventListener('click', function () { select(r.id); });
      tbody.appendChild(tr);
    });
    byId('empty').hidden = data.requests.length > 0;
    byId('count').textContent = data.requests.length + ' shown of ' + data.total + ' (keeps the last ' + data.capacity + ')';
  }
  function select(id) {
    state.selected = id;
    byId('replay-result').textContent = '';
    Array.prototype.forEach.call(byId('requests').tBodies[0].rows, function (tr) {
      tr.className = tr.dataset.id === id ? 'selected' : '';
    });
    loadDetail(id);
  }
  function loadDetail(id) {
    var version = state.version;
    getJson('/api/requests/' + encodeURIComponent(id)).then(function (d) {
      if (state.selected !== id) return;
      state.detailVersion = version;
      if (d.error) {
        byId('detail-title').textContent = d.error;
        return;
      }
      renderDetail(d);
    });
  }
  function headers(table, pairs) {
    table.textContent = '';
    pairs.forEach(function (p) {
      var tr = document.createElement('tr');
      cell(tr, p[0]);
      cell(tr, p[1], p[1] === '[redacted]' ? 'redacted' : '');
      table.appendChild(tr);
    });
  }
  function body(pre, b) {
    var text = b.size === 0 ? '(no body)' : b.encoding === 'base64' ? '(binary, base64)\n' + b.data : b.data;
    if (b.truncated) text += '\n… (' + b.captured + ' of ' + b.size + ' bytes kept)';
    if (!b.complete && b.size > 0) text += '\n(incomplete)';
    pre.textContent = text;
  }
  function renderDetail(d) {
    byId('detail').hidden = false;
    byId('detail-title').textContent = d.method + ' ' + d.host + d.path;
    byId('detail-meta').textContent = d.id + (d.replayOf ? ', replay of ' + d.replayOf : '') + ' · ' + new Date(d.startedAt).toLocaleString() +
      ' · from ' + d.clientAddress + ' · ' + d.bindingId + ' · ' + duration(d) + ' · ' + d.state;
    headers(byId('request-headers'), d.request.headers);
    body(byId('request-body'), d.request.body);
    var replay = byId('replay');
    replay.disabled = d.notReplayable !== null;
    replay.title = d.notReplayable || 'send this request to the backend again';
    if (d.response === null) {
      byId('response-status').textContent = d.state === 'pending' ? '(waiting)' : '(none: ' + d.state + ')';
      byId('response-headers').textContent = '';
      byId('response-body').textContent = '';
      return;
    }
    byId('response-status').textContent = String(d.response.status);
    headers(byId('response-headers'), d.response.headers);
    body(byId('response-body'), d.response.body);
  }
  function replay() {
    var id = state.selected;
    if (id === null) return;
    byId('replay-result').textContent = 'replaying ' + id + '…';
    fetch('/api/requests/' + encodeURIComponent(id) + '/replay', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      .then(function (res) { return res.json(); })
      .then(function (r) {
        if (r.error) {
          byId('replay-result').textContent = 'replay failed: ' + r.error;
          return;
        }
        return refresh().then(function () {
          if (r.id) select(r.id);
          byId('replay-result').textContent = 'replayed ' + r.replayOf + ' as ' + r.id + ': ' + r.status;
        });
      });
  }
  var typing = null;
  byId('search').addEventListener('input', function () {
    clearTimeout(typing);
    typing = setTimeout(refresh, 150);
  });
  byId('method').addEventListener('change', refresh);
  byId('status').addEventListener('change', refresh);
  byId('replay').addEventListener('click', replay);
  byId('clear').addEventListener('click', function () {
    fetch('/api/requests', { method: 'DELETE' }).then(function () {
      state.selected = null;
      byId('detail').hidden = true;
      refresh();
    });
  });
  refresh();
  setInterval(refresh, 1000);
})();
`;
