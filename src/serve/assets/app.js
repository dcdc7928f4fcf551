// The page of `ai serve`. Text from models, chats and notes only ever enters the page as
// textContent, except replies and notes rendered by the server (markdown to HTML with raw
// HTML escaped and unsafe links dropped), which are set as innerHTML.
'use strict';

const $ = (id) => document.getElementById(id);
// `queue`: prompts sent while a call runs (or the chat list reloads after it), sent in order
// once it is done: never dropped.
const state = { chat: null, chatKb: [], busy: false, abort: null, queue: [] };

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

// The clipboard: the Clipboard API where the page is a secure context (127.0.0.1, localhost),
// else a selected text area (a phone reaching `ai serve --host` over the network).
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try { await navigator.clipboard.writeText(text); return true; } catch (_) { /* below */ }
  }
  const area = el('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
  area.remove();
  return ok;
}

function copyButton(label, text) {
  const b = el('button', 'copy', label);
  b.type = 'button';
  b.title = 'Copy to the clipboard';
  b.addEventListener('click', async () => {
    const ok = await copyText(typeof text === 'function' ? text() : text);
    b.textContent = ok ? 'Copied' : 'Copy failed';
    setTimeout(() => { b.textContent = label; }, 1500);
  });
  return b;
}

// A copy button on each code block of a rendered reply or note.
function codeCopies(root) {
  for (const pre of root.querySelectorAll('pre')) {
    if (pre.querySelector(':scope > button.copy')) continue;
    const code = pre.querySelector('code') || pre;
    pre.appendChild(copyButton('Copy', () => code.textContent));
  }
}

