/*
 * app.js -- the dashboard's single-page app (index.html), served at /app.js.
 *
 * The hash is the route: #/cluster (default), #/nodes, #/nodes/ID,
 * #/accelerators, #/tasks, #/actors, #/placement_groups, #/gangs,
 * #/objects, #/logs/TASK_ID and #/logs/actor/ACTOR_ID; a listing's filters
 * and page sit in the hash query (#/tasks?state=RUNNING&offset=100), so
 * every view is a link. Each view names the /api calls it needs (load) and
 * draws their answers (draw); only the current view is refreshed, every
 * 2 s, and a call of a kind still in flight is not sent again. Logs are
 * followed on their own 1 s poll with the offset the head hands back.
 *
 * Contract with tests and tools: once the current view has drawn its first
 * data (or the error of its first call), document.documentElement.dataset
 * .ready is the view's name (cleared on every route change); every table row carries data-id, the id of what
 * it shows. A 401 from /api goes to /login (a missing or rotated token).
 *
 * Everything from the head reaches the DOM as text nodes or attribute
 * values (el() below), never as markup. Charts are plain SVG (chart()).
 * Big tables are built off-document and put in with one replaceChildren,
 * so 1,000 rows cost one layout.
 */
'use strict';

const REFRESH_MS = 2000;
const LOG_POLL_MS = 1000;
const LOG_KEEP = 1 << 20; /* characters of output a log view keeps */
const PAGE = 100;
const NODE_PAGE = 1000;
const HISTORY_S = 3600;
const SVG = 'http://www.w3.org/2000/svg';
const BYTES = {memory: 1, object_store_memory: 1};
const TASK_STATES = ['PENDING', 'INFEASIBLE', 'RUNNING', 'FINISHED', 'FAILED',
    'CANCELLED'];
const ACTOR_STATES = ['PENDING', 'ALIVE', 'RESTARTING', 'DEAD'];
const PG_STATES = ['PENDING', 'CREATED', 'REMOVED', 'INFEASIBLE'];
const GANG_STATES = ['PENDING', 'RUNNING', 'STOPPING', 'FINISHED', 'FAILED',
    'CANCELLED'];
const OBJ_STATES = ['PENDING', 'READY', 'LOST', 'FAILED', 'FREED'];
const COLORS = ['#2f6fdf', '#e0703a', '#2a9d5b', '#9b4dca', '#c9a227',
    '#d6455d', '#3aa6b9', '#777'];

/* ---- DOM helpers --------------------------------------------------------- */

/*
 * el(tag, attrs, ...kids): an element; attrs set attributes (class, href,
 * title, data-*), except on* which are not allowed; kids are nodes,
 * strings (text), numbers, arrays of those, or null (skipped).
 */
function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === null || v === undefined || v === false || k.startsWith('on'))
            continue;
        if (k === 'style')
            e.style.cssText = v;
        else
            e.setAttribute(k, v === true ? '' : String(v));
    }
    add(e, kids);
    return e;
}

function add(e, kids) {
    for (const k of kids) {
        if (k === null || k === undefined || k === false)
            continue;
        if (Array.isArray(k))
            add(e, k);
        else
            e.append(k instanceof Node ? k : String(k));
    }
    return e;
}

function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {}))
        e.setAttribute(k, String(v));
    add(e, kids);
    return e;
}

/* ---- formatting ---------------------------------------------------------- */

function num(v) {
    return typeof v === 'number' && isFinite(v) ? v : 0;
}

function bytes(b) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    b = num(b);
    while (Math.abs(b) >= 1024 && i < u.length - 1) {
        b /= 1024;
        i++;
    }
    return (i ? b.toFixed(b < 10 ? 2 : 1) : String(b)) + ' ' + u[i];
}

function qty(v) {
    v = num(v);
    return Math.abs(v) >= 1000 ? v.toFixed(0) : String(+v.toFixed(2));
}

function amount(name, v) {
    if (BYTES[name])
        return bytes(v);
    return qty(v) + (name !== 'CPU' ? '' : num(v) === 1 ? ' core' : ' cores');
}

function pct(f) {
    return (num(f) * 100).toFixed(0) + '%';
}

/*
 * An id as shown: whole up to 16 characters (task, actor, group ids),
 * else its first 12 and an ellipsis (node and object ids); the whole id
 * is in the title and in data-id.
 */
function short(id) {
    id = String(id || '');
    return id.length > 16 ? id.slice(0, 12) + '\u2026' : id;
}

function ago(ms) {
    if (!ms)
        return '';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 120)
        return s + ' s ago';
    if (s < 7200)
        return Math.round(s / 60) + ' min ago';
    return Math.round(s / 3600) + ' h ago';
}

function duration(t0, t1) {
    if (!t0)
        return '';
    const s = Math.max(0, ((t1 || Date.now()) - t0) / 1000);
    if (s < 120)
        return s.toFixed(1) + ' s';
    if (s < 7200)
        return (s / 60).toFixed(1) + ' min';
    return (s / 3600).toFixed(1) + ' h';
}

function resText(res) {
    return Object.keys(res || {}).sort()
        .map(k => k + ' ' + (BYTES[k] ? bytes(res[k]) : qty(res[k])))
        .join(', ');
}

/* ---- small widgets ------------------------------------------------------- */

/*
 * A meter: one element, its text over a thin bar (CSS: .m and --f), so a
 * table of 1,000 nodes with several meters a row stays light. k: a muted
 * key before the text (CSS ::before), for meters stacked in one cell.
 */
function bar(f, label, k) {
    f = Math.max(0, Math.min(1, num(f)));
    const cls = f >= 0.9 ? 'm hot' : f >= 0.7 ? 'm warm' : 'm';
    return el('span', {class: cls, style: '--f:' + (f * 100).toFixed(1) + '%',
        'data-k': k || null}, label === undefined ? '\u00a0' : label);
}

function stateTag(s) {
    return el('span', {class: 'state st-' + String(s || '')}, s || '?');
}

function idLink(href, id) {
    return el('a', {href: href, title: id, class: 'id'}, short(id));
}

function nodeLink(id) {
    return id ? idLink('#/nodes/' + encodeURIComponent(id), id) : '';
}

function card(title, ...kids) {
    return el('section', {class: 'card'}, el('h2', null, title), kids);
}

