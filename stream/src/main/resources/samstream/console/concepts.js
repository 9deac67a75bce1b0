// A stream's concepts (SAM 3's concept mode): the list of phrases it looks for, each with remove, a phrase to add
// (op concept) with the exemplar boxes dragged on its picture, and the refusals. Every phrase is user text: it goes
// into the page as textContent only, never as HTML.

/** concept: look for every object the phrase names; boxes [x0, y0, x1, y1, label] are exemplars (1) or not (0). */
export function conceptOp(text, boxes) {
  const message = { op: 'concept', text };
  if (boxes.length > 0) {
    message.boxes = boxes.map(b => b.slice());
  }
  return message;
}

/** remove-concept: stop looking for the phrase (its objects are reported lost). */
export function removeConceptOp(text) {
  return { op: 'remove-concept', text };
}

/** An exemplar box from a drag (corners in any order), 1 an example, 0 a counter-example. */
export function exemplar([x0, y0], [x1, y1], label) {
  return [Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1), label];
}

export class ConceptPanel {
  /**
   * @param el   the card's .concepts element
   * @param send posts a prompts message: send(message) resolves to true when the engine took it
   */
  constructor(el, send) {
    this.el = el;
    this.send = send;
    this.boxes = [];          // exemplar boxes dragged since the last concept sent
    this.list = el.querySelector('.concept-list');
    this.form = el.querySelector('.add-concept');
    this.input = this.form.querySelector('input[name="text"]');
    this.exemplars = el.querySelector('.exemplars');
    this.reason = el.querySelector('.concepts-reason');
    this.form.addEventListener('submit', e => { e.preventDefault(); this.add(); });
    el.querySelector('.clear-exemplars').addEventListener('click', () => { this.boxes = []; this.renderBoxes(); });
    this.renderBoxes();
  }

  /** The stream's view from the API: whether its model takes concepts, and those it looks for now. */
  update(stream) {
    const on = stream.here && stream.finds_concepts === true;
    this.enabled = on;
    this.form.hidden = !on; // no concept controls for a model that takes none: the reason says why
    for (const c of this.form.elements) {
      c.disabled = !on;
    }
    this.reason.textContent = on ? '' : stream.here
        ? 'concepts need a SAM 3 checkpoint (sam3.pt): this stream\'s model takes points and boxes'
        : 'the stream runs on another engine: its concepts are changed there';
    this.reason.hidden = on;
    this.renderList(on ? stream.concepts || [] : []);
  }

  /** The list, updated in place: one item per phrase, in the stream's order. */
  renderList(texts) {
    const items = [...this.list.children];
    const keep = new Set(texts);
    for (const li of items) {
      if (!keep.has(li.dataset.concept)) {
        li.remove();
      }
    }
    let previous = null;
    for (const text of texts) {
      let li = [...this.list.children].find(x => x.dataset.concept === text);
      if (!li) {
        li = document.createElement('li');
        li.dataset.concept = text;
        const label = document.createElement('span');
        label.className = 'phrase';
        label.textContent = text;
        const remove = document.createElement('button');
        remove.type = 'button';
        remove.textContent = 'remove';
        remove.addEventListener('click', () => this.send(removeConceptOp(text)));
        li.append(label, remove);
      }
      const next = previous ? previous.nextSibling : this.list.firstChild;
      if (next !== li) {
        this.list.insertBefore(li, next);
      }
      previous = li;
    }
  }

  /** A box dragged on the picture: an exemplar of the next concept sent. */
  addBox(box) {
    this.boxes.push(box);
    this.renderBoxes();
  }

  renderBoxes() {
    const n = this.boxes.length;
    const counter = this.boxes.filter(b => b[4] === 0).length;
    this.exemplars.textContent = n === 0 ? 'no exemplar boxes (drag on the picture to add some)'
        : `${n} exemplar box${n === 1 ? '' : 'es'}` + (counter ? ` (${counter} counter-example${counter === 1 ? '' : 's'})` : '');
    this.el.querySelector('.clear-exemplars').hidden = n === 0;
  }

  async add() {
    const text = this.input.value.trim();
    if (!text) {
      return;
    }
    if (await this.send(conceptOp(text, this.boxes))) {
      this.input.value = '';
      this.boxes = [];
      this.renderBoxes();
    }
  }
}
