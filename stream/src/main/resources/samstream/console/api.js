// The engine's REST API as the console calls it: JSON in and out, the bearer token (kept in this tab's
// sessionStorage, never in a cookie) on every call, and the API's JSON errors turned into ApiError.

const TOKEN_KEY = 'samstream.token';

export class ApiError extends Error {
  constructor(status, body) {
    const text = body && body.error ? body.error : `HTTP ${status}`;
    super(text);
    this.status = status;
    this.body = body;
  }

  /** The error as the console shows it: the status, the reason code (a refused prompt's), the API's words and the field. */
  describe() {
    const field = this.body && this.body.field ? ` (field: ${this.body.field})` : '';
    const reason = this.body && this.body.reason ? ` ${this.body.reason}` : '';
    return `${this.status}${reason}: ${this.message}${field}`;
  }
}

/** The engine could not be reached at all (network error, engine down). */
export class Unreachable extends Error {}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  } else {
    sessionStorage.removeItem(TOKEN_KEY);
  }
}

/** A call of the API: resolves to the parsed JSON body (null for 204), rejects with ApiError or Unreachable. */
export async function call(method, path, body) {
  const headers = { 'Accept': 'application/json' };
  if (token()) {
    headers['Authorization'] = `Bearer ${token()}`;
  }
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new Unreachable(`the engine does not answer (${e.message})`);
  }
  let json = null;
  if (response.status !== 204) {
    const text = await response.text();
    try {
      json = text ? JSON.parse(text) : null;
    } catch (e) {
      json = { error: text.slice(0, 300) };
    }
  }
  if (!response.ok) {
    throw new ApiError(response.status, json);
  }
  return { status: response.status, body: json };
}

/** The WebSocket URL of a stream's live preview (the token goes as a subprotocol, see liveProtocols). */
export function liveUrl(stream, width) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/api/v1/streams/${encodeURIComponent(stream)}/live?width=${width}`;
}

/** The subprotocols a live WebSocket offers: the server answers samstream.v1; the other carries the token. */
export function liveProtocols() {
  return token() ? ['samstream.v1', `bearer.${token()}`] : ['samstream.v1'];
}