function kv(pairs) {
    return el('dl', {class: 'kv'}, pairs.filter(p => p).map(([k, v]) =>
        [el('dt', null, k), el('dd', null, v === '' || v === null ||
            v === undefined ? '\u2014' : v)]));
}

/*
 * table(cols, rows, idOf, empty, cache): cols are [header, row => cell
 * content, width]; every row gets data-id = idOf(row). Built off-document:
 * one insert. cache (a Map kept by the caller across refreshes) reuses the
 * row of an entry whose data did not change.
 *
 * When every column has a width the table is a CSS grid of rows (role
 * table/row/cell) whose rows skip layout and paint while off screen
 * (content-visibility): what keeps 1,000 nodes cheap to draw. Otherwise
 * it is a plain <table>.
 */
function table(cols, rows, idOf, empty, cache) {
    const grid = cols.every(c => c[2]);
    const row = grid ? () => el('div', {class: 'gtr', role: 'row'}) :
        () => document.createElement('tr');
    const cell = grid ? kids => el('div', {class: 'gtd', role: 'cell'}, kids) :
        kids => el('td', null, kids);
    const frag = document.createDocumentFragment();
    const next = new Map();
    for (const r of rows) {
        const id = String(idOf(r));
        const key = cache ? JSON.stringify(r) : null;
        const old = cache && cache.get(id);
        let tr = old && old.key === key ? old.tr : null;
        if (!tr) {
            tr = row();
            tr.dataset.id = id;
            for (const [, f] of cols)
                tr.append(cell(f(r)));
        }
        next.set(id, {key, tr});
        frag.append(tr);
    }
    if (cache) {
        cache.clear();
        next.forEach((v, k) => cache.set(k, v));
    }
    if (grid)
        return gridTable(cols, frag, rows.length ? null : empty);
    if (!rows.length)
        frag.append(el('tr', {class: 'empty'}, el('td',
            {colspan: cols.length}, empty || '(none)')));
    return el('table', {class: 'list'},
        el('thead', null, el('tr', null, cols.map(([h]) => el('th', null, h)))),
        el('tbody', null, frag));
}

function gridTable(cols, frag, empty) {
    const t = el('div', {class: 'list gtable', role: 'table', style:
        '--cols:' + cols.map(c => c[2]).join(' ')},
    el('div', {class: 'gtr gth', role: 'row'}, cols.map(([h]) =>
        el('div', {class: 'gtd', role: 'columnheader'}, h))), frag);
    if (empty)
        t.append(el('div', {class: 'gtr empty'}, el('div', {class: 'gtd'},
            empty)));
    return t;
}

/* ---- charts -------------------------------------------------------------- */

/* A round top for an axis over 0..v; bytes round in their unit (GiB). */
function niceMax(v, isBytes) {
    if (!(v > 0))
        return 1;
    if (isBytes && v >= 1024) {
        const u = Math.pow(1024, Math.floor(Math.log(v) / Math.log(1024)));
        return niceMax(v / u) * u;
    }
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 1.2, 1.6, 2, 2.4, 3.2, 4, 6, 8, 10])
        if (m * p >= v * 1.0001)
            return m * p;
    return 10 * p;
}

function timeLabel(s) {
    if (s === 0)
        return 'now';
    if (s < 120)
        return '-' + s + ' s';
    /* -3.8 min, not a rounded -4 min at 225 s; -5 min at 299 s */
    return '-' + Math.round(s / 6) / 10 + ' min';
}

/* The path of one series: M/L runs split at null gaps. */
function linePath(vals, x, y) {
    let d = '';
    let pen = false;
    for (let i = 0; i < vals.length; i++) {
        const v = vals[i];
        if (v === null || v === undefined || !isFinite(v)) {
            pen = false;
            continue;
        }
        d += (pen ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
        pen = true;
    }
    return d;
}

/*
 * chart(title, lines, opts): a time-series line chart in SVG with a y axis
 * (0..nice max, 4 ticks), an x axis of seconds before now and a legend.
 * lines: [{name, values (oldest first, null = gap), dash}]; opts.interval
 * (ms between samples), opts.fmt (tick labels), opts.max (a fixed top).
 */
function chart(title, lines, opts) {
    const W = 520, H = 170, L = 62, R = 10, T = 10, B = 22;
    const fmt = opts.fmt || qty;
    const n = Math.max(2, ...lines.map(l => (l.values || []).length));
    let top = opts.max || 0;
    for (const l of lines)
        for (const v of l.values || [])
            if (v !== null && v > top)
                top = v;
    top = opts.max || niceMax(top, fmt === bytes);
    const x = i => L + (W - L - R) * i / (n - 1);
    const y = v => T + (H - T - B) * (1 - Math.min(v, top) / top);
    const g = svg('svg', {viewBox: '0 0 ' + W + ' ' + H, class: 'chart',
        role: 'img', 'aria-label': title});
    for (let k = 0; k <= 4; k++) {
        const v = top * k / 4;
        g.append(svg('line', {x1: L, x2: W - R, y1: y(v), y2: y(v),
            class: k ? 'grid' : 'axis'}));
        g.append(svg('text', {x: L - 6, y: y(v) + 4, class: 'tick',
            'text-anchor': 'end'}, fmt(v)));
    }
    const span = Math.round((n - 1) * (opts.interval || 1000) / 1000);
    for (const k of [0, 1, 2, 3, 4]) {
        g.append(svg('text', {x: x((n - 1) * k / 4), y: H - 6, class: 'tick',
            'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle'},
            timeLabel(Math.round(span * (4 - k) / 4))));
    }
    lines.forEach((l, i) => {
        const d = linePath(l.values || [], x, y);
        if (d)
            g.append(svg('path', {d: d, class: 'line', stroke:
                COLORS[i % COLORS.length], 'stroke-dasharray':
                l.dash ? '5 3' : 'none'}));
    });
    const legend = el('div', {class: 'legend'}, lines.map((l, i) => {
        const vals = (l.values || []).filter(v => v !== null);
        const last = vals.length ? fmt(vals[vals.length - 1]) : '\u2014';
        return el('span', null, el('i', {style: 'background:' +
            COLORS[i % COLORS.length]}), l.name + ' ' + last);
    }));
    return el('figure', {class: 'chartbox'}, el('figcaption', null, title),
        g, legend);
}

/* ---- the /api ------------------------------------------------------------ */

class HttpError extends Error {
    constructor(status, msg) {
        super(msg);
        this.status = status;
    }
}

const OPTS = {cache: 'no-store', headers: {Accept: 'application/json'}};
/* A response's JSON, or an HttpError with the head's {"error": ...}. */
async function answer(r) {
    if (r.status === 401) {
        location.href = '/login';
        throw new HttpError(401, 'the cluster token is required');
    }
    let body = null;
    try {
        body = await r.json();
    } catch (e) {
        body = null;
    }
    if (!r.ok)
        throw new HttpError(r.status, (body && body.error) ||
            'HTTP ' + r.status);
    return body;
}

const inflight = new Map(); /* kind -> {url, p}: one request of a kind */

/*
 * Fetch url, at most one request of a kind at a time: a call for the URL
 * already in flight shares its answer; one for another URL (the route
 * changed) is sent once the one in flight has ended.
 */
function once(kind, url) {
    const cur = inflight.get(kind);
    if (cur && cur.url === url)
        return cur.p;
    const before = cur ? cur.p.catch(() => null) : Promise.resolve();
    const p = before.then(() => fetch(url, OPTS)).then(answer).finally(() => {
        if (inflight.get(kind) === entry)
            inflight.delete(kind);
    });
    const entry = {url, p};
    inflight.set(kind, entry);
    return p;
}

function api(kind, path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {}))
        if (v !== '' && v !== null && v !== undefined)
            q.set(k, v);
    return once(kind, '/api/' + path + (q.toString() ? '?' + q : ''));
}

