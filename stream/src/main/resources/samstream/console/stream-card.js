// One stream of the grid: its live picture with the masks drawn (a WebSocket: a JPEG per preview frame and a
// JSON text of its objects), its figures, its objects with remove, and click / shift-click / drag to prompt.

import { call, liveUrl, liveProtocols, ApiError } from './api.js';
import * as prompts from './prompts.js';
import { ConceptPanel, exemplar } from './concepts.js';

const PREVIEW_WIDTH = 640;
const DRAG_PIXELS = 6;

export class StreamCard {
  /**
   * @param stream the stream as GET /api/v1/streams lists it
   * @param say    shows a message: say(text, isError)
   */
  constructor(stream, say) {
    this.id = stream.id;
    this.say = say;
    this.frame = null;          // the latest preview's JSON: frame, width, height, objects, hidden, lost
    this.objects = new Map();   // id -> {id, state, colour, box, score, concept} from the API's list and the previews
    this.given = new Map();     // id -> the prompt this console gave it (points / box), for shift-click
    this.pending = new Set();   // ids asked for, not yet seen
    this.selected = null;
    this.frames = 0;
    this.socket = null;
    this.retry = 0;
    this.retryAt = 0;           // no reconnect before this time (ms): a refused preview (429) backs off
    this.closed = false;
    this.el = this.render(stream);
    this.update(stream);
  }

  render(stream) {
    const el = document.createElement('article');
    el.className = 'stream';
    el.dataset.stream = stream.id;
    el.innerHTML = `
      <h3><span class="name"></span> <span class="state muted"></span>
        <button class="remove-stream" title="Remove this stream">remove stream</button></h3>
      <div class="location muted"></div>
      <div class="view"><canvas width="640" height="360"></canvas><canvas class="overlay"></canvas>
        <div class="note">waiting for frames...</div></div>
      <div class="figures"><span class="fps"></span><span class="latency"></span><span class="dropped"></span>
        <span class="frame-index"></span></div>
      <div class="concepts">
        <div class="concepts-reason muted" hidden></div>
        <ul class="concept-list"></ul>
        <form class="add-concept">
          <input name="text" size="24" maxlength="200" placeholder="a concept, e.g. person" aria-label="concept">
          <button type="submit">find</button>
          <span class="exemplars muted"></span> <button type="button" class="clear-exemplars">clear boxes</button>
        </form>
      </div>
      <ul class="objects"></ul>`;
    el.querySelector('.name').textContent = stream.id;
    this.canvas = el.querySelector('canvas');
    this.overlay = el.querySelector('canvas.overlay');
    this.note = el.querySelector('.note');
    this.list = el.querySelector('.objects');
    this.concepts = new ConceptPanel(el.querySelector('.concepts'), m => this.send(m));
    el.querySelector('.remove-stream').addEventListener('click', () => this.removeStream());
    this.canvas.addEventListener('pointerdown', e => this.pointerDown(e));
    this.canvas.addEventListener('pointermove', e => this.pointerMove(e));
    this.canvas.addEventListener('pointerup', e => this.pointerUp(e));
    return el;
  }

  /** New figures from GET /api/v1/streams. */
  update(stream) {
    this.stream = stream;
    this.el.querySelector('.state').textContent = stream.here ? stream.state
        : `${stream.state}${stream.engine ? ' on engine ' + stream.engine : ''}`;
    this.el.querySelector('.location').textContent = stream.location || '';
    const f = stream.frames;
    this.el.querySelector('.fps').textContent = stream.here ? `${stream.fps} fps` : '';
    const l = stream.latency_ms;
    this.el.querySelector('.latency').textContent = l && l.p50 !== null ? `p50 ${l.p50} ms · p99 ${l.p99} ms` : '';
    this.el.querySelector('.dropped').textContent = f ? `${f.dropped} dropped · ${f.decode_errors} decode errors` : '';
    if (stream.objects) {
      for (const o of stream.objects) {
        this.objects.set(o.id, { ...this.objects.get(o.id), ...o });
      }
      const listed = new Set(stream.objects.map(o => o.id));
      for (const id of [...this.objects.keys()]) {
        if (!listed.has(id) && !this.pending.has(id)) {
          this.objects.delete(id);
        }
      }
    }
    if (stream.here && !this.socket && !this.closed && Date.now() >= this.retryAt) {
      this.connect();
    }
    if (!stream.here) {
      this.note.textContent = stream.engine ? `runs on engine ${stream.engine}: its preview is there` : 'not running here';
    }
    this.concepts.update(stream);
    this.renderObjects();
  }

