/* engine._kernel, part 1: the line-domain counter and the backbone (see _kernel.c's header
 * and engine/reference.py, whose algorithm and node counts this file reproduces exactly). */
#include "_kernel.h"

typedef struct {
    uint64_t dom[MAXL * MAXW];
    uint32_t kmask[MAXL];
    uint32_t settled;
} State;

typedef struct {
    const Tables *t;
    int n, W, distinct;
    long long k, keep, count, nodes;
    size_t state_bytes;                /* live prefix of a State copied per node */
    uint16_t *sols;                    /* keep * n rows */
    long long nsols, cap;
    long long limit;                   /* node budget of the cell rule */
    long long max_nodes;               /* caller's cap: stop the whole count past it */
    int line_mode, aborted, stopped, oom;
} Ctx;

static State STACK[MAXN * MAXN + 2];   /* depth <= open cells */

#define DOM(s, L) ((s)->dom + (size_t)(L) * W)
static void restrict_cell(const Ctx *cx, State *s, int r, int c, int v);

static inline void copy_state(const Ctx *cx, State *dst, const State *src) {
    int n2 = 2 * cx->n;
    memcpy(dst->dom, src->dom, (size_t)n2 * cx->W * sizeof(uint64_t));
    memcpy(dst->kmask, src->kmask, (size_t)n2 * sizeof(uint32_t));
    dst->settled = src->settled;
}

/* Propagate to a fixpoint from the lines in `queue`; 0 on contradiction. */
static int propagate(const Ctx *cx, State *s, uint32_t queue) {
    const Tables *t = cx->t;
    const int n = cx->n, W = cx->W;
    const uint32_t full = t->full;
    /* Sweep order: all queued rows, then all queued columns, and again: a line
     * touched by many crossings is processed once per sweep. */
    const uint32_t rowmask = (uint32_t)((1ull << n) - 1);
    uint32_t batch = 0;
    while (queue | batch) {
        if (!batch) {
            batch = (queue & rowmask) ? (queue & rowmask) : queue;
            queue &= ~batch;
        }
        int L = __builtin_ctz(batch);
        batch &= batch - 1;
        uint64_t *d = DOM(s, L);
        const uint32_t open = full & ~s->kmask[L];
        uint32_t seen0, seen1;
        if (!scan_domain(t, d, open, &seen0, &seen1)) return 0;
        const uint32_t a = open & ~seen0;                /* forced to 1 */
        uint32_t forced = a | (open & ~seen1);           /* forced to 0 or 1 */
        s->kmask[L] |= forced;
        const int row = L < n;
        const int idx = row ? L : L - n;
        const uint32_t xbit = 1u << (n - 1 - idx);
        while (forced) {
            int bit = __builtin_ctz(forced);
            forced &= forced - 1;
            int pos = n - 1 - bit;
            int X = row ? n + pos : pos;
            if (!(s->kmask[X] & xbit)) {
                s->kmask[X] |= xbit;
                const uint64_t *m = t->cm[idx][(a >> bit) & 1];
                uint64_t *dx = DOM(s, X);
                for (int w = 0; w < W; w++) dx[w] &= m[w];
                if (!(batch & (1u << X))) queue |= 1u << X;
            }
        }
        if (cx->distinct && s->kmask[L] == full && !(s->settled & (1u << L))) {
            s->settled |= 1u << L;
            int w = 0;
            while (!d[w]) w++;
            const uint64_t bitw = d[w];
            const int base = row ? 0 : n;
            for (int S = base; S < base + n; S++) {
                if (S == L) continue;
                uint64_t *ds = DOM(s, S);
                if (ds[w] & bitw) {
                    ds[w] &= ~bitw;
                    if (!(batch & (1u << S))) queue |= 1u << S;
                }
            }
        }
    }
    return 1;
}

static void record(Ctx *cx, const State *s) {
    cx->count++;
    if (cx->nsols >= cx->keep) return;
    if (cx->nsols == cx->cap) {
        long long nc = cx->cap ? 2 * cx->cap : 4;
        uint16_t *p = (uint16_t *)PyMem_Realloc(cx->sols, (size_t)nc * cx->n * sizeof(uint16_t));
        if (!p) { cx->oom = 1; return; }
        cx->sols = p;
        cx->cap = nc;
    }
    const int W = cx->W;
    for (int r = 0; r < cx->n; r++) {
        const uint64_t *d = DOM(s, r);
        int w = 0;
        while (!d[w]) w++;
        cx->sols[cx->nsols * cx->n + r] = cx->t->pats[w * 64 + __builtin_ctzll(d[w])];
    }
    cx->nsols++;
}