function clusterStatus() {
    return once('cluster_status', '/api/cluster_status');
}

/* An optional call: RET null when the head does not have that route. */
async function optional(p) {
    try {
        return await p;
    } catch (e) {
        if (e.status === 404)
            return null;
        throw e;
    }
}

/* ---- route --------------------------------------------------------------- */

function decode(part) {
    try {
        return decodeURIComponent(part);
    } catch (e) { /* a stray % in a hand-typed link */
        return part;
    }
}

function parseRoute() {
    const h = location.hash.replace(/^#\/?/, '');
    const qi = h.indexOf('?');
    const path = (qi < 0 ? h : h.slice(0, qi)).split('/').filter(Boolean)
        .map(decode);
    const query = new URLSearchParams(qi < 0 ? '' : h.slice(qi + 1));
    const r = {view: path[0] || 'cluster', arg: null, actor: false, query};
    if (r.view === 'nodes' && path[1]) {
        r.view = 'node';
        r.arg = path[1];
    } else if (r.view === 'logs') {
        r.actor = path[1] === 'actor';
        r.arg = r.actor ? path[2] : path[1];
    }
    return r;
}

function hashFor(view, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params))
        if (v !== '' && v !== null && v !== undefined && !(k === 'offset' &&
            !+v))
            q.set(k, v);
    return '#/' + view + (q.toString() ? '?' + q : '');
}

/* ---- listings: filters and pages ----------------------------------------- */

function pageOf(route, size) {
    const off = parseInt(route.query.get('offset') || '0', 10);
    return {offset: off > 0 ? off : 0, limit: size || PAGE};
}

/* A filter bar whose values live in the hash: submit rewrites it. */
function filters(route, fields) {
    const form = el('form', {class: 'filters'});
    for (const f of fields) {
        const cur = route.query.get(f.key) || '';
        let input;
        if (f.options) {
            input = el('select', {name: f.key}, el('option', {value: ''},
                'any ' + f.label), f.options.map(o => el('option',
                {value: o, selected: o === cur}, o)));
            input.addEventListener('change', () => form.requestSubmit());
        } else {
            input = el('input', {name: f.key, value: cur, placeholder:
                f.label, size: 18, spellcheck: 'false'});
        }
        form.append(el('label', null, input));
    }
    form.append(el('button', {type: 'submit'}, 'Filter'));
    form.addEventListener('submit', ev => {
        ev.preventDefault();
        const p = {};
        for (const f of fields)
            p[f.key] = form.elements[f.key].value.trim();
        location.hash = hashFor(route.view, p);
    });
    return form;
}

function pager(route, total, shown, page) {
    const p = Object.fromEntries(route.query.entries());
    const first = total ? page.offset + 1 : 0;
    const last = page.offset + shown;
    const prev = Math.max(0, page.offset - page.limit);
    return el('div', {class: 'pager'},
        page.offset > 0 ? el('a', {href: hashFor(route.view,
            Object.assign({}, p, {offset: prev}))}, '\u2190 newer') : null,
        el('span', {class: 'count'}, first + '\u2013' + last + ' of ' +
            num(total)),
        last < total ? el('a', {href: hashFor(route.view,
            Object.assign({}, p, {offset: last}))}, 'older \u2192') : null);
}

function listParams(route, keys, page) {
    const p = {limit: page.limit, offset: page.offset};
    for (const k of keys)
        p[k] = route.query.get(k) || '';
    return p;
}

/* ---- history: the last hour, fetched once, then only what is new -------- */

/*
 * An hour of 1 s samples is 3,600 numbers a series: asked for once, then
 * each refresh asks only for the seconds since the last answer (plus a
 * few, for samples that were still open) and shifts them in. Keyed by
 * node id ('' for the cluster); the cache holds the views' last answers.
 */
const histCache = new Map(); /* key -> {h, at (Date.now() of the answer)} */

function historySeconds(key) {
    const c = histCache.get(key);
    if (!c || Date.now() - c.at > 10 * 60 * 1000)
        return HISTORY_S;
    return Math.min(HISTORY_S, Math.ceil((Date.now() - c.at) / 1000) + 5);
}

function historyKeep(key, h) {
    histCache.delete(key);
    histCache.set(key, {h, at: Date.now()});
    if (histCache.size > 8) /* the least recently drawn goes */
        histCache.delete(histCache.keys().next().value);
}

/* Merge answer h into the cached series of key; RET the merged history. */
function historyMerge(key, h) {
    const c = histCache.get(key);
    const iv = h && h.interval_ms || 1000;
    if (!h || !h.series)
        return h;
    if (!c || c.h.interval_ms !== h.interval_ms || h.end_ms < c.h.end_ms) {
        historyKeep(key, h);
        return h;
    }
    const shift = Math.round((h.end_ms - c.h.end_ms) / iv);
    const width = Math.max(0, ...Object.values(c.h.series).map(v => v.length));
    const out = {};
    for (const [name, fresh] of Object.entries(h.series)) {
        const old = c.h.series[name] || [];
        const len = Math.max(width, fresh.length);
        const res = new Array(len).fill(null);
        /* the last sample of old is shift samples before the last of h */
        for (let i = 0; i < old.length; i++) {
            const j = len - old.length - shift + i;
            if (j >= 0)
                res[j] = old[i];
        }
        for (let i = 0; i < fresh.length; i++)
            res[len - fresh.length + i] = fresh[i];
        out[name] = res;
    }
    const merged = Object.assign({}, h, {series: out});
    historyKeep(key, merged);
    return merged;
}

