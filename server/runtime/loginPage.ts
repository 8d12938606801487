// The page a local browser gets instead of the dashboard UI before it has logged in: a token
// form that posts to POST /api/auth/session (the token is not kept in the browser's storage).
export function loginPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Caravan: log in</title>
<style>body{font:15px system-ui,sans-serif;max-width:26rem;margin:15vh auto;padding:0 1rem}input,button{font:inherit;padding:.5rem;width:100%;box-sizing:border-box;margin:.25rem 0}#err{color:#b00}</style>
</head><body>
<h1>Caravan</h1>
<form id="f"><label for="t">Dashboard token (DASHBOARD_TOKEN)</label>
<input id="t" type="password" autocomplete="current-password" required autofocus>
<button>Log in</button><p id="err" role="alert"></p></form>
<script>
document.getElementById('f').addEventListener('submit', async function (e) {
  e.preventDefault();
  var res = await fetch('/api/auth/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: document.getElementById('t').value }) });
  if (res.ok) location.reload();
  else document.getElementById('err').textContent = (await res.json().catch(function () { return {}; })).message || 'login failed';
});
</script>
</body></html>`;
}
