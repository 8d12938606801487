// The share page: a small self-contained HTML page that shows the live frames of a share,
// streamed from /share/:token/frames. No external resources; a nonce'd inline script only.
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function sharePage(title: string, nonce: string): string {
  const t = escapeHtml(title || 'Caravan');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${t}: live view</title>
<style>
html,body{margin:0;height:100%;background:#111;color:#ddd;font:14px system-ui,sans-serif}
main{display:flex;flex-direction:column;height:100%}
header{padding:8px 12px;display:flex;gap:12px;align-items:center}
#state{opacity:.75}
#view{flex:1;display:flex;align-items:center;justify-content:center;min-height:0}
#frame{max-width:100%;max-height:100%;object-fit:contain;background:#000}
</style></head>
<body><main>
<header><strong>${t}</strong><span id="state">connecting…</span></header>
<div id="view"><img id="frame" alt="live view of the shared browser"></div>
</main>
<script nonce="${nonce}">
(function () {
  var img = document.getElementById('frame');
  var state = document.getElementById('state');
  var es = new EventSource(location.pathname.replace(/\\/$/, '') + '/frames');
  var frames = 0;
  es.addEventListener('open', function () { state.textContent = 'live'; });
  es.addEventListener('share', function (e) {
    var info = JSON.parse(e.data);
    state.textContent = 'live until ' + new Date(info.expiresAt).toLocaleTimeString();
  });
  es.addEventListener('frame', function (e) {
    frames++;
    img.src = 'data:image/jpeg;base64,' + e.data;
    document.body.dataset.frames = String(frames);
  });
  es.addEventListener('end', function (e) {
    state.textContent = 'ended (' + JSON.parse(e.data).reason + ')';
    es.close();
  });
  es.addEventListener('error', function () {
    if (es.readyState === EventSource.CLOSED) state.textContent = 'this share has ended or expired';
    else state.textContent = 'reconnecting…';
  });
})();
</script>
</body></html>`;
}