/* ---- cluster ------------------------------------------------------------- */

const TOTALS = [['CPU', 'CPU'], ['memory', 'Memory'], ['GPU', 'GPU'],
    ['TPU', 'TPU chips'], ['object_store_memory', 'Object store']];

function totalsTable(st) {
    const tot = st.resources_total || {};
    const av = st.resources_available || {};
    const names = TOTALS.map(t => t[0]).concat(Object.keys(tot).sort()
        .filter(n => !TOTALS.some(t => t[0] === n)));
    const rows = names.filter(n => n in tot || TOTALS.some(t => t[0] === n))
        .map(n => ({name: n, total: num(tot[n]),
            used: num(tot[n]) - num(av[n] === undefined ? tot[n] : av[n])}));
    const label = n => (TOTALS.find(t => t[0] === n) || [n, n])[1];
    const t = table([
        ['resource', r => label(r.name)],
        ['used / total', r => bar(r.total ? r.used / r.total : 0,
            amount(r.name, r.used) + ' / ' + amount(r.name, r.total) +
            (r.total ? ' (' + pct(r.used / r.total) + ')' : ''))]],
    rows, r => r.name);
    t.id = 'totals';
    return t;
}

/*
 * The part of a history worth drawing: from its first sample (a young
 * head has an hour of nulls before it), but at least the last 5 minutes.
 */
function recent(h) {
    const all = Object.values(h.series || {});
    const n = Math.max(0, ...all.map(v => v.length));
    let first = n;
    for (const v of all) {
        const i = v.findIndex(x => x !== null && x !== undefined);
        if (i >= 0 && i + n - v.length < first)
            first = i + n - v.length;
    }
    const keep = Math.max(n - first, Math.min(n, 300));
    const out = {};
    for (const [k, v] of Object.entries(h.series || {}))
        out[k] = v.slice(Math.max(0, v.length - keep));
    return Object.assign({}, h, {series: out});
}

function series(h, name) {
    return h && h.series ? h.series[name] || [] : [];
}

function clusterCharts(h) {
    if (!h)
        return el('p', {class: 'muted'}, 'No history: this head has no ' +
            '/api/history.');
    h = recent(h);
    const o = {interval: h.interval_ms || 1000};
    const pair = (t, u, tot, fmt) => chart(t, [
        {name: 'used', values: series(h, u)},
        {name: 'total', values: series(h, tot), dash: true}],
    Object.assign({fmt: fmt}, o));
    return el('div', {class: 'charts'},
        pair('CPU (cores)', 'CPU_used', 'CPU_total'),
        pair('Host memory', 'memory_used_bytes', 'memory_total_bytes',
            bytes),
        pair('GPUs', 'GPU_used', 'GPU_total'),
        pair('TPU chips', 'TPU_used', 'TPU_total'),
        pair('Object store', 'object_store_used_bytes',
            'object_store_total_bytes', bytes),
        chart('Tasks by state', [
            {name: 'running', values: series(h, 'tasks_running')},
            {name: 'pending', values: series(h, 'tasks_pending')},
            {name: 'infeasible', values: series(h, 'tasks_infeasible')}], o));
}

function storageCard(s) {
    if (!s)
        return card('Storage', el('p', {class: 'muted'}, 'no storage status'));
    return card('Storage', kv([
        ['backend', s.backend + (s.spec ? ' (' + s.spec + ')' : '')],
        ['health', el('span', {class: s.healthy ? 'ok' : 'bad'},
            s.healthy ? 'healthy' : 'DOWN since ' + ago(s.down_since_ms))],
        ['writes / batches', num(s.writes) + ' / ' + num(s.batches)],
        ['buffered / dropped', num(s.buffered) + ' / ' + num(s.dropped)],
        s.last_error ? ['last error', s.last_error + ' (' +
            ago(s.last_error_ms) + ')'] : null]));
}

function demandsCard(st) {
    const d = st.demands || [];
    return card('Pending demand',
        el('p', null, num(st.pending_tasks) + ' pending, ' +
            num(st.running_tasks) + ' running tasks'),
        d.length ? el('ul', {class: 'demands'}, d.map(x => el('li', {class:
            /infeasible/i.test(x) ? 'bad' : null}, x))) :
            el('p', {class: 'muted'}, '(no resource demands)'));
}

const clusterView = {
    load: async () => {
        const [st, h] = await Promise.all([clusterStatus(),
            optional(api('history', 'history',
                {seconds: historySeconds('')}))]);
        return {st, h: historyMerge('', h)};
    },
    draw: ({st, h}) => {
        const nodes = st.nodes || [];
        setMeta(st);
        const alive = nodes.filter(n => n.state === 'ALIVE').length;
        return [el('h1', null, 'Cluster'),
            el('p', {class: 'muted'}, alive + ' alive, ' +
                (nodes.length - alive) + ' dead nodes \u00b7 ',
            el('a', {href: '#/nodes'}, 'nodes'), ' \u00b7 ',
            el('a', {href: '#/accelerators'}, 'accelerators')),
            el('div', {class: 'row'}, card('Resources', totalsTable(st)),
                demandsCard(st), storageCard(st.storage)),
            card('Over time', clusterCharts(h))];
    },
};

/* ---- nodes --------------------------------------------------------------- */

function label(n, k) {
    return (n.labels || {})['manta.io/' + k] || '';
}

function resUse(n, name) {
    const t = num((n.resources_total || {})[name]);
    const a = (n.resources_available || {})[name];
    const used = n.state === 'ALIVE' ? t - num(a === undefined ? t : a) : 0;
    return {t, used};
}

function resBar(n, name) {
    const {t, used} = resUse(n, name);
    return t ? bar(used / t, amount(name, used) + ' / ' + amount(name, t)) :
        '';
}