// `[n]` in a reply becomes a link to its n-th source (outside code and links): made with DOM
// calls from the server's signed source URLs, so nothing in the reply becomes markup.
function citeSources(root, sources) {
  if (!sources || !sources.length) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (n) => (n.parentElement && n.parentElement.closest('code, pre, a')
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const nodes = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (/\[\d{1,3}\]/.test(n.nodeValue)) nodes.push(n);
  }
  for (const node of nodes) {
    const parts = node.nodeValue.split(/(\[\d{1,3}\])/);
    const frag = document.createDocumentFragment();
    for (const part of parts) {
      const m = /^\[(\d{1,3})\]$/.exec(part);
      const s = m && sources[Number(m[1]) - 1];
      if (s) {
        const a = el('a', 'cite', part);
        a.href = s.url || noteHref(s.kb, s.id);
        a.target = '_blank';
        a.rel = 'noopener noreferrer';
        a.title = (s.ordering ? s.ordering + ' ' : '') + (s.title || s.id);
        frag.appendChild(a);
      } else if (part) {
        frag.appendChild(document.createTextNode(part));
      }
    }
    node.replaceWith(frag);
  }
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

function userBubble(text, attachments) {
  const d = el('div', 'msg user');
  d.appendChild(el('span', 'who', 'You'));
  attachmentLines(d, attachments);
  d.appendChild(document.createTextNode(text));
  return d;
}

function humanSize(n) {
  if (n >= 1048576) return (n / 1048576).toFixed(1) + ' MiB';
  if (n >= 1024) return (n / 1024).toFixed(1) + ' KiB';
  return n + ' B';
}

// What was attached to a message: its name, type and size (the bytes are not on the page);
// a kept copy opens through the link the server signed for it (a plain link carries no token).
function attachmentLines(d, list) {
  if (!Array.isArray(list)) return;
  for (const a of list) {
    if (!a || typeof a.name !== 'string') continue;
    const what = a.url
      ? `${a.name} (web page from ${a.url})`
      : `${a.name} (${a.type}, ${humanSize(Number(a.size) || 0)}${a.kept ? ', a copy kept' : ''})`;
    const p = el('p', 'attachment', 'attached: ' + what);
    if (typeof a.link === 'string' && a.link.startsWith('/chats/')) {
      const open = el('a', 'kept', 'open');
      open.href = a.link;
      open.target = '_blank';
      open.rel = 'noopener noreferrer';
      p.append(' · ', open);
    }
    d.appendChild(p);
  }
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
  codeCopies(b.body);
  citeSources(b.body, sources);
  if (sources && sources.length) b.d.appendChild(sourcesList(sources));
  const tools = el('div', 'msg-tools');
  tools.appendChild(copyButton('Copy reply', text || b.body.textContent));
  b.d.appendChild(tools);
}

// A failed prompt can be sent again in its place (`ai chat retry`): no second copy of it.
function retryButton(d) {
  let tools = d.querySelector(':scope > .msg-tools');
  if (!tools) {
    tools = el('div', 'msg-tools');
    d.appendChild(tools);
  }
  const r = el('button', 'retry', 'Retry');
  r.type = 'button';
  r.addEventListener('click', () => { retry(d).catch(showError); });
  tools.prepend(r);
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

// The chat list, or with words in the search box, the chats that hold them all (`ai chat
// search`), each with the line that matched.
async function loadChats() {
  const q = $('search').value.trim();
  if (q) return searchChats(q);
  const rows = await api('GET', '/chats');
  const ul = $('chats');
  ul.replaceChildren();
  document.body.dataset.list = 'chats';
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
    b.addEventListener('click', () => {
      document.body.classList.remove('side-open');
      openChat(r.id).catch(showError);
    });
    li.appendChild(b);
    ul.appendChild(li);
  }
}

async function searchChats(q) {
  const found = await api('GET', '/chats?q=' + encodeURIComponent(q));
  if ($('search').value.trim() !== q) return; // typed on since
  const ul = $('chats');
  ul.replaceChildren();
  const hits = (found && found.hits) || [];
  if (!hits.length) ul.appendChild(el('li', 'empty', 'No chat holds every word of “' + q + '”'));
  for (const h of hits) {
    const li = el('li', 'hit');
    li.dataset.id = h.id;
    if (h.id === state.chat) li.className = 'hit current';
    const b = el('button', null, h.title || h.id);
    b.type = 'button';
    b.appendChild(el('span', 'meta', h.id + ' · ' + when(h.last_used)));
    const who = h.role === 'user' ? 'you' : h.role === 'title' ? 'title' : (h.model || 'reply');
    b.appendChild(el('span', 'line', who + ': ' + (h.line || '')));
    b.addEventListener('click', () => {
      document.body.classList.remove('side-open');
      openChat(h.id).catch(showError);
    });
    li.appendChild(b);
    ul.appendChild(li);
  }
  document.body.dataset.list = 'search';
}

let searchTimer = null;
function searchTyped() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => { loadChats().catch(showError); }, 250);
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
  document.body.classList.remove('side-open');
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
  const messages = c.messages || [];
  messages.forEach((m, i) => {
    const last = i === messages.length - 1;
    if (m.type === 'pending') {
      // Resent since (a Retry, `ai chat retry`): its later turn shows it.
      const resent = messages.slice(i + 1).some((n) => n.role === 'user' &&
        textOf(n.content) === textOf(m.content));
      if (resent) return;
      const d = userBubble(textOf(m.content), m.attachments);
      d.classList.add('failed');
      box.appendChild(d);
      if (last) retryButton(d);
    } else if (m.role === 'user') {
      box.appendChild(userBubble(textOf(m.content), m.attachments));
    } else if (m.role === 'assistant') {
      const b = assistantBubble(m.alias || m.model);
      fill(b, m.html, textOf(m.content), m.sources);
      if (m.interrupted) {
        b.d.classList.add('interrupted');
        b.d.insertBefore(el('p', 'note', 'stopped; what arrived is saved'), b.body.nextSibling);
        if (last) retryButton(b.d);
      }
      box.appendChild(b.d);
      alias = m.alias || alias;
    }
  });
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
async function stream(body, b, signal) {
  const res = await fetch('/call', {
    method: 'POST',
    headers: authHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' }),
    body: JSON.stringify(body),
    credentials: 'omit',
    signal,
  });
  if (!res.ok) throw await failure(res);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let text = '';
  let sources = [];
  b.partial = () => text;
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

function setBusy(busy) {
  state.busy = busy;
  document.body.dataset.busy = busy ? '1' : '0';
  $('send').hidden = busy;
  $('stop').hidden = !busy;
}

// One call streamed into bubble `b`; `d`: the bubble of the prompt, for a Retry on failure.
async function run(body, b, d) {
  clearError();
  setBusy(true);
  const known = new Set([...$('chats').children].map((li) => li.dataset.id));
  state.abort = new AbortController();
  let stopped = false;
  try {
    const done = await stream(body, b, state.abort.signal);
    if (done.chat) {
      state.chat = done.chat;
      $('actions').hidden = false;
    }
    if (body.kb) state.chatKb = [body.kb];
  } catch (e) {
    if (e && e.name === 'AbortError') {
      // Stop: the server stops the call, and the turn saves what arrived, marked
      // interrupted (as Ctrl+C does).
      stopped = true;
      b.d.classList.add('interrupted', 'done');
      b.body.textContent = b.partial ? b.partial() : b.body.textContent;
      b.d.appendChild(el('p', 'note', 'stopped; what arrived is saved'));
      retryButton(b.d);
    } else {
      if (e.chat && !state.chat) {
        state.chat = e.chat;
        $('actions').hidden = false;
      }
      b.d.classList.add('failed');
      b.d.appendChild(el('p', 'failure', 'error: ' + e.message + (e.hint ? ' (hint: ' + e.hint + ')' : '')));
      if (state.chat) retryButton(b.d);
      showError(e);
    }
  } finally {
    b.d.classList.remove('streaming');
    state.abort = null;
  }
  // Still busy while the list reloads: a prompt sent meanwhile is queued (see `send`).
  await loadChats().catch(showError);
  if (stopped && !state.chat) {
    // A new chat stopped before its ID arrived: the one that was not listed before.
    const li = [...$('chats').children].find((x) => !known.has(x.dataset.id));
    if (li) {
      state.chat = li.dataset.id;
      li.classList.add('current');
      $('actions').hidden = false;
    }
  }
  setBusy(false);
  // The next prompt sent meanwhile, in the chat this call continued or started.
  const next = state.queue.shift();
  if (next) await ask(next);
}

// Send: at once, or when the page is busy (a reply streaming, the chat list reloading after
// it), queued behind it. It used to be ignored then, without a word.
async function send(ev) {
  ev.preventDefault();
  const prompt = $('prompt').value;
  if (!prompt.trim()) return;
  $('prompt').value = '';
  const d = userBubble(prompt);
  $('messages').appendChild(d);
  const item = { prompt, d, model: $('model').value, kb: $('kb').value };
  if (state.busy) {
    d.classList.add('queued');
    state.queue.push(item);
    scrollDown();
    return;
  }
  await ask(item);
}

// One prompt (its bubble shown already) sent with the model and notes picked when it was sent.
async function ask(item) {
  const { prompt, d, model, kb } = item;
  const box = $('messages');
  d.classList.remove('queued');
  box.appendChild(d); // after the replies that came before its turn
  const b = assistantBubble(model);
  b.d.classList.add('streaming');
  box.appendChild(b.d);
  scrollDown();
  const body = { prompt, stream: true };
  if (state.chat) body.chat = state.chat;
  if (model) body.alias = model;
  if (kb) body.kb = kb;
  else if (state.chatKb.length) body.no_kb = true;
  await run(body, b, d);
}

// Retry: the chat's failed (or stopped) last prompt, sent again in its place.
async function retry(failed) {
  if (state.busy || !state.chat) return;
  const again = failed.querySelector(':scope > .msg-tools > button.retry');
  if (again) again.remove();
  // A failed reply's bubble gives way to the new one; a pending prompt's bubble stays.
  if (failed.classList.contains('assistant')) failed.remove();
  const b = assistantBubble($('model').value);
  b.d.classList.add('streaming');
  $('messages').appendChild(b.d);
  scrollDown();
  const body = { retry: true, chat: state.chat, stream: true };
  if ($('model').value) body.alias = $('model').value;
  await run(body, b, null);
}

// Stop: the reply stops, and the prompts queued behind it go back into the box, unsent.
function stop() {
  const queued = state.queue.splice(0);
  if (queued.length) {
    for (const q of queued) q.d.remove();
    const rest = $('prompt').value;
    $('prompt').value = queued.map((q) => q.prompt).concat(rest ? [rest] : []).join('\n');
  }
  if (state.abort) state.abort.abort();
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
  $('stop').addEventListener('click', stop);
  $('search').addEventListener('input', searchTyped);
  $('menu').addEventListener('click', () => document.body.classList.toggle('side-open'));
  $('scrim').addEventListener('click', () => document.body.classList.remove('side-open'));
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