static void restrict_cell(const Ctx *cx, State *s, int r, int c, int v) {
    const int n = cx->n, W = cx->W;
    uint64_t *dr = DOM(s, r), *dc = DOM(s, n + c);
    for (int w = 0; w < W; w++) {
        dr[w] &= cx->t->cm[c][v][w];
        dc[w] &= cx->t->cm[r][v][w];
    }
    s->kmask[r] |= 1u << (n - 1 - c);
    s->kmask[n + c] |= 1u << (n - 1 - r);
}

/* Line rule (the fallback): branch on the line with the smallest domain of size > 1
 * (lowest index on ties), trying its patterns in ascending order. */
static void search(Ctx *cx, int depth);

static void branch_line(Ctx *cx, int depth, const int *sizes) {
    const State *s = &STACK[depth];
    const int n = cx->n, W = cx->W;
    int bl = -1, best = 1 << 30;
    for (int L = 0; L < 2 * n; L++)
        if (sizes[L] > 1 && sizes[L] < best) { best = sizes[L]; bl = L; }
    State *child = &STACK[depth + 1];
    const uint64_t *d = DOM(s, bl);
    for (int w = 0; w < W; w++) {
        uint64_t x = d[w];
        while (x) {
            uint64_t bit = x & (~x + 1);
            x ^= bit;
            cx->nodes++;
            copy_state(cx, child, s);
            uint64_t *dc = DOM(child, bl);
            memset(dc, 0, (size_t)W * sizeof(uint64_t));
            dc[w] = bit;
            if (propagate(cx, child, 1u << bl)) search(cx, depth + 1);
            if (cx->count >= cx->k || cx->oom || cx->stopped || cx->aborted) return;
            if (cx->nodes > cx->max_nodes) { cx->stopped = 1; return; }
            if (cx->nodes > cx->limit) { cx->aborted = 1; return; }
        }
    }
}

/* Cell rule (tried first): branch on the open cell minimising |D_row| + |D_col|
 * (first in row-major order on ties), value 0 then 1; abandon once nodes pass
 * cx->limit. */
static void branch_cell(Ctx *cx, int depth, const int *sizes) {
    const State *s = &STACK[depth];
    const int n = cx->n;
    const uint32_t full = cx->t->full;
    int br = -1, bc = -1, best = 1 << 30;
    for (int r = 0; r < n; r++) {
        uint32_t freeb = full & ~s->kmask[r];
        while (freeb) {
            int bit = 31 - __builtin_clz(freeb);       /* highest bit = leftmost open cell */
            freeb &= ~(1u << bit);
            int c = n - 1 - bit;
            int sc = sizes[r] + sizes[n + c];
            if (sc < best) { best = sc; br = r; bc = c; }
        }
    }
    State *child = &STACK[depth + 1];
    for (int v = 0; v < 2; v++) {
        cx->nodes++;
        copy_state(cx, child, s);
        restrict_cell(cx, child, br, bc, v);
        if (propagate(cx, child, (1u << br) | (1u << (n + bc)))) search(cx, depth + 1);
        if (cx->count >= cx->k || cx->oom || cx->aborted || cx->stopped) return;
        if (cx->nodes > cx->max_nodes) { cx->stopped = 1; return; }
        if (cx->nodes > cx->limit) { cx->aborted = 1; return; }
    }
}

static void search(Ctx *cx, int depth) {
    const State *s = &STACK[depth];
    const int n = cx->n, W = cx->W;
    const uint32_t full = cx->t->full;
    int sizes[MAXL], solved = 1;
    for (int L = 0; L < 2 * n; L++) {
        if (s->kmask[L] == full) { sizes[L] = 1; continue; }   /* every position known: one pattern */
        const uint64_t *d = DOM(s, L);
        int c = 0;
        for (int w = 0; w < W; w++) c += __builtin_popcountll(d[w]);
        sizes[L] = c;
        solved = 0;
    }
    if (solved) { record(cx, s); return; }
    if (cx->line_mode) branch_line(cx, depth, sizes);
    else branch_cell(cx, depth, sizes);
}