  connect() {
    let ws;
    try {
      ws = new WebSocket(liveUrl(this.id, PREVIEW_WIDTH), liveProtocols());
    } catch (e) {
      this.say(`stream ${this.id}: no live preview: ${e.message}`, true);
      return;
    }
    ws.binaryType = 'blob';
    this.socket = ws;
    ws.onopen = () => { this.retry = 0; };
    ws.onmessage = e => (typeof e.data === 'string' ? this.objectsOf(JSON.parse(e.data)) : this.draw(e.data));
    ws.onclose = () => {
      this.socket = null;
      if (this.closed) {
        return;
      }
      this.note.textContent = this.frames === 0
          ? 'no preview: too many viewers, or the stream is not running here; retrying...'
          : 'preview closed: reconnecting...';
      this.note.hidden = false;
      this.retry = Math.min(this.retry + 1, 5);
      this.retryAt = Date.now() + 1000 * this.retry;
    };
  }

  async draw(blob) {
    const bitmap = await createImageBitmap(blob);
    if (this.canvas.width !== bitmap.width || this.canvas.height !== bitmap.height) {
      this.canvas.width = bitmap.width;
      this.canvas.height = bitmap.height;
      this.overlay.width = bitmap.width;
      this.overlay.height = bitmap.height;
    }
    this.canvas.getContext('2d').drawImage(bitmap, 0, 0);
    bitmap.close();
    this.frames++;
    this.canvas.dataset.frames = String(this.frames);
    this.note.hidden = true;
  }

  /** A preview frame's objects (the text message after its JPEG). */
  objectsOf(frame) {
    this.frame = frame;
    this.canvas.dataset.frame = String(frame.frame);
    this.el.querySelector('.frame-index').textContent = `frame ${frame.frame}`;
    const seen = new Set();
    for (const o of frame.objects) {
      this.objects.set(o.id, { ...this.objects.get(o.id), ...o, state: 'visible' });
      seen.add(o.id);
    }
    for (const id of frame.hidden) {
      this.objects.set(id, { ...this.objects.get(id), id, state: 'hidden' });
      seen.add(id);
    }
    for (const id of frame.lost) {
      this.objects.set(id, { ...this.objects.get(id), id, state: 'lost' });
      seen.add(id);
    }
    for (const id of seen) {
      this.pending.delete(id);
    }
    this.renderObjects();
    if (!this.start) {
      this.drawLabels();
    }
  }

  /** The list, updated in place (an item stays the same element, so a click on it is never lost). */
  renderObjects() {
    const items = [...this.objects.values()];
    for (const id of this.pending) {
      if (!this.objects.has(id)) {
        items.push({ id, state: 'pending' });
      }
    }
    items.sort((a, b) => a.id - b.id);
    const keep = new Set(items.map(o => String(o.id)));
    for (const li of [...this.list.children]) {
      if (!keep.has(li.dataset.objectId)) {
        li.remove();
      }
    }
    let previous = null;
    for (const o of items) {
      let li = this.list.querySelector(`li[data-object-id="${o.id}"]`);
      if (!li) {
        li = this.objectItem(o.id);
      }
      li.dataset.state = o.state;
      li.classList.toggle('selected', o.id === this.selected);
      li.querySelector('.swatch').style.background = o.colour || '#888';
      li.querySelector('.label').textContent = `object ${o.id}` + (o.concept ? ` (${o.concept})` : '') +
          ` · ${o.state}` + (o.score !== undefined ? ` · score ${o.score.toFixed(2)}` : '');
      const next = previous ? previous.nextSibling : this.list.firstChild;
      if (next !== li) {
        this.list.insertBefore(li, next);
      }
      previous = li;
    }
  }

  /** Each visible object's concept over its box on the picture (canvas text: never HTML). */
  drawLabels() {
    const g = this.overlay.getContext('2d');
    g.clearRect(0, 0, this.overlay.width, this.overlay.height);
    if (!this.frame || !this.frame.width) {
      return;
    }
    const sx = this.overlay.width / this.frame.width;
    const sy = this.overlay.height / this.frame.height;
    g.font = '12px system-ui, sans-serif';
    g.textBaseline = 'bottom';
    for (const o of this.frame.objects) {
      if (!o.concept || !o.box) {
        continue;
      }
      const x = o.box[0] * sx;
      const y = Math.max(14, o.box[1] * sy);
      const w = g.measureText(o.concept).width + 6;
      g.fillStyle = 'rgba(0, 0, 0, 0.6)';
      g.fillRect(x, y - 14, w, 14);
      g.fillStyle = o.colour || '#fff';
      g.fillText(o.concept, x + 3, y);
    }
  }

  objectItem(id) {
    const li = document.createElement('li');
    li.dataset.objectId = String(id);
    const swatch = document.createElement('span');
    swatch.className = 'swatch';
    const label = document.createElement('span');
    label.className = 'label';
    const remove = document.createElement('button');
    remove.textContent = 'remove';
    remove.addEventListener('click', ev => { ev.stopPropagation(); this.send(prompts.remove(id)); });
    li.addEventListener('click', () => { this.selected = id; this.renderObjects(); });
    li.append(swatch, label, remove);
    return li;
  }

  pointerDown(e) {
    if (!this.frame) {
      this.say(`stream ${this.id}: no frame shown yet to point at`, true);
      return;
    }
    this.canvas.setPointerCapture(e.pointerId);
    this.start = { client: [e.clientX, e.clientY], frame: this.toFrame(e) };
  }

