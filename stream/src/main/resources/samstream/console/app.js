// The console: the engine's streams as a grid of live cards (stream-card.js), refreshed every second from
// GET /api/v1/streams, a form to add a stream, and clear messages when the engine is unreachable or refuses.

import { call, setToken, token, ApiError, Unreachable } from './api.js';
import { StreamCard } from './stream-card.js';

const REFRESH_MS = 1000;
const cards = new Map();
const statusEl = document.getElementById('status');
let unreachable = false;

function say(text, isError) {
  statusEl.textContent = text;
  statusEl.className = isError ? 'error' : 'info';
}

function askForToken(why) {
  const form = document.getElementById('token-form');
  form.hidden = false;
  say(why, true);
}

async function engineInfo() {
  const { body } = await call('GET', '/api/v1/engine');
  const who = body.engine ? `engine ${body.engine} · ` : '';
  document.getElementById('engine').textContent = `${who}${body.model} on ${body.backend}`;
}

async function refresh() {
  try {
    const { body } = await call('GET', '/api/v1/streams');
    if (unreachable) {
      unreachable = false;
      say('the engine answers again', false);
    }
    const seen = new Set();
    for (const s of body.streams) {
      seen.add(s.id);
      let card = cards.get(s.id);
      if (!card) {
        card = new StreamCard(s, say);
        cards.set(s.id, card);
        insertSorted(card);
      } else {
        card.update(s);
      }
    }
    for (const [id, card] of cards) {
      if (!seen.has(id)) {
        card.close();
        cards.delete(id);
      }
    }
  } catch (e) {
    if (e instanceof Unreachable) {
      unreachable = true;
      say(`The engine is unreachable: ${e.message}. Retrying every second...`, true);
    } else if (e instanceof ApiError && e.status === 401) {
      askForToken(`The engine needs its API token: ${e.describe()}`);
    } else {
      say(e instanceof ApiError ? e.describe() : String(e), true);
    }
  } finally {
    setTimeout(refresh, REFRESH_MS);
  }
}

function insertSorted(card) {
  const grid = document.getElementById('grid');
  const after = [...grid.children].find(el => el.dataset.stream > card.id);
  grid.insertBefore(card.el, after || null);
}

document.getElementById('token-form').addEventListener('submit', async e => {
  e.preventDefault();
  setToken(document.getElementById('token').value.trim());
  document.getElementById('token-form').hidden = true;
  for (const card of cards.values()) {
    card.close();
  }
  cards.clear();
  say('token set', false);
  engineInfo().catch(() => {});
});

document.getElementById('add-stream').addEventListener('submit', async e => {
  e.preventDefault();
  const f = new FormData(e.target);
  const id = f.get('id').trim();
  const definition = { location: f.get('location').trim() };
  if (f.get('live') !== 'auto') {
    definition.live = f.get('live') === 'true';
  }
  try {
    const r = await call('PUT', `/api/v1/streams/${encodeURIComponent(id)}`, definition);
    say(r.status === 202 ? `stream ${id}: put on topic ${r.body.topic}` : `stream ${id}: started`, false);
    e.target.reset();
  } catch (err) {
    say(`stream ${id} refused: ${err instanceof ApiError ? err.describe() : err.message}`, true);
  }
});

if (!token() && new URLSearchParams(location.hash.slice(1)).get('token')) {
  // A link may carry the token in its fragment (never sent to a server); it is moved to sessionStorage.
  setToken(new URLSearchParams(location.hash.slice(1)).get('token'));
  history.replaceState(null, '', location.pathname);
}
engineInfo().catch(e => {
  if (e instanceof ApiError && e.status === 401) {
    askForToken('The engine needs its API token.');
  }
});
refresh();