/* Search plans (see the reference): a list of (rule, budget) attempts, each
 * searching afresh from STACK[0] until one finishes within its budget of
 * quarters*n*n/4 nodes (quarters < 0: no budget). Counting: cell rule (16 n^2)
 * then line rule. Backbone probes and find=True: line rule (n^2/4), cell rule
 * (32 n^2), line rule. */
typedef struct { int len; int line[4]; long long quarters[4]; } Plan;
static const Plan PLAN_COUNT = {2, {0, 1}, {64, -1}};
static const Plan PLAN_FIND = {3, {1, 0, 1}, {1, 128, -1}};

static void run(Ctx *cx, const Plan *plan) {
    for (int i = 0; i < plan->len; i++) {
        cx->line_mode = plan->line[i];
        cx->aborted = 0;
        cx->count = 0;
        cx->nsols = 0;
        cx->limit = plan->quarters[i] < 0 ? LLONG_MAX : cx->nodes + plan->quarters[i] * cx->n * cx->n / 4;
        search(cx, 0);
        if (!cx->aborted || cx->stopped) return;
    }
}

static void init_state(const Ctx *cx, State *s, const uint32_t *vals, const uint32_t *known) {
    const int n = cx->n, W = cx->W;
    const Tables *t = cx->t;
    s->settled = 0;
    if (t->linedom) {   /* small n: each line's domain in one lookup (the same AND of cm masks) */
        uint32_t ck[MAXN] = {0}, cv[MAXN] = {0};
        for (int r = 0; r < n; r++) {
            const uint32_t k = known[r] & t->full, v = vals[r] & k, rb = 1u << (n - 1 - r);
            DOM(s, r)[0] = t->linedom[(k << n) | v];
            s->kmask[r] = k;
            for (uint32_t m = k; m; m &= m - 1) {
                const int b = __builtin_ctz(m), c = n - 1 - b;
                ck[c] |= rb;
                if ((v >> b) & 1) cv[c] |= rb;
            }
        }
        for (int c = 0; c < n; c++) {
            DOM(s, n + c)[0] = t->linedom[(ck[c] << n) | cv[c]];
            s->kmask[n + c] = ck[c];
        }
        return;
    }
    for (int L = 0; L < 2 * n; L++) {
        full_domain(t, DOM(s, L));
        s->kmask[L] = 0;
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            if ((known[r] >> (n - 1 - c)) & 1) restrict_cell(cx, s, r, c, (vals[r] >> (n - 1 - c)) & 1);
}

/* ---------------------------------------------------------------- Python glue */

static int setup(Ctx *cx, int n, int distinct) {
    memset(cx, 0, sizeof(*cx));
    cx->t = checked_tables(n);
    if (!cx->t) return -1;
    cx->n = n;
    cx->W = cx->t->W;
    cx->distinct = distinct;
    return 0;
}

static PyObject *rows_tuple(const uint16_t *rows, int n) {
    PyObject *tup = PyTuple_New(n);
    if (!tup) return NULL;
    for (int r = 0; r < n; r++) PyTuple_SET_ITEM(tup, r, PyLong_FromUnsignedLong(rows[r]));
    return tup;
}

PyObject *py_count_rows(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"n", "vals", "known", "k", "distinct", "keep", "max_nodes", "find", NULL};
    int n, distinct = 1, find = 0;
    long long k = 2, keep = -1, max_nodes = -1;
    PyObject *pv, *pk;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOO|LpLLp", kwlist, &n, &pv, &pk, &k, &distinct, &keep,
                                     &max_nodes, &find))
        return NULL;
    Ctx cx;
    uint32_t vals[MAXN], known[MAXN];
    if (setup(&cx, n, distinct) < 0) return NULL;
    if (parse_rows(pv, n, vals, "vals") < 0 || parse_rows(pk, n, known, "known") < 0) return NULL;
    cx.k = k;
    cx.keep = keep < 0 ? k : keep;
    cx.max_nodes = max_nodes < 0 ? LLONG_MAX : max_nodes;
    if (k > 0) {
        init_state(&cx, &STACK[0], vals, known);
        cx.nodes = 1;
        if (propagate(&cx, &STACK[0], (uint32_t)((1ull << (2 * n)) - 1))) run(&cx, find ? &PLAN_FIND : &PLAN_COUNT);
    }
    if (cx.oom) { PyMem_Free(cx.sols); return PyErr_NoMemory(); }
    PyObject *lst = PyList_New(cx.nsols);
    for (long long i = 0; lst && i < cx.nsols; i++) {
        PyObject *tup = rows_tuple(cx.sols + i * n, n);
        if (!tup) { Py_CLEAR(lst); break; }
        PyList_SET_ITEM(lst, i, tup);
    }
    PyMem_Free(cx.sols);
    if (!lst) return NULL;
    long long c = cx.count < k ? cx.count : k;
    if (c < 0) c = 0;
    if (cx.stopped) c = -1;
    return Py_BuildValue("(LNL)", c, lst, cx.nodes);
}