function gpuSummary(n) {
    const g = n.gpus || [];
    if (!g.length)
        return resBar(n, 'GPU');
    const u = g.filter(d => d.utilization_percent !== null &&
        d.utilization_percent !== undefined);
    const mean = u.length ? u.reduce((s, d) => s + d.utilization_percent, 0) /
        u.length : null;
    return el('span', null, resBar(n, 'GPU'), el('br'), el('small', null,
        g.length + ' \u00d7 ' + (g[0].name || 'GPU') + (mean === null ? '' :
            ', util ' + mean.toFixed(0) + '%')));
}

function tpuSummary(n) {
    const s = label(n, 'tpu-slice-name');
    const t = resBar(n, 'TPU');
    if (!t && !s)
        return '';
    return el('span', null, t, s ? el('br') : null, s ? el('small', null,
        s + ' #' + label(n, 'tpu-worker-id') + ' (' +
        (label(n, 'tpu-pod-type') || label(n, 'accelerator-type')) + ')') :
        null);
}

function hostCpu(n) {
    const u = n.usage;
    if (n.state !== 'ALIVE' || !u || u.cpu_percent === undefined)
        return '';
    return bar(u.cpu_percent / 100, u.cpu_percent.toFixed(0) + '%');
}

function hostMem(n) {
    const u = n.usage;
    if (n.state !== 'ALIVE' || !u || !u.mem_total_bytes)
        return '';
    return bar(u.mem_used_bytes / u.mem_total_bytes,
        bytes(u.mem_used_bytes) + ' / ' + bytes(u.mem_total_bytes));
}

/* The user's labels, and the accelerator type of the built-in ones. */
function labelChips(n) {
    const l = n.labels || {};
    const acc = l['manta.io/accelerator-type'];
    return [acc ? el('span', {class: 'chip acc'}, acc) : null,
        Object.keys(l).filter(k => !k.startsWith('manta.io/')).sort()
            .map(k => el('span', {class: 'chip', title: k + '=' + l[k]},
                k + '=' + l[k]))];
}

/* Meters stacked in one cell, one line per [key, meter or '']. */
function stack(lines) {
    const d = el('div', {class: 'stack'});
    for (const [k, m] of lines)
        if (m) {
            m.dataset.k = k;
            d.append(m);
        }
    return d;
}

const NODE_COLS = [
    ['node', n => [nodeLink(n.node_id), el('br'), el('small', null,
        n.hostname)], '9em'],
    ['state', n => [stateTag(n.state), n.death_reason ? el('br') : null,
        n.death_reason ? el('small', null, n.death_reason) : null], '7em'],
    ['address', n => n.address, '11.5em'],
    ['labels', labelChips, 'minmax(8em, 1fr)'],
    ['granted / total', n => stack([['CPU', resBar(n, 'CPU')],
        ['mem', resBar(n, 'memory')],
        ['store', resBar(n, 'object_store_memory')]]), '17em'],
    ['host use', n => stack([['CPU', hostCpu(n)], ['mem', hostMem(n)]]),
        '15em'],
    ['GPUs', gpuSummary, '14em'],
    ['TPU chips / slice', tpuSummary, '12em'],
];
const nodeRows = new Map(); /* the node table's rows, reused (table()) */

/* /api/nodes when the head has it, else the nodes of /api/cluster_status. */
async function loadNodes(route, page) {
    const l = await optional(api('nodes', 'nodes',
        listParams(route, ['state'], page)));
    if (l)
        return l;
    const st = await clusterStatus();
    const state = route.query.get('state');
    const all = (st.nodes || []).filter(n => !state || n.state === state);
    return {total: all.length, nodes: all.slice(page.offset,
        page.offset + page.limit)};
}

const nodesView = {
    load: route => loadNodes(route, pageOf(route, NODE_PAGE)),
    draw: (l, route) => {
        const page = pageOf(route, NODE_PAGE);
        const nodes = l.nodes || [];
        return [el('h1', null, 'Nodes'),
            filters(route, [{key: 'state', label: 'state', options:
                ['ALIVE', 'DEAD']}]),
            pager(route, num(l.total), nodes.length, page),
            el('div', {class: 'scroll'}, table(NODE_COLS, nodes,
                n => n.node_id, '(no nodes)', nodeRows))];
    },
};

/* ---- one node ------------------------------------------------------------ */

async function loadNode(route) {
    const d = await optional(api('node', 'nodes/' +
        encodeURIComponent(route.arg), {seconds: historySeconds(route.arg)}));
    if (d) {
        d.history = historyMerge(route.arg, d.history);
        return d;
    }
    const st = await clusterStatus();
    const n = (st.nodes || []).find(x => x.node_id === route.arg);
    if (!n)
        throw new HttpError(404, 'no node ' + route.arg);
    return {node: n, tasks: null, history: null};
}

function gpuTable(n) {
    const opt = (v, f) => v === null || v === undefined ? '?' : f(v);
    return table([
        ['GPU', g => g.id || String(g.index)],
        ['model', g => g.name],
        ['utilization', g => opt(g.utilization_percent, v =>
            bar(v / 100, v + '%'))],
        ['memory', g => g.memory_total_bytes ? bar(num(g.memory_used_bytes) /
            g.memory_total_bytes, opt(g.memory_used_bytes, bytes) + ' / ' +
            bytes(g.memory_total_bytes)) : opt(g.memory_used_bytes, bytes)],
        ['uuid', g => g.uuid]], n.gpus || [],
    g => n.node_id + '/' + (g.id || g.index), '(no GPUs)');
}

function nodeCharts(h) {
    if (!h)
        return el('p', {class: 'muted'}, 'No history for this node.');
    h = recent(h);
    const o = {interval: h.interval_ms || 1000};
    const ratio = Object.assign({fmt: pct, max: 1}, o);
    return el('div', {class: 'charts'},
        chart('Host CPU', [{name: 'cpu', values: series(h, 'cpu_ratio')}],
            ratio),
        chart('Host memory', [
            {name: 'used', values: series(h, 'memory_used_bytes')},
            {name: 'total', values: series(h, 'memory_total_bytes'),
                dash: true}], Object.assign({fmt: bytes}, o)),
        chart('GPU utilization (mean)', [{name: 'util',
            values: series(h, 'gpu_util_ratio')}], ratio),
        chart('GPU memory', [{name: 'used',
            values: series(h, 'gpu_memory_used_bytes')}],
        Object.assign({fmt: bytes}, o)),
        chart('Granted', [
            {name: 'CPU', values: series(h, 'CPU_used')},
            {name: 'GPU', values: series(h, 'GPU_used')},
            {name: 'TPU', values: series(h, 'TPU_used')}], o),
        chart('Object store', [{name: 'used',
            values: series(h, 'object_store_used_bytes')}],
        Object.assign({fmt: bytes}, o)));
}

