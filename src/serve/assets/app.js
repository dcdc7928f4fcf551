// The page of `ai serve`. Text from models, chats and notes only ever enters the page as
// textContent, except replies and notes rendered by the server (markdown to HTML with raw
// HTML escaped and unsafe links dropped), which are set as innerHTML.
'use strict';

const $ = (id) => document.getElementById(id);
const state = { chat: null, chatKb: [], busy: false };

class ApiError extends Error {
  // `chat`: the chat a failed call wrote to (its prompt pending), continued by the next line.
  constructor(status, message, hint, chat) {
    super(message);
    this.status = status;
    this.hint = hint || null;
    this.chat = chat || null;
  }
}

async function failure(res) {
  let data = null;
  try { data = await res.json(); } catch (_) { /* not JSON */ }
  const e = (data && data.error) || {};
  return new ApiError(res.status, e.message || 'the server answered ' + res.status, e.hint, e.chat);
}

// The token lives in this tab's sessionStorage (no cookie: browsers send cookies to every port
// of the host) and goes with every call as a bearer header.
const TOKEN_KEY = 'ai_token';

function authHeaders(extra) {
  const h = Object.assign({}, extra || {});
  const t = sessionStorage.getItem(TOKEN_KEY);
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}

async function api(method, path, body) {
  const init = { method, headers: authHeaders(), credentials: 'omit' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await failure(res);
  return res.json();
}

function showError(e) {
  $('error-message').textContent = 'error: ' + (e && e.message ? e.message : String(e));
  $('error-hint').textContent = e && e.hint ? 'hint: ' + e.hint : '';
  $('error-hint').hidden = !(e && e.hint);
  $('error').hidden = false;
}

function clearError() { $('error').hidden = true; }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function noteHref(kb, id) {
  return '/kb/' + encodeURIComponent(kb) + '/note/' +
    String(id).split('/').map(encodeURIComponent).join('/');
}

function sourcesList(sources) {
  const ol = el('ol', 'sources');
  for (const s of sources) {
    const a = el('a', 'source', (s.ordering ? s.ordering + ' ' : '') + (s.title || s.id));
    // The server signs each source's link (a plain link carries no token).
    a.href = s.url || noteHref(s.kb, s.id);
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    a.title = s.kb + ' · ' + s.id;
    const li = el('li');
    li.appendChild(a);
    ol.appendChild(li);
  }
  return ol;
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && p.text) || '').join('');
  return '';
}

function userBubble(text) {
  const d = el('div', 'msg user');
  d.appendChild(el('span', 'who', 'You'));
  d.appendChild(document.createTextNode(text));
  return d;
}

function assistantBubble(label) {
  const d = el('div', 'msg assistant');
  const who = el('span', 'who', label || '');
  const body = el('div', 'body md');
  d.append(who, body);
  return { d, who, body };
}

function fill(b, html, text, sources) {
  if (html) b.body.innerHTML = html; // rendered and escaped by the server
  else b.body.textContent = text || '';
  if (sources && sources.length) b.d.appendChild(sourcesList(sources));
}

function scrollDown() {
  const box = $('messages');
  box.scrollTop = box.scrollHeight;
}

function pick(id, value) {
  const select = $(id);
  const has = [...select.options].some((o) => o.value === value);
  select.value = has ? value : '';
}

function when(secs) {
  return secs ? new Date(secs * 1000).toLocaleString() : '';
}

async function loadChats() {
  const rows = await api('GET', '/chats');
  const ul = $('chats');
  ul.replaceChildren();
  for (const r of rows) {
    const li = el('li');
    li.dataset.id = r.id;
    if (r.id === state.chat) {
      li.className = 'current';
      $('title').textContent = r.title || r.id;
    }
    const b = el('button', null, r.title || r.id);
    b.type = 'button';
    b.appendChild(el('span', 'meta', r.id + ' · ' + (r.model || '') + ' · ' + when(r.updated)));
    b.addEventListener('click', () => openChat(r.id).catch(showError));
    li.appendChild(b);
    ul.appendChild(li);
  }
}