static State ROOT;

PyObject *py_backbone_rows(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"n", "vals", "known", "distinct", NULL};
    int n, distinct = 1;
    PyObject *pv, *pk;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOO|p", kwlist, &n, &pv, &pk, &distinct)) return NULL;
    Ctx cx;
    uint32_t vals[MAXN], known[MAXN];
    if (setup(&cx, n, distinct) < 0) return NULL;
    if (parse_rows(pv, n, vals, "vals") < 0 || parse_rows(pk, n, known, "known") < 0) return NULL;
    cx.k = 1;
    cx.keep = 1;
    cx.max_nodes = LLONG_MAX;
    uint16_t sol[MAXN];
    uint32_t varies[MAXN] = {0}, bv[MAXN] = {0}, bk[MAXN] = {0};
    int none = 1;
    init_state(&cx, &ROOT, vals, known);
    cx.nodes = 1;
    if (propagate(&cx, &ROOT, (uint32_t)((1ull << (2 * n)) - 1))) {
        copy_state(&cx, &STACK[0], &ROOT);
        run(&cx, &PLAN_FIND);
        if (cx.nsols) none = 0;
    }
    if (!none) {
        memcpy(sol, cx.sols, n * sizeof(uint16_t));
        for (int r = 0; r < n; r++)
            for (int c = 0; c < n; c++) {
                uint32_t cb = 1u << (n - 1 - c);
                if ((ROOT.kmask[r] & cb) || (varies[r] & cb)) continue;
                int v = ((sol[r] & cb) ? 1 : 0) ^ 1;
                cx.count = 0;
                cx.nsols = 0;
                cx.nodes++;
                copy_state(&cx, &STACK[0], &ROOT);
                restrict_cell(&cx, &STACK[0], r, c, v);
                if (propagate(&cx, &STACK[0], (1u << r) | (1u << (n + c)))) run(&cx, &PLAN_FIND);
                if (cx.nsols) {
                    for (int rr = 0; rr < n; rr++) varies[rr] |= (uint32_t)(cx.sols[rr] ^ sol[rr]);
                } else {
                    restrict_cell(&cx, &ROOT, r, c, v ^ 1);
                    propagate(&cx, &ROOT, (1u << r) | (1u << (n + c)));
                }
            }
        for (int r = 0; r < n; r++) {
            bk[r] = cx.t->full ^ varies[r];
            bv[r] = sol[r] & bk[r];
        }
    }
    int oom = cx.oom;
    PyMem_Free(cx.sols);
    if (oom) return PyErr_NoMemory();
    PyObject *lv = PyList_New(n), *lk = PyList_New(n);
    if (!lv || !lk) { Py_XDECREF(lv); Py_XDECREF(lk); return NULL; }
    for (int r = 0; r < n; r++) {
        PyList_SET_ITEM(lv, r, PyLong_FromUnsignedLong(bv[r]));
        PyList_SET_ITEM(lk, r, PyLong_FromUnsignedLong(bk[r]));
    }
    return Py_BuildValue("(ONNL)", none ? Py_True : Py_False, lv, lk, cx.nodes);
}