  pointerMove(e) {
    if (!this.start) {
      return;
    }
    const g = this.overlay.getContext('2d');
    g.clearRect(0, 0, this.overlay.width, this.overlay.height);
    const r = this.canvas.getBoundingClientRect();
    const sx = this.overlay.width / r.width;
    const sy = this.overlay.height / r.height;
    g.strokeStyle = '#4da3ff';
    g.lineWidth = 2;
    g.strokeRect((this.start.client[0] - r.left) * sx, (this.start.client[1] - r.top) * sy,
        (e.clientX - this.start.client[0]) * sx, (e.clientY - this.start.client[1]) * sy);
  }

  pointerUp(e) {
    if (!this.start) {
      return;
    }
    const start = this.start;
    this.start = null;
    this.overlay.getContext('2d').clearRect(0, 0, this.overlay.width, this.overlay.height);
    const moved = Math.hypot(e.clientX - start.client[0], e.clientY - start.client[1]);
    const end = this.toFrame(e);
    if (this.concepts.enabled) {
      if (moved >= DRAG_PIXELS) {
        this.concepts.addBox(exemplar(start.frame, end, e.shiftKey ? 0 : 1));
      } else {
        this.say(`stream ${this.id}: its model finds objects by concepts: type a phrase and press find (drag boxes`
            + ' first to give exemplars)', true);
      }
      this.drawLabels();
      return;
    }
    if (moved >= DRAG_PIXELS) {
      this.addObject(id => prompts.addBox(id, start.frame, end));
    } else if (e.shiftKey) {
      if (this.selected === null) {
        this.say(`stream ${this.id}: select an object first (click it in the list), then shift-click the background`, true);
        return;
      }
      const current = this.objects.get(this.selected);
      this.send(prompts.addBackground(this.selected, this.given.get(this.selected), current && current.box, end));
    } else {
      this.addObject(id => prompts.addPoint(id, end));
    }
  }

  toFrame(e) {
    return prompts.toFrame(e, this.canvas, this.frame.width, this.frame.height);
  }

  /** Adds an object under a new id; an id taken meanwhile (409) is skipped for the next one. */
  async addObject(messageFor) {
    const known = new Set([...this.objects.keys(), ...this.pending, ...this.given.keys(),
        ...(this.stream.prompted || [])]);
    let id = prompts.newObjectId(known);
    for (let attempt = 0; attempt < 5; attempt++, id++) {
      const message = messageFor(id);
      try {
        const r = await call('POST', `/api/v1/streams/${encodeURIComponent(this.id)}/prompts`, message);
        this.given.set(id, message);
        this.pending.add(id);
        this.selected = id;
        this.renderObjects();
        this.say(r.body.applied ? `stream ${this.id}: object ${id} follows from frame ${r.body.frame}`
            : `stream ${this.id}: object ${id} queued: ${r.body.note}`, false);
        return;
      } catch (e) {
        if (!(e instanceof ApiError && e.status === 409)) {
          this.say(`stream ${this.id}: the prompt was refused: ${e instanceof ApiError ? e.describe() : e.message}`, true);
          return;
        }
      }
    }
  }

  /** Posts a prompts message; resolves to whether the engine took it (a refusal is said with its reason). */
  async send(message) {
    try {
      const r = await call('POST', `/api/v1/streams/${encodeURIComponent(this.id)}/prompts`, message);
      if (message.op === 'concept' || message.op === 'remove-concept') {
        const concepts = (this.stream.concepts || []).filter(t => t !== message.text);
        if (message.op === 'concept') {
          concepts.push(message.text);
        }
        this.stream = { ...this.stream, concepts };
        this.concepts.update(this.stream);
        this.say(`stream ${this.id}: ${message.op === 'concept' ? 'looks for' : 'no longer looks for'} "${message.text}"`
            + (r.body.applied ? ` from frame ${r.body.frame}` : ' (queued)'), false);
        return true;
      }
      if (message.op === 'remove') {
        this.objects.delete(message.object);
        this.given.delete(message.object);
        this.pending.delete(message.object);
      } else {
        this.given.set(message.object, message);
      }
      this.renderObjects();
      this.say(`stream ${this.id}: ${message.op} of object ${message.object}` +
          (r.body.applied ? ` from frame ${r.body.frame}` : ' queued'), false);
      return true;
    } catch (e) {
      this.say(`stream ${this.id}: the prompt was refused: ${e instanceof ApiError ? e.describe() : e.message}`, true);
      return false;
    }
  }

  async removeStream() {
    if (!confirm(`Remove stream ${this.id}?`)) {
      return;
    }
    try {
      await call('DELETE', `/api/v1/streams/${encodeURIComponent(this.id)}`);
      this.say(`stream ${this.id}: removed`, false);
    } catch (e) {
      this.say(`stream ${this.id}: not removed: ${e instanceof ApiError ? e.describe() : e.message}`, true);
    }
  }

  close() {
    this.closed = true;
    if (this.socket) {
      this.socket.close();
    }
    this.el.remove();
  }
}