const nodeView = {
    load: loadNode,
    draw: d => {
        const n = d.node || {};
        const res = Object.keys(n.resources_total || {}).sort();
        const tasks = d.tasks && (d.tasks.tasks || []);
        return [el('h1', null, 'Node ', el('code', null, n.node_id)),
            el('div', {class: 'row'},
                card('Details', kv([['state', stateTag(n.state)],
                    n.death_reason ? ['death reason', n.death_reason] : null,
                    ['address', n.address], ['ip', n.node_ip],
                    ['host', n.hostname],
                    ['started', ago(n.start_time_ms)],
                    ['host CPU', hostCpu(n)], ['host memory', hostMem(n)],
                    ['TPU', tpuSummary(n)],
                    ['labels', Object.entries(n.labels || {}).map(([k, v]) =>
                        el('span', {class: 'chip'}, k + '=' + v))]])),
                card('Resources', table([['resource', r => r],
                    ['used / total', r => resBar(n, r)]], res, r => r))),
            card('GPUs', gpuTable(n)),
            card('Over time', nodeCharts(d.history)),
            card('Running tasks', el('p', null, el('a', {href: hashFor('tasks',
                {node: n.node_id})}, 'all tasks of this node')),
            tasks ? table(TASK_COLS, tasks,
                t => t.task_id, '(no running tasks)') : el('p',
                {class: 'muted'}, 'not available from this head'))];
    },
};

/* ---- accelerators -------------------------------------------------------- */

function holderText(hs) {
    return (hs || []).map(h => h.kind + ' ' + (h.name || short(h.id)))
        .join(', ');
}

function holderNames(hs) {
    return (hs || []).map(h => h.name || short(h.id)).join(', ');
}

function holderIds(hs) {
    return (hs || []).map(h => h.id).join(' ');
}

function heat(f) {
    return 'heat-' + Math.max(0, Math.min(4, Math.ceil(num(f) * 4)));
}

function gpuCell(g) {
    const util = g.utilization_ratio;
    const tip = (g.model || 'GPU') + ' ' + g.index + ' on ' + g.node_id +
        '\nallocated ' + pct(g.allocated) +
        (util === null || util === undefined ? '' : ', util ' + pct(util)) +
        (g.memory_total_bytes ? ', memory ' + bytes(g.memory_used_bytes) +
            ' / ' + bytes(g.memory_total_bytes) : '') +
        (g.holders && g.holders.length ? '\n' + holderText(g.holders) : '');
    return el('div', {class: 'cell ' + heat(g.allocated), title: tip,
        'data-id': g.node_id + '/' + (g.gpu || g.index),
        'data-holders': holderIds(g.holders)},
    el('b', null, 'GPU ' + g.index),
    el('span', null, util === null || util === undefined ? '' :
        'util ' + pct(util)),
    el('span', {class: 'who'}, holderNames(g.holders) ||
        (num(g.allocated) > 0 ? pct(g.allocated) + ' granted' : 'free')));
}

function gpuGrid(gpus) {
    const byNode = new Map();
    for (const g of gpus) {
        if (!byNode.has(g.node_id))
            byNode.set(g.node_id, []);
        byNode.get(g.node_id).push(g);
    }
    if (!byNode.size)
        return el('p', {class: 'muted'}, '(no GPUs)');
    return el('div', {class: 'grids'}, [...byNode].map(([id, gs]) =>
        el('div', {class: 'group'}, el('div', {class: 'group-title'},
            nodeLink(id), ' ', gs[0].model || ''),
        el('div', {class: 'grid'}, gs.map(gpuCell)))));
}

function tpuHost(s, h) {
    const cells = [];
    for (let i = 0; i < Math.min(64, num(h.chips_total)); i++)
        cells.push(el('i', {class: i < num(h.chips_used) ? 'chip-on' :
            'chip-off'}));
    return el('div', {class: 'cell ' + heat(h.chips_total ? h.chips_used /
        h.chips_total : 0), 'data-id': h.node_id, 'data-holders':
        holderIds(h.holders), title: s.slice + ' worker ' + h.worker_id +
        ' on ' + h.node_id + '\n' + num(h.chips_used) + ' / ' +
        num(h.chips_total) + ' chips held' + (h.holders && h.holders.length ?
        '\n' + holderText(h.holders) : '')},
    el('b', null, 'worker ' + h.worker_id), el('span', {class: 'chips'},
        cells), el('span', {class: 'who'}, holderNames(h.holders) ||
        (num(h.chips_used) ? num(h.chips_used) + ' held' : 'free')));
}

function tpuGrid(slices) {
    if (!slices.length)
        return el('p', {class: 'muted'}, '(no TPU slices)');
    return el('div', {class: 'grids'}, slices.map(s => el('div',
        {class: 'group'}, el('div', {class: 'group-title'}, el('b', null,
            s.slice), ' ' + (s.accelerator_type || '') + ' ' +
            (s.topology || '')), el('div', {class: 'grid'},
        (s.hosts || []).map(h => tpuHost(s, h))))));
}

/* One row per holder, with what it holds: the "who holds what" table. */
function holders(a) {
    const m = new Map();
    const put = (h, what) => {
        if (!m.has(h.id))
            m.set(h.id, {h, what: []});
        m.get(h.id).what.push(what);
    };
    for (const g of a.gpus || [])
        for (const h of g.holders || [])
            put(h, 'GPU ' + g.index + ' @ ' + short(g.node_id));
    for (const s of a.tpu_slices || [])
        for (const x of s.hosts || [])
            for (const h of x.holders || [])
                put(h, s.slice + ' worker ' + x.worker_id);
    return [...m.values()];
}

function summaryCard(s) {
    s = s || {};
    const line = (what, tot, used, free, str) => [what, num(tot) + ' total, ' +
        num(used) + ' used, ' + num(free) + ' free, ' + num(str) +
        ' stranded'];
    return card('Summary', kv([
        line('GPUs', s.gpus_total, s.gpus_used, s.gpus_free, s.gpus_stranded),
        line('TPU chips', s.tpu_chips_total, s.tpu_chips_used,
            s.tpu_chips_free, s.tpu_chips_stranded)]),
    el('p', {class: 'muted small'}, 'Stranded: free but unusable now ' +
        '(free GPUs on a node with no free CPU, free chips of a partly ' +
        'held slice).'));
}