/* ---------------------------------------------------------------- thinning
 * The C twin of generator.thin's fast method (read its module doc): the same
 * acceptability test, the same group phase and the same flipped-cell single
 * phase, the same counts in the same order, so the output (givens, solutions
 * in order, counts, nodes) is identical to the Python loop's. What C adds is
 * only speed: the loop makes ~n^2 counts per tile, and at n = 6 the Python
 * glue around them cost more than the counts.
 *
 * One extra, optional rule: `max_nodes` >= 0 caps every count of the loop; a
 * test that passes the cap counts as "not acceptable" (the cell stays given),
 * which bounds the heavy tail of a few sparse counts (see generator.thin). */

static long long count_once(Ctx *cx, const uint32_t *vals, const uint32_t *known, long long k, long long keep,
                            long long max_nodes, long long *total_nodes) {
    const int n = cx->n;
    cx->k = k;
    cx->keep = keep;
    cx->max_nodes = max_nodes < 0 ? LLONG_MAX : max_nodes;
    cx->count = 0;
    cx->nsols = 0;
    cx->stopped = 0;
    cx->aborted = 0;
    cx->nodes = 0;
    if (k > 0) {
        init_state(cx, &STACK[0], vals, known);
        cx->nodes = 1;
        if (propagate(cx, &STACK[0], (uint32_t)((1ull << (2 * n)) - 1))) run(cx, &PLAN_COUNT);
    }
    *total_nodes += cx->nodes;
    if (cx->stopped) return -1;
    long long c = cx->count < k ? cx->count : k;
    return c < 0 ? 0 : c;
}

static int sides_differ(int n, const uint16_t *a, const uint16_t *b) {
    int mask = 0;
    if (a[0] != b[0]) mask |= 1;
    if (a[n - 1] != b[n - 1]) mask |= 4;
    const uint32_t hi = 1u << (n - 1);
    for (int r = 0; r < n; r++) {
        uint32_t d = (uint32_t)(a[r] ^ b[r]);
        if (d & 1) mask |= 2;
        if (d & hi) mask |= 8;
    }
    return mask;
}

typedef struct {
    int n, seam;
    long long m_max, max_nodes, counts, nodes;
    uint16_t sol[MAXN];
    uint16_t *sols;          /* the current solution list, nsols * n rows (cap MAXSOLS) */
    long long nsols;
} Thin;

#define MAXSOLS 64

/* Is sols[i] the tile's solution or pinned by a seam side? */
static int pinned(const Thin *th, const uint16_t *s) {
    if (!memcmp(s, th->sol, th->n * sizeof(uint16_t))) return 1;
    return (sides_differ(th->n, s, th->sol) & th->seam) != 0;
}

/* generator.thin._Checker.check: one count with k = m_max + 1 on sol & known; on success
 * the solutions replace th->sols and 1 is returned. */
static int thin_check(Ctx *cx, Thin *th, const uint32_t *known) {
    const int n = th->n;
    uint32_t vals[MAXN];
    for (int r = 0; r < n; r++) vals[r] = th->sol[r] & known[r];
    long long c = count_once(cx, vals, known, th->m_max + 1, th->m_max + 1, th->max_nodes, &th->nodes);
    th->counts++;
    if (c < 0 || c > th->m_max) return 0;
    for (long long i = 0; i < cx->nsols; i++)
        if (!pinned(th, cx->sols + i * n)) return 0;
    memcpy(th->sols, cx->sols, (size_t)cx->nsols * n * sizeof(uint16_t));
    th->nsols = cx->nsols;
    return 1;
}

static inline void clear_cell(uint32_t *known, int n, int i) { known[i / n] &= ~(1u << (n - 1 - i % n)); }

/* The cells of ``porder`` (a sequence of indices 0..n*n-1, at most n*n of them) into ``order``;
 * their count, or -1 with a ValueError/TypeError set. Shared by thin_rows and thin_ladder. */