async function loadModels() {
  const rows = await api('GET', '/models');
  const usable = rows.filter((m) => m.usable);
  const shown = usable.length ? usable : rows;
  const select = $('model');
  const def = rows.find((m) => m.default);
  select.options[0].textContent = def ? 'default (' + def.alias + ')' : 'default';
  for (const m of shown) {
    const o = el('option', null, m.alias + ' (' + m.provider + ':' + m.model + ')');
    o.value = m.alias;
    select.appendChild(o);
  }
}

async function loadKbs() {
  const rows = await api('GET', '/kb');
  const select = $('kb');
  for (const k of rows) {
    const o = el('option', null, k.name + ' (' + k.notes + ' notes)');
    o.value = k.name;
    if (k.description) o.title = k.description;
    select.appendChild(o);
  }
}

function newConversation() {
  if (state.busy) return;
  clearError();
  state.chat = null;
  state.chatKb = [];
  $('messages').replaceChildren();
  $('title').textContent = 'New conversation';
  $('actions').hidden = true;
  for (const li of $('chats').children) li.classList.remove('current');
  $('prompt').focus();
}

async function openChat(id) {
  if (state.busy) return;
  clearError();
  const c = await api('GET', '/chats/' + encodeURIComponent(id));
  state.chat = c.id;
  state.chatKb = Array.isArray(c.kb) ? c.kb : [];
  $('title').textContent = c.title || c.id;
  $('actions').hidden = false;
  const box = $('messages');
  box.replaceChildren();
  let alias = null;
  for (const m of c.messages || []) {
    if (m.type === 'pending') {
      const d = userBubble(textOf(m.content));
      d.classList.add('failed');
      box.appendChild(d);
    } else if (m.role === 'user') {
      box.appendChild(userBubble(textOf(m.content)));
    } else if (m.role === 'assistant') {
      const b = assistantBubble(m.alias || m.model);
      fill(b, m.html, textOf(m.content), m.sources);
      box.appendChild(b.d);
      alias = m.alias || alias;
    }
  }
  pick('model', alias || '');
  pick('kb', state.chatKb[0] || '');
  for (const li of $('chats').children) li.classList.toggle('current', li.dataset.id === c.id);
  scrollDown();
}

function parseEvent(raw) {
  let name = 'message';
  let data = '';
  for (const line of raw.split('\n')) {
    if (line.startsWith('event: ')) name = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  try { return { name, data: JSON.parse(data) }; } catch (_) { return null; }
}

// POST /call as server-sent events, read from the body as it comes (EventSource cannot POST).
async function stream(body, b) {
  const res = await fetch('/call', {
    method: 'POST',
    headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    credentials: 'omit',
  });
  if (!res.ok) throw await failure(res);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let text = '';
  let sources = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = parseEvent(buf.slice(0, i));
      buf = buf.slice(i + 2);
      if (!ev) continue;
      if (ev.name === 'delta') {
        text += ev.data.text || '';
        b.body.textContent = text; // plain text while it streams
        scrollDown();
      } else if (ev.name === 'tool') {
        // One line per tool call as it runs (searching notes for "…" … 3 results).
        const t = el('div', 'tool' + (ev.data.status === 'error' ? ' failed' : ''));
        t.textContent = ev.data.line || ev.data.name || '';
        b.d.insertBefore(t, b.body);
        scrollDown();
      } else if (ev.name === 'sources') {
        sources = ev.data.sources || [];
      } else if (ev.name === 'done') {
        b.who.textContent = ev.data.alias || ev.data.model || '';
        fill(b, ev.data.html, ev.data.reply, sources);
        b.d.classList.add('done');
        return ev.data;
      } else if (ev.name === 'error') {
        throw new ApiError(0, ev.data.error, ev.data.hint, ev.data.chat);
      }
    }
  }
  throw new ApiError(0, 'the answer ended before it was complete', 'try again');
}