const accelView = {
    load: () => api('accelerators', 'accelerators'),
    draw: a => [el('h1', null, 'Accelerators'),
        summaryCard(a.summary),
        card('GPUs', gpuGrid(a.gpus || [])),
        card('TPU slices', tpuGrid(a.tpu_slices || [])),
        card('Holders', table([
            ['kind', x => x.h.kind],
            ['id', x => holderLink(x.h)],
            ['name', x => x.h.name],
            ['holds', x => x.what.join(', ')]], holders(a), x => x.h.id,
        '(nothing held)'))],
};

function holderLink(h) {
    if (h.kind === 'task')
        return idLink('#/logs/' + encodeURIComponent(h.id), h.id);
    if (h.kind === 'actor')
        return idLink('#/logs/actor/' + encodeURIComponent(h.id), h.id);
    return el('code', {title: h.id}, short(h.id));
}

/* ---- tasks, actors, placement groups, gangs, objects --------------------- */

const TASK_COLS = [
    ['task', t => idLink('#/logs/' + encodeURIComponent(t.task_id),
        t.task_id)],
    ['name', t => t.name || (t.argv || []).join(' ')],
    ['state', t => stateTag(t.state)],
    ['node', t => nodeLink(t.node_id)],
    ['resources', t => resText(t.resources)],
    ['attempt', t => num(t.attempt)],
    ['submitted', t => ago(t.submit_time_ms)],
    ['run time', t => t.state === 'PENDING' || t.state === 'INFEASIBLE' ?
        '' : duration(t.start_time_ms, t.end_time_ms)],
    ['exit / error', t => t.error ? el('span', {class: 'bad', title:
        t.error}, t.error) : t.end_time_ms ? String(t.exit_code) : ''],
    ['logs', t => el('a', {href: '#/logs/' + encodeURIComponent(t.task_id)},
        'logs')],
];

/* A paged, filtered listing view over /api/KIND. */
function listing(kind, title, fields, cols, idKey) {
    return {
        load: route => api(kind, kind, listParams(route,
            fields.map(f => f.key), pageOf(route))),
        draw: (l, route) => {
            const rows = l[kind] || [];
            return [el('h1', null, title), filters(route, fields),
                pager(route, num(l.total), rows.length, pageOf(route)),
                el('div', {class: 'scroll'}, table(cols, rows,
                    r => r[idKey], '(none)'))];
        },
    };
}

const ACTOR_COLS = [
    ['actor', a => idLink('#/logs/actor/' + encodeURIComponent(a.actor_id),
        a.actor_id)],
    ['name', a => a.name],
    ['state', a => [stateTag(a.state), a.death_reason ? el('br') : null,
        a.death_reason ? el('small', null, a.death_reason) : null]],
    ['node', a => nodeLink(a.node_id)],
    ['function', a => a.function],
    ['pid', a => a.pid || ''],
    ['restarts', a => num(a.num_restarts) + ' / ' + (a.max_restarts < 0 ?
        '\u221e' : num(a.max_restarts))],
    ['calls', a => num(a.calls_dispatched) + ' done, ' +
        num(a.calls_queued) + ' queued'],
    ['detached', a => a.detached ? 'yes' : ''],
    ['created', a => ago(a.create_time_ms)],
    ['logs', a => el('a', {href: '#/logs/actor/' +
        encodeURIComponent(a.actor_id)}, 'logs')],
];

const PG_COLS = [
    ['group', g => el('code', {title: g.pg_id}, short(g.pg_id))],
    ['name', g => g.name],
    ['state', g => [stateTag(g.state), g.error ? el('br') : null,
        g.error ? el('small', {class: 'bad'}, g.error) : null]],
    ['strategy', g => g.strategy],
    ['bundles', g => el('ol', {class: 'bundles', start: 0},
        (g.bundles || []).map((b, i) => el('li', null, resText(b) + ' \u2192 ',
            nodeLink((g.bundle_node_ids || [])[i]) || el('span',
                {class: 'muted'}, 'unplaced'))))],
    ['created', g => ago(g.create_time_ms)],
];

const GANG_COLS = [
    ['gang', g => el('code', {title: g.gang_id}, short(g.gang_id))],
    ['name', g => g.name],
    ['state', g => [stateTag(g.state), g.error ? el('br') : null,
        g.error ? el('small', {class: 'bad'}, g.error) : null]],
    ['TPU', g => (g.tpu_pod_type || '') + ' \u00d7 ' + num(g.slices) + ' (' +
        g.launch + ')' + ((g.slice_names || []).length ? ' on ' +
        g.slice_names.join(', ') : '')],
    ['attempt', g => num(g.attempt) + ' / ' + (g.max_restarts < 0 ?
        '\u221e' : num(g.max_restarts))],
    ['members', g => el('ul', {class: 'members'}, (g.members || []).map(m =>
        el('li', {'data-id': m.task_id}, 'rank ' + m.rank + ' ',
            idLink('#/logs/' + encodeURIComponent(m.task_id), m.task_id),
            ' ', stateTag(m.state), ' on ', nodeLink(m.node_id))))],
    ['submitted', g => ago(g.submit_time_ms)],
];

const OBJ_COLS = [
    ['object', o => el('code', {title: o.object_id}, short(o.object_id))],
    ['state', o => stateTag(o.state)],
    ['size', o => bytes(o.size) + (o.inline ? ' (inline)' : '')],
    ['refs', o => num(o.ref_count)],
    ['held on', o => (o.locations || []).map(nodeLink)
        .reduce((a, x) => a.concat(a.length ? [', ', x] : [x]), [])],
    ['owner', o => o.owner ? el('code', {title: o.owner}, short(o.owner)) :
        ''],
    ['error', o => o.error],
];

const tasksView = listing('tasks', 'Tasks', [
    {key: 'state', label: 'state', options: TASK_STATES},
    {key: 'node', label: 'node id'}, {key: 'name', label: 'name'},
    {key: 'driver', label: 'driver id'}], TASK_COLS, 'task_id');
const actorsView = listing('actors', 'Actors', [
    {key: 'state', label: 'state', options: ACTOR_STATES},
    {key: 'name', label: 'name'}], ACTOR_COLS, 'actor_id');