static Py_ssize_t read_order(PyObject *porder, int n, int *order) {
    PyObject *ofast = PySequence_Fast(porder, "order must be a sequence of cell indices");
    if (!ofast) return -1;
    Py_ssize_t no = PySequence_Fast_GET_SIZE(ofast);
    if (no > n * n) {
        Py_DECREF(ofast);
        PyErr_Format(PyExc_ValueError, "order is longer than n*n");
        return -1;
    }
    for (Py_ssize_t j = 0; j < no; j++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(ofast, j));
        if ((v == -1 && PyErr_Occurred()) || v < 0 || v >= n * n) {
            PyErr_Clear();
            Py_DECREF(ofast);
            PyErr_Format(PyExc_ValueError, "order entry %zd is not a cell index of n=%d", j, n);
            return -1;
        }
        order[j] = (int)v;
    }
    Py_DECREF(ofast);
    return no;
}


PyObject *py_thin_rows(PyObject *self, PyObject *args) {
    int n, seam;
    long long m_max, b, room, max_nodes;
    PyObject *ps, *pk, *porder;
    if (!PyArg_ParseTuple(args, "iOOOLiLLL", &n, &ps, &pk, &porder, &m_max, &seam, &b, &room, &max_nodes))
        return NULL;
    Ctx cx;
    if (setup(&cx, n, 1) < 0) return NULL;
    uint32_t sol32[MAXN], known[MAXN];
    if (parse_rows(ps, n, sol32, "solution") < 0 || parse_rows(pk, n, known, "known") < 0) return NULL;
    if (m_max < 1 || m_max >= MAXSOLS) return PyErr_Format(PyExc_ValueError, "m_max must be in 1..%d", MAXSOLS - 1);
    int order[MAXN * MAXN];
    Py_ssize_t no = read_order(porder, n, order);
    if (no < 0) return NULL;
    Thin th = {0};
    th.n = n;
    th.seam = seam & 15;
    th.m_max = th.seam ? m_max : 1;
    th.max_nodes = max_nodes;
    for (int r = 0; r < n; r++) th.sol[r] = (uint16_t)sol32[r];
    uint16_t solsbuf[MAXSOLS * MAXN];
    th.sols = solsbuf;
    PyObject *result = NULL;
    if (!thin_check(&cx, &th, known)) {          /* the start itself is not acceptable */
        if (cx.oom) goto oom;
        PyMem_Free(cx.sols);
        Py_RETURN_NONE;
    }
    /* keep only the cells of the order that are given in the start */
    int cells[MAXN * MAXN], nc = 0;
    for (Py_ssize_t j = 0; j < no; j++)
        if ((known[order[j] / n] >> (n - 1 - order[j] % n)) & 1) cells[nc++] = order[j];
    /* group phase */
    int p = 0;
    while (p < nc) {
        if (b > room - p) b = room - p;
        if (b < 2) break;
        uint32_t trial[MAXN];
        memcpy(trial, known, sizeof(trial));
        long long take = b < nc - p ? b : nc - p;
        for (long long j = 0; j < take; j++) clear_cell(trial, n, cells[p + j]);
        if (!thin_check(&cx, &th, trial)) break;
        memcpy(known, trial, sizeof(trial));
        p += (int)take;
        b *= 2;
    }
    if (cx.oom) goto oom;
    /* single phase: each cell alone with its value flipped */
    uint32_t vals[MAXN];
    for (int r = 0; r < n; r++) vals[r] = th.sol[r] & known[r];
    for (int j = p; j < nc; j++) {
        int i = cells[j], r = i / n;
        uint32_t bit = 1u << (n - 1 - i % n);
        vals[r] ^= bit;
        long long rm = th.m_max - th.nsols, c;
        if (rm <= 0) c = count_once(&cx, vals, known, 1, 0, th.max_nodes, &th.nodes);
        else c = count_once(&cx, vals, known, rm + 1, rm + 1, th.max_nodes, &th.nodes);
        vals[r] ^= bit;
        th.counts++;
        if (cx.oom) goto oom;
        if (c < 0 || c > (rm > 0 ? rm : 0)) continue;
        if (c) {
            int ok = 1;
            for (long long s = 0; s < cx.nsols && ok; s++)
                if (!(sides_differ(n, cx.sols + s * n, th.sol) & th.seam)) ok = 0;
            if (!ok) continue;
            memcpy(th.sols + th.nsols * n, cx.sols, (size_t)cx.nsols * n * sizeof(uint16_t));
            th.nsols += cx.nsols;
        }
        known[r] &= ~bit;
        vals[r] &= ~bit;
    }
    PyMem_Free(cx.sols);
    {
        PyObject *lk = PyList_New(n), *ls = PyList_New(th.nsols);
        if (!lk || !ls) { Py_XDECREF(lk); Py_XDECREF(ls); return NULL; }
        for (int r = 0; r < n; r++) PyList_SET_ITEM(lk, r, PyLong_FromUnsignedLong(known[r]));
        for (long long s = 0; s < th.nsols; s++) {
            PyObject *tup = rows_tuple(th.sols + s * n, n);
            if (!tup) { Py_DECREF(lk); Py_DECREF(ls); return NULL; }
            PyList_SET_ITEM(ls, s, tup);
        }
        result = Py_BuildValue("(NNLL)", lk, ls, th.counts, th.nodes);
    }
    return result;
oom:
    PyMem_Free(cx.sols);
    return PyErr_NoMemory();
}