async function send(ev) {
  ev.preventDefault();
  const prompt = $('prompt').value;
  if (state.busy || !prompt.trim()) return;
  clearError();
  state.busy = true;
  document.body.dataset.busy = '1';
  $('send').disabled = true;
  const box = $('messages');
  box.appendChild(userBubble(prompt));
  $('prompt').value = '';
  const b = assistantBubble($('model').value);
  b.d.classList.add('streaming');
  box.appendChild(b.d);
  scrollDown();
  const body = { prompt, stream: true };
  if (state.chat) body.chat = state.chat;
  if ($('model').value) body.alias = $('model').value;
  const kb = $('kb').value;
  if (kb) body.kb = kb;
  else if (state.chatKb.length) body.no_kb = true;
  try {
    const done = await stream(body, b);
    if (done.chat) {
      state.chat = done.chat;
      $('actions').hidden = false;
    }
    if (kb) state.chatKb = [kb];
  } catch (e) {
    if (e.chat && !state.chat) {
      state.chat = e.chat;
      $('actions').hidden = false;
    }
    b.d.classList.add('failed');
    b.d.appendChild(el('p', 'failure', 'error: ' + e.message + (e.hint ? ' (hint: ' + e.hint + ')' : '')));
    showError(e);
  } finally {
    b.d.classList.remove('streaming');
  }
  await loadChats().catch(showError);
  state.busy = false;
  $('send').disabled = false;
  document.body.dataset.busy = '0';
}

function rename() {
  if (!state.chat || $('rename-input')) return;
  const id = state.chat;
  const input = el('input');
  input.id = 'rename-input';
  input.value = $('title').textContent;
  $('title').hidden = true;
  $('title').after(input);
  input.focus();
  input.select();
  let ended = false;
  const finish = async (save) => {
    // Once: removing the focused input blurs it, which calls this again.
    if (ended) return;
    ended = true;
    const to = input.value;
    input.remove();
    $('title').hidden = false;
    if (!save || !to.trim()) return;
    try {
      const r = await api('POST', '/chats/' + encodeURIComponent(id) + '/rename', { to });
      $('title').textContent = r.title;
      await loadChats();
    } catch (e) { showError(e); }
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); finish(true); }
    if (e.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(false));
}

let deleteArmed = null;
async function remove() {
  if (!state.chat || state.busy) return;
  const button = $('delete');
  if (!deleteArmed) {
    button.textContent = 'Delete for good?';
    deleteArmed = setTimeout(() => { deleteArmed = null; button.textContent = 'Delete'; }, 4000);
    return;
  }
  clearTimeout(deleteArmed);
  deleteArmed = null;
  button.textContent = 'Delete';
  try {
    await api('DELETE', '/chats/' + encodeURIComponent(state.chat));
    newConversation();
    await loadChats();
  } catch (e) { showError(e); }
}

// `report`: a refused token is shown as an error too (it was just typed in).
async function loadAll(report) {
  try {
    await loadChats();
  } catch (e) {
    if (e.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      $('login').hidden = false;
      $('composer').hidden = true;
      document.body.dataset.ready = 'login';
      if (report) showError(e);
      return;
    }
    showError(e);
  }
  $('login').hidden = true;
  $('composer').hidden = false;
  await Promise.all([loadModels().catch(showError), loadKbs().catch(showError)]);
  document.body.dataset.ready = '1';
}

// The token arrives in the URL's fragment (never sent to a server, never in a Referer), or from
// the form; it is kept in this tab's sessionStorage, and the fragment is removed from the URL.
function keep(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
}

async function start() {
  $('composer').addEventListener('submit', send);
  $('prompt').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $('composer').requestSubmit();
    }
  });
  $('new').addEventListener('click', newConversation);
  $('rename').addEventListener('click', rename);
  $('delete').addEventListener('click', remove);
  $('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    clearError();
    try {
      keep($('token').value.trim());
      $('token').value = '';
      await loadAll(true);
    } catch (err) { showError(err); }
  });
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (m) {
    history.replaceState(null, '', location.pathname + location.search);
    try { keep(decodeURIComponent(m[1])); } catch (e) { showError(e); }
  }
  await loadAll();
}

document.addEventListener('DOMContentLoaded', () => { start().catch(showError); });
