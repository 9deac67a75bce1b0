// What a click, a shift-click or a drag on a stream's picture asks the engine: the prompts-topic message
// (op add / update), in the frame's own pixels.

/** Ids from here up belong to automatic discovery: the console never gives one. */
export const DISCOVERED_ID_BASE = 1000000;

/** A new object id: one more than every prompted id the stream is known to have (at least 1). */
export function newObjectId(knownIds) {
  let max = 0;
  for (const id of knownIds) {
    if (id < DISCOVERED_ID_BASE && id > max) {
      max = id;
    }
  }
  return max + 1;
}

/** A point of the picture element (client pixels) in the frame's pixels. */
export function toFrame(event, element, frameWidth, frameHeight) {
  const r = element.getBoundingClientRect();
  const x = (event.clientX - r.left) / r.width * frameWidth;
  const y = (event.clientY - r.top) / r.height * frameHeight;
  return [clamp(Math.round(x), 0, frameWidth - 1), clamp(Math.round(y), 0, frameHeight - 1)];
}

function clamp(v, lo, hi) {
  return Math.min(hi, Math.max(lo, v));
}

/** add: a new object at a foreground point. */
export function addPoint(id, [x, y]) {
  return { op: 'add', object: id, points: [[x, y, 1]] };
}

/** add: a new object by its box (corners in any order). */
export function addBox(id, [x0, y0], [x1, y1]) {
  return { op: 'add', object: id, box: [Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)] };
}

/**
 * update: the selected object's prompt plus a background point. The points the console gave it are kept;
 * for an object it did not make, its current box stands for what it is.
 */
export function addBackground(id, known, box, [x, y]) {
  const points = known && known.points ? known.points.slice() : [];
  points.push([x, y, 0]);
  const message = { op: 'update', object: id, points };
  const b = known && known.box ? known.box : box;
  if (b) {
    message.box = b;
  }
  return message;
}

/** remove: drops an object. */
export function remove(id) {
  return { op: 'remove', object: id };
}