/* Cell (r, c) lies on the grid and K knows it (its value is S's bit there). */
static inline int known_at(const uint32_t *K, int n, int r, int c) {
    return r >= 0 && r < n && c >= 0 && c < n && ((K[r] >> (n - 1 - c)) & 1);
}

static inline int equal_pair(const uint32_t *S, const uint32_t *K, int n, int r1, int c1, int r2, int c2) {
    return known_at(K, n, r1, c1) && known_at(K, n, r2, c2)
           && ((S[r1] >> (n - 1 - c1)) & 1) == ((S[r2] >> (n - 1 - c2)) & 1);
}

/* Does the ladder's runs rule (L1) fill the open cell (r, c) in one step from the cells K knows
 * of the valid grid S: two equal known cells beside it, on either side or around it, in its row or
 * its column (t_runs' three patterns)? */
static int runs_fill(const uint32_t *S, const uint32_t *K, int n, int r, int c) {
    return equal_pair(S, K, n, r, c - 2, r, c - 1) || equal_pair(S, K, n, r, c + 1, r, c + 2)
           || equal_pair(S, K, n, r, c - 1, r, c + 1) || equal_pair(S, K, n, r - 2, c, r - 1, c)
           || equal_pair(S, K, n, r + 1, c, r + 2, c) || equal_pair(S, K, n, r - 1, c, r + 1, c);
}

/* Is the open position `pos` of a line forced by the line's known positions (line ints, bit n-1-i
 * = position i): do all valid lines that agree with them have one value there? */
static int line_agrees(const Tables *t, int n, uint32_t vals, uint32_t known, int pos) {
    uint64_t dom[MAXW];
    uint32_t seen0, seen1;
    line_domain(t, vals, known, dom);
    const uint32_t bit = 1u << (n - 1 - pos);
    /* an empty domain (no fitting line) forces nothing */
    return scan_domain(t, dom, bit, &seen0, &seen1) && ((seen0 ^ seen1) & bit);
}

/* Is the open cell (r, c) forced by its row or its column of the cells K knows of the grid S? */
static int line_forced(const Tables *t, int n, const uint32_t *S, const uint32_t *K, int r, int c) {
    if (line_agrees(t, n, S[r] & K[r], K[r], c)) return 1;
    const int b = n - 1 - c;
    uint32_t cv = 0, ck = 0;
    for (int q = 0; q < n; q++) {
        cv |= ((S[q] >> b) & 1u) << (n - 1 - q);
        ck |= ((K[q] >> b) & 1u) << (n - 1 - q);
    }
    return line_agrees(t, n, cv & ck, ck, r);
}

/* The givens K alone keep at most m_max solutions of the grid whose values S shows there (one
 * count, stopped past max_nodes: a stopped count does not pass). */
static int few_enough(Ctx *cx, int n, const uint32_t *S, const uint32_t *K, long long m_max, long long max_nodes,
                      long long *total) {
    uint32_t vals[MAXN];
    for (int r = 0; r < n; r++) vals[r] = S[r] & K[r];
    long long c = count_once(cx, vals, K, m_max + 1, 0, max_nodes, total);
    return c >= 0 && c <= m_max;
}