const pgsView = listing('placement_groups', 'Placement groups', [
    {key: 'state', label: 'state', options: PG_STATES}], PG_COLS, 'pg_id');
const gangsView = listing('gangs', 'Gangs', [
    {key: 'state', label: 'state', options: GANG_STATES}], GANG_COLS,
'gang_id');
const objectsView = listing('objects', 'Objects', [
    {key: 'state', label: 'state', options: OBJ_STATES},
    {key: 'node', label: 'node id'}], OBJ_COLS, 'object_id');

/* ---- logs ---------------------------------------------------------------- */

/*
 * The log view keeps its own state: the text so far and the next offset;
 * each poll appends what is new. It draws once, then polls every 1 s
 * until the head says done.
 */
const logView = {
    live: true,
    start: (route, gen) => {
        const who = route.actor ? 'actor' : 'task';
        const pre = el('pre', {class: 'log', id: 'log'});
        const st = el('span', {class: 'muted', id: 'log-state'},
            'loading\u2026');
        const note = el('p', {class: 'muted', id: 'log-note'});
        setView([el('h1', null, (route.actor ? 'Actor ' : 'Task ') + 'logs ',
            el('code', null, route.arg || '')), el('p', null, st), note, pre]);
        followLog({who, id: route.arg, offset: 0, pre, st, note, gen});
    },
};

/* Append text to the log, keeping at most LOG_KEEP characters of it. */
function appendLog(pre, text) {
    pre.append(text);
    let n = pre.textContent.length;
    while (n > LOG_KEEP && pre.firstChild && pre.firstChild !== pre.lastChild) {
        n -= pre.firstChild.textContent.length;
        pre.firstChild.remove();
    }
}

async function followLog(s) {
    if (s.gen !== generation)
        return;
    let d;
    try {
        d = await api('logs', 'logs', {[s.who]: s.id, offset: s.offset});
    } catch (e) {
        if (s.gen !== generation)
            return;
        showError(e);
        ready('logs');
        if (e.status >= 400 && e.status < 500) /* unknown id, bad offset */
            s.st.textContent = e.message;
        else
            setTimeout(() => followLog(s), LOG_POLL_MS);
        return;
    }
    if (s.gen !== generation)
        return;
    showError(null);
    const atEnd = s.pre.scrollTop + s.pre.clientHeight >=
        s.pre.scrollHeight - 4;
    if (d.truncated)
        s.note.textContent = '(the head kept only the end of the output: ' +
            'what came before offset ' + d.offset + ' was dropped)';
    if (d.data)
        appendLog(s.pre, d.data);
    s.offset = num(d.next_offset);
    s.st.textContent = (d.state || '') + (d.done ? ' \u00b7 done' :
        ' \u00b7 following');
    if (atEnd)
        s.pre.scrollTop = s.pre.scrollHeight;
    ready('logs');
    if (!d.done)
        setTimeout(() => followLog(s), LOG_POLL_MS);
}

/* ---- the loop ------------------------------------------------------------ */

const VIEWS = {
    cluster: clusterView, nodes: nodesView, node: nodeView,
    accelerators: accelView, tasks: tasksView, actors: actorsView,
    placement_groups: pgsView, gangs: gangsView, objects: objectsView,
    logs: logView,
};

let generation = 0; /* bumped on route change: older answers are dropped */
let timer = null;

function ready(name) {
    document.documentElement.dataset.ready = name;
}

function showError(e) {
    document.getElementById('err').textContent = e ?
        (e.status ? e.message : 'cannot reach the head: ' + e.message) : '';
}

/*
 * Replace the view's content, keeping the scroll positions of a refresh.
 * A refresh (not a view's first draw) waits while the user types in one
 * of the view's inputs. RET whether it drew.
 */
function setView(nodes) {
    const v = document.getElementById('view');
    const y = window.scrollY;
    const scrolls = [...v.querySelectorAll('.scroll')].map(s => s.scrollLeft);
    const focus = document.activeElement;
    if (document.documentElement.dataset.ready && focus &&
        v.contains(focus) && ['INPUT', 'SELECT'].includes(focus.tagName))
        return false;
    v.replaceChildren(...nodes);
    v.querySelectorAll('.scroll').forEach((s, i) => {
        s.scrollLeft = scrolls[i] || 0;
    });
    window.scrollTo(0, y);
    return true;
}

async function refresh(gen) {
    const route = parseRoute();
    const view = VIEWS[route.view];
    try {
        const data = await view.load(route);
        if (gen !== generation)
            return;
        showError(null);
        if (setView(view.draw(data, route)))
            ready(route.view);
    } catch (e) {
        if (gen !== generation)
            return;
        showError(e);
        if (!document.documentElement.dataset.ready) {
            /* nothing of this view drawn yet: say why instead */
            setView([el('h1', null, e.status === 404 ? 'Not found' :
                'Cannot show ' + route.view.replace('_', ' ')),
            el('p', {class: 'bad'}, e.message), el('p', null,
                el('a', {href: '#/' + route.view.replace(/^node$/,
                    'nodes')}, 'back'))]);
            ready(route.view);
        }
    }
    if (gen === generation)
        timer = setTimeout(() => refresh(gen), REFRESH_MS);
}

function navigate() {
    generation++;
    clearTimeout(timer);
    delete document.documentElement.dataset.ready;
    const route = parseRoute();
    const view = VIEWS[route.view];
    for (const a of document.querySelectorAll('#nav a'))
        a.classList.toggle('on', a.dataset.view === (route.view === 'node' ?
            'nodes' : route.view));
    if (!view) {
        setView([el('h1', null, 'Not found'), el('p', null, 'No view "' +
            route.view + '". '), el('a', {href: '#/cluster'}, 'Cluster')]);
        ready('unknown');
        return;
    }
    document.title = 'Manta \u00b7 ' + route.view;
    if (view.live)
        view.start(route, generation);
    else
        refresh(generation);
}

/* The header's line about the head, from a cluster_status answer. */
function setMeta(st) {
    document.getElementById('meta').textContent = 'head ' +
        st.head_address + ' \u00b7 ' + st.head_version + ' \u00b7 up ' +
        duration(num(st.head_start_time_ms));
}

window.addEventListener('hashchange', navigate);
navigate();
/* Once after the first view's own calls; the cluster view keeps it fresh. */
setTimeout(() => clusterStatus().then(setMeta, () => null), 1000);