/* Target-level thinning (Unruly's rule): remove the givens of `order` one at a time and
 * keep a removal while the standard solve with levels 1..L, run on the givens plus the
 * seam sides (`side_known`), still solves. With seam sides, the tile's own givens must
 * also keep m <= m_max (one count, capped by max_nodes like thin_rows); a solve of
 * givens + seam sides already pins every alternative on a seam side. Returns the
 * givens rows, or None when the start does not pass. */
PyObject *py_thin_ladder(PyObject *self, PyObject *args) {
    int n, levels, seam;
    long long m_max, max_nodes;
    PyObject *ps, *pk, *psides, *porder;
    if (!PyArg_ParseTuple(args, "iOOOOiiLL", &n, &ps, &pk, &psides, &porder, &levels, &seam, &m_max, &max_nodes))
        return NULL;
    Ctx cx;
    if (setup(&cx, n, 1) < 0) return NULL;
    uint32_t sol[MAXN], known[MAXN], sides[MAXN];
    if (parse_rows(ps, n, sol, "solution") < 0 || parse_rows(pk, n, known, "known") < 0
        || parse_rows(psides, n, sides, "side_known") < 0)
        return NULL;
    if (levels < 1 || levels > N_LEVELS)
        return PyErr_Format(PyExc_ValueError, "levels must be 1..%d, got %d", N_LEVELS, levels);
    if (m_max < 1) return PyErr_Format(PyExc_ValueError, "m_max must be at least 1");
    int order[MAXN * MAXN];
    Py_ssize_t no = read_order(porder, n, order);
    if (no < 0) return NULL;
    const int enabled = (1 << levels) - 1;
    /* the solution, when it is a valid grid, lets each bifurcation trial run only the value it does
     * not show (_ladder.c); any other rows thin exactly as before, without the shortcut */
    const uint32_t *z = valid_grid(cx.t, sol) ? sol : NULL;
    long long total = 0;
    uint32_t lk[MAXN];
    /* acceptable(known): ladder on known|sides solves; with seam, the givens keep m <= m_max */
    for (int r = 0; r < n; r++) lk[r] = known[r] | sides[r];
    int ok = ladder_solves(cx.t, n, sol, lk, enabled, z)
             && (!seam || few_enough(&cx, n, sol, known, m_max, max_nodes, &total));
    if (cx.oom) { PyMem_Free(cx.sols); return PyErr_NoMemory(); }
    if (!ok) { PyMem_Free(cx.sols); Py_RETURN_NONE; }
    /* A trial removal of cell (r, c), with z (the solution, a valid grid), runs only what could
     * answer otherwise than the current known cells, which always pass:
     *  - the solve: not at all on a seam side (its input is unchanged), nor when the runs rule
     *    fills the cell in one step from the rest; else ladder_solves_without, which stops once
     *    its first two levels' fixpoint holds the cell (see there).
     *  - the count of the givens alone (seam sides): not when the givens' row or column of the
     *    cell forces it (every valid line that fits the rest has its value). The count's
     *    propagation forces it then too, and line-domain propagation's fixpoint does not depend
     *    on the order it is reached in, so the search starts from the same domains, known cells
     *    and settled lines as with the cell given: the same count, the same nodes. */
    for (Py_ssize_t j = 0; j < no; j++) {
        int i = order[j], r = i / n, c = i % n;
        uint32_t bit = 1u << (n - 1 - c);
        if (!(known[r] & bit)) continue;
        known[r] &= ~bit;
        for (int r_ = 0; r_ < n; r_++) lk[r_] = known[r_] | sides[r_];
        if (z)
            ok = (sides[r] & bit) || runs_fill(sol, lk, n, r, c)
                 || ladder_solves_without(cx.t, n, sol, lk, enabled, z, r, c);
        else
            ok = ladder_solves(cx.t, n, sol, lk, enabled, NULL);
        if (ok && seam && !(z && line_forced(cx.t, n, sol, known, r, c)))
            ok = few_enough(&cx, n, sol, known, m_max, max_nodes, &total);
        if (!ok) known[r] |= bit;
    }
    int oom = cx.oom;
    PyMem_Free(cx.sols);
    if (oom) return PyErr_NoMemory();
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int r = 0; r < n; r++) PyList_SET_ITEM(out, r, PyLong_FromUnsignedLong(known[r]));
    return out;
}
