/* engine._kernel: the line-domain counter of engine/reference.py, in C.
 *
 * Same model, same rules, same branching order, same node definition as the
 * Python reference (read its docstring first); the tests check both report
 * identical counts, solutions and node counts on a fixed instance set.
 *
 * Layout: 2n lines (rows 0..n-1, columns n..2n-1). A domain is W = ceil(P/64)
 * uint64 words over the P valid patterns of side n (ascending ints). Known
 * cells per line are kept as a mask in line-int convention (bit n-1-i =
 * position i). To find the cells a domain agrees on we scan its words against
 * per-position value masks (cmT), dropping a position as soon as it has
 * shown both values; only forced positions need the whole domain. The search
 * branches on a cell, falling back to whole lines after a node budget (see the
 * reference), and copies the live prefix of its state into a preallocated
 * stack (depth <= n*n): no allocation in the hot loop.
 *
 * Python API (rows are ints, bit n-1-c = cell (r, c); n even, 2..16):
 *   count_rows(n, vals, known, k, distinct=True, keep=k, max_nodes=-1, find=False)
 *       -> (count capped at k, [solution row tuples, at most keep], nodes);
 *       count is -1 when max_nodes >= 0 and the search passed it (then stopped)
 *   backbone_rows(n, vals, known, distinct=True)
 *       -> (no_solution, backbone value rows, backbone known rows, nodes)
 *   rate_rows(n, vals, known)
 *       -> (ladder, bifurcations, used_unique, needs_unique, needs_bifurcation,
 *           solution rows or None, filled): engine.ladder.rate (see the ladder section)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>

#define MAXN 16
#define MAXL (2 * MAXN)
#define MAXP 1296
#define MAXW ((MAXP + 63) / 64)

typedef struct {
    int n, P, W;
    uint32_t full;
    uint16_t pats[MAXP];
    uint64_t cm[MAXN][2][MAXW];        /* cm[i][v]: patterns with value v at position i */
    int16_t *index;                    /* index[line int] = pattern rank, -1 if not a valid line */
    uint64_t cmT[MAXW][2 * MAXN];      /* cmT[w][2*bit+v]: word w of the patterns with value v
                                          at line-int bit `bit` (position n-1-bit) */
} Tables;

static Tables *TAB[MAXN + 1];

static int runs_ok(uint32_t v, int n) {
    uint32_t inv = v ^ ((1u << n) - 1);
    return !(v & (v >> 1) & (v >> 2)) && !(inv & (inv >> 1) & (inv >> 2));
}

static Tables *tables_for(int n) {
    if (TAB[n]) return TAB[n];
    Tables *t = (Tables *)PyMem_Calloc(1, sizeof(Tables));
    if (!t) return NULL;
    t->n = n;
    t->full = (n == 32) ? 0xffffffffu : ((1u << n) - 1);
    int P = 0;
    for (uint32_t v = 0; v < (1u << n); v++)
        if (__builtin_popcount(v) == n / 2 && runs_ok(v, n)) t->pats[P++] = (uint16_t)v;
    t->P = P;
    t->W = (P + 63) / 64;
    t->index = (int16_t *)PyMem_Malloc(sizeof(int16_t) << n);
    if (!t->index) { PyMem_Free(t); return NULL; }
    for (uint32_t v = 0; v < (1u << n); v++) t->index[v] = -1;
    for (int j = 0; j < P; j++) t->index[t->pats[j]] = (int16_t)j;
    for (int j = 0; j < P; j++)
        for (int i = 0; i < n; i++) {
            int v = (t->pats[j] >> (n - 1 - i)) & 1;
            t->cm[i][v][j >> 6] |= 1ull << (j & 63);
        }
    for (int w = 0; w < t->W; w++)
        for (int bit = 0; bit < n; bit++)
            for (int v = 0; v < 2; v++) t->cmT[w][2 * bit + v] = t->cm[n - 1 - bit][v][w];
    TAB[n] = t;
    return t;
}

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
        /* seen0/seen1: open positions (line-int bits) where some pattern of the domain
         * has a 0 / a 1. A position drops out of the scan once it has seen both, so a
         * large domain is usually settled within its first nonzero word. */
        const uint32_t open = full & ~s->kmask[L];
        uint32_t seen0 = 0, seen1 = 0;
        int any = 0;
        for (int w = 0; w < W; w++) {
            const uint64_t x = d[w];
            if (!x) continue;
            any = 1;
            uint32_t und = open & ~(seen0 & seen1);
            if (!und) break;
            const uint64_t *cw = t->cmT[w];
            while (und) {
                int bit = __builtin_ctz(und);
                und &= und - 1;
                if (x & cw[2 * bit]) seen0 |= 1u << bit;
                if (x & cw[2 * bit + 1]) seen1 |= 1u << bit;
            }
        }
        if (!any) return 0;
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

/* Search plans (see the reference): a list of (rule, budget factor) attempts, each
 * searching afresh from STACK[0] until one finishes within factor*n*n nodes
 * (factor < 0: no budget). Counting: cell rule (16) then line rule. Backbone
 * (finding one solution per probe): line rule (1), cell rule (32), line rule. */
typedef struct { int len; int line[4]; long long factor[4]; } Plan;
static const Plan PLAN_COUNT = {2, {0, 1}, {16, -1}};
static const Plan PLAN_FIND = {3, {1, 0, 1}, {1, 32, -1}};

static void run(Ctx *cx, const Plan *plan) {
    for (int i = 0; i < plan->len; i++) {
        cx->line_mode = plan->line[i];
        cx->aborted = 0;
        cx->count = 0;
        cx->nsols = 0;
        cx->limit = plan->factor[i] < 0 ? LLONG_MAX : cx->nodes + plan->factor[i] * cx->n * cx->n;
        search(cx, 0);
        if (!cx->aborted || cx->stopped) return;
    }
}

static void init_state(const Ctx *cx, State *s, const uint32_t *vals, const uint32_t *known) {
    const int n = cx->n, W = cx->W;
    const Tables *t = cx->t;
    for (int L = 0; L < 2 * n; L++) {
        uint64_t *d = DOM(s, L);
        for (int w = 0; w < W; w++) {
            int lo = w * 64, hi = lo + 64 < t->P ? lo + 64 : t->P;
            d[w] = (hi - lo == 64) ? ~0ull : ((1ull << (hi - lo)) - 1);
        }
        s->kmask[L] = 0;
    }
    s->settled = 0;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            if ((known[r] >> (n - 1 - c)) & 1) restrict_cell(cx, s, r, c, (vals[r] >> (n - 1 - c)) & 1);
}

/* ---------------------------------------------------------------- Python glue */

static int parse_rows(PyObject *seq, int n, uint32_t *out, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        PyErr_Format(PyExc_ValueError, "%s must hold n=%d row ints", what, n);
        Py_DECREF(fast);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(fast, i));
        if (PyErr_Occurred() || (n < 32 && v >> n)) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s row %d does not fit in %d bits", what, i, n);
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (uint32_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

static int setup(Ctx *cx, int n, int distinct) {
    if (n < 2 || n > MAXN || n % 2) {
        PyErr_Format(PyExc_ValueError, "n must be even in 2..%d, got %d", MAXN, n);
        return -1;
    }
    memset(cx, 0, sizeof(*cx));
    cx->t = tables_for(n);
    if (!cx->t) { PyErr_NoMemory(); return -1; }
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

static PyObject *py_count_rows(PyObject *self, PyObject *args, PyObject *kw) {
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

static PyObject *py_backbone_rows(PyObject *self, PyObject *args, PyObject *kw) {
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


/* ================================================================ the ladder
 * C twin of engine/ladder.py (read its docstring): same techniques, same fill
 * semantics (a technique's fills are computed on the current state, checked for
 * conflicts, then applied together), same scan orders, so rate_rows returns
 * exactly what engine.ladder.rate computes in Python.
 */

/* dirty[t]: lines (bit r = row r, bit 16+c = column c) changed since technique t last
 * looked at them (t = 0 the rule check, 1..3 = L1..L3). A line-local technique that found
 * nothing on a line, or whose fills were all applied, finds nothing there again until
 * the line changes (L3 also until a sibling becomes complete), so each technique only
 * rescans dirty lines: the fills computed are the same as a full scan's, and a
 * bifurcation trial re-examines just the two lines through its assumed cell. */
typedef struct { int n; uint32_t rv[MAXN], rk[MAXN], cv[MAXN], ck[MAXN]; uint32_t dirty[4]; } LState;
typedef struct { int maxlevel, bif, used3; } LLog;
enum { S_SOLVED = 0, S_STUCK = 1, S_CONTRA = 2 };

#define LINE_BIT(is_row, i) ((is_row) ? (1u << (i)) : (1u << (16 + (i))))

static inline void lset(LState *s, int r, int c, int v) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    uint32_t rb = 1u << (n - 1 - c), cb = 1u << (n - 1 - r);
    s->rk[r] |= rb;
    s->ck[c] |= cb;
    if (v) { s->rv[r] |= rb; s->cv[c] |= cb; }
    uint32_t d = (1u << r) | (1u << (16 + c));
    s->dirty[0] |= d; s->dirty[1] |= d; s->dirty[2] |= d; s->dirty[3] |= d;
    if (s->rk[r] == full) s->dirty[3] |= full;           /* a new complete row: rows' L3 */
    if (s->ck[c] == full) s->dirty[3] |= full << 16;     /* a new complete column */
}

static int lviolated(LState *s) {
    const int n = s->n, half = n / 2;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[0];
    s->dirty[0] = 0;
    for (int o = 0; o < 2; o++) {
        const uint32_t *V = o ? s->cv : s->rv, *K = o ? s->ck : s->rk;
        for (int i = 0; i < n; i++) {
            if (!(todo & LINE_BIT(!o, i))) continue;
            uint32_t ones = V[i] & K[i], zeros = ~V[i] & K[i] & full;
            if ((ones & (ones >> 1) & (ones >> 2)) || (zeros & (zeros >> 1) & (zeros >> 2))) return 1;
            if (__builtin_popcount(ones) > half || __builtin_popcount(zeros) > half) return 1;
            if (K[i] == full)
                for (int j = 0; j < n; j++)
                    if (j != i && K[j] == full && V[j] == V[i]) return 1;
        }
    }
    return 0;
}

/* fills: F0/F1 are row-int masks of cells to set to 0 / 1 */
static inline void add_fill(int n, uint32_t *F0, uint32_t *F1, int is_row, int idx, uint32_t mask, int v) {
    if (!mask) return;
    if (is_row) { (v ? F1 : F0)[idx] |= mask; return; }
    while (mask) {
        int b = __builtin_ctz(mask);
        mask &= mask - 1;
        (v ? F1 : F0)[n - 1 - b] |= 1u << (n - 1 - idx);
    }
}

static void t_runs(LState *s, uint32_t *F0, uint32_t *F1) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[1];
    s->dirty[1] = 0;
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < n; i++) {
            if (!(todo & LINE_BIT(!o, i))) continue;
            uint32_t v = o ? s->cv[i] : s->rv[i], k = o ? s->ck[i] : s->rk[i];
            uint32_t freeb = full & ~k;
            if (!freeb) continue;
            for (int f = 0; f < 2; f++) {
                uint32_t x = f == 0 ? (v & k) : (~v & k & full);
                uint32_t pair = x & (x >> 1);
                uint32_t target = ((pair >> 1) | (pair << 2) | ((x & (x >> 2)) << 1)) & freeb;
                add_fill(n, F0, F1, !o, i, target, f);
            }
        }
}

static void t_balance(LState *s, uint32_t *F0, uint32_t *F1) {
    const int n = s->n, half = n / 2;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[2];
    s->dirty[2] = 0;
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < n; i++) {
            if (!(todo & LINE_BIT(!o, i))) continue;
            uint32_t v = o ? s->cv[i] : s->rv[i], k = o ? s->ck[i] : s->rk[i];
            uint32_t freeb = full & ~k;
            if (!freeb) continue;
            if (__builtin_popcount(v & k) == half) add_fill(n, F0, F1, !o, i, freeb, 0);
            else if (__builtin_popcount(~v & k & full) == half) add_fill(n, F0, F1, !o, i, freeb, 1);
        }
}

/* positions (line-int bits) on which every pattern of a nonempty domain agrees, and their values */
static void agreed(const Tables *t, const uint64_t *d, uint32_t *known, uint32_t *vals) {
    const int n = t->n;
    const uint32_t full = (1u << n) - 1;
    uint32_t seen0 = 0, seen1 = 0;
    for (int w = 0; w < t->W; w++) {
        const uint64_t x = d[w];
        if (!x) continue;
        uint32_t und = full & ~(seen0 & seen1);
        if (!und) break;
        while (und) {
            int bit = __builtin_ctz(und);
            und &= und - 1;
            if (x & t->cmT[w][2 * bit]) seen0 |= 1u << bit;
            if (x & t->cmT[w][2 * bit + 1]) seen1 |= 1u << bit;
        }
    }
    *known = full & ~(seen0 & seen1);
    *vals = full & ~seen0;
}

static int t_unique(LState *s, const Tables *t, uint32_t *F0, uint32_t *F1) {
    const int n = s->n, W = t->W;
    const uint32_t full = (1u << n) - 1;
    uint64_t dom[MAXW], red[MAXW];
    const uint32_t todo = s->dirty[3];
    s->dirty[3] = 0;
    for (int o = 0; o < 2; o++) {
        const uint32_t *V = o ? s->cv : s->rv, *K = o ? s->ck : s->rk;
        for (int i = 0; i < n; i++) {
            if (!(todo & LINE_BIT(!o, i))) continue;
            const uint32_t v = V[i], k = K[i];
            if (k == full) continue;
            int dups[MAXN], nd = 0;
            for (int j = 0; j < n; j++)
                if (K[j] == full && (V[j] & k) == v && t->index[V[j]] >= 0) dups[nd++] = t->index[V[j]];
            if (!nd) continue;
            int any = 0;
            for (int w = 0; w < W; w++) {
                int lo = w * 64, hi = lo + 64 < t->P ? lo + 64 : t->P;
                dom[w] = (hi - lo == 64) ? ~0ull : ((1ull << (hi - lo)) - 1);
            }
            uint32_t kb = k;
            while (kb) {
                int b = __builtin_ctz(kb);
                kb &= kb - 1;
                const uint64_t *m = t->cm[n - 1 - b][(v >> b) & 1];
                for (int w = 0; w < W; w++) dom[w] &= m[w];
            }
            for (int w = 0; w < W; w++) any |= dom[w] != 0;
            if (!any) continue;
            memcpy(red, dom, sizeof(uint64_t) * W);
            for (int q = 0; q < nd; q++) red[dups[q] >> 6] &= ~(1ull << (dups[q] & 63));
            any = 0;
            for (int w = 0; w < W; w++) any |= red[w] != 0;
            if (!any) return -1;
            uint32_t k0, v0, k1, v1;
            agreed(t, dom, &k0, &v0);
            agreed(t, red, &k1, &v1);
            uint32_t m = k1 & ~k0 & ~k;
            add_fill(n, F0, F1, !o, i, m & ~v1, 0);
            add_fill(n, F0, F1, !o, i, m & v1, 1);
        }
    }
    return 0;
}

static int lsolve(LState *s, const Tables *t, int enabled, LLog *log);

static int t_bifurcation(LState *s, const Tables *t, int enabled, uint32_t *F0, uint32_t *F1) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    const int inner = enabled & 0x7;        /* levels 1..3 as bits 0..2 */
    LState trial;
    for (int r = 0; r < n; r++) {
        uint32_t freeb = full & ~s->rk[r];
        while (freeb) {
            int b = 31 - __builtin_clz(freeb);   /* leftmost open cell first */
            freeb &= ~(1u << b);
            int c = n - 1 - b, bad[2], nb = 0;
            for (int v = 0; v < 2; v++) {
                trial = *s;
                lset(&trial, r, c, v);
                bad[v] = lsolve(&trial, t, inner, NULL) == S_CONTRA;
                nb += bad[v];
            }
            if (nb == 2) return -1;
            if (nb == 1) {
                add_fill(n, F0, F1, 1, r, 1u << b, bad[0] ? 1 : 0);
                return 0;
            }
        }
    }
    return 0;
}

/* The standard solve; enabled has bit (level-1) set for each enabled level. */
static int lsolve(LState *s, const Tables *t, int enabled, LLog *log) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    for (;;) {
        if (lviolated(s)) return S_CONTRA;
        int done = 1;
        for (int r = 0; r < n; r++) done &= s->rk[r] == full;
        if (done) return S_SOLVED;
        int progressed = 0;
        for (int level = 1; level <= 4 && !progressed; level++) {
            if (!(enabled & (1 << (level - 1)))) continue;
            uint32_t F0[MAXN] = {0}, F1[MAXN] = {0};
            int rc = 0;
            switch (level) {
            case 1: t_runs(s, F0, F1); break;
            case 2: t_balance(s, F0, F1); break;
            case 3: rc = t_unique(s, t, F0, F1); break;
            case 4: rc = t_bifurcation(s, t, enabled, F0, F1); break;
            }
            if (rc < 0) return S_CONTRA;
            uint32_t anyf = 0;
            for (int r = 0; r < n; r++) {
                if (F0[r] & F1[r]) return S_CONTRA;
                anyf |= F0[r] | F1[r];
            }
            if (!anyf) continue;
            for (int r = 0; r < n; r++) {
                uint32_t m = F0[r] | F1[r];
                while (m) {
                    int b = __builtin_ctz(m);
                    m &= m - 1;
                    lset(s, r, n - 1 - b, (F1[r] >> b) & 1);
                }
            }
            if (log) {
                if (level > log->maxlevel) log->maxlevel = level;
                if (level == 4) log->bif++;
                if (level == 3) log->used3 = 1;
            }
            progressed = 1;
        }
        if (!progressed) return S_STUCK;
    }
}

static void lstate_init(LState *s, int n, const uint32_t *vals, const uint32_t *known) {
    memset(s, 0, sizeof(*s));
    s->n = n;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            if ((known[r] >> (n - 1 - c)) & 1) lset(s, r, c, (vals[r] >> (n - 1 - c)) & 1);
    const uint32_t all = ((1u << n) - 1) | (((1u << n) - 1) << 16);
    for (int t = 0; t < 4; t++) s->dirty[t] = all;       /* a fresh solve looks at every line */
}

static PyObject *py_rate_rows(PyObject *self, PyObject *args) {
    int n;
    PyObject *pv, *pk;
    if (!PyArg_ParseTuple(args, "iOO", &n, &pv, &pk)) return NULL;
    Ctx cx;
    uint32_t vals[MAXN], known[MAXN];
    if (setup(&cx, n, 1) < 0) return NULL;
    if (parse_rows(pv, n, vals, "vals") < 0 || parse_rows(pk, n, known, "known") < 0) return NULL;
    for (int r = 0; r < n; r++) vals[r] &= known[r];
    const Tables *t = cx.t;
    const uint32_t full = t->full;
    LState s;
    lstate_init(&s, n, vals, known);
    int open0 = 0, open1 = 0;
    for (int r = 0; r < n; r++) open0 += __builtin_popcount(full & ~s.rk[r]);
    LLog log = {0, 0, 0};
    int status = lsolve(&s, t, 0xf, &log);
    for (int r = 0; r < n; r++) open1 += __builtin_popcount(full & ~s.rk[r]);
    int ladder, needs_u, needs_b;
    PyObject *sol;
    if (status == S_SOLVED) {
        ladder = log.maxlevel;
        needs_u = needs_b = 0;
        if (log.used3 || log.bif) {
            LState s2;
            lstate_init(&s2, n, vals, known);
            needs_u = lsolve(&s2, t, 0xf & ~4, NULL) != S_SOLVED;
        }
        if (log.bif) {
            LState s3;
            lstate_init(&s3, n, vals, known);
            needs_b = lsolve(&s3, t, 0x7, NULL) != S_SOLVED;
        }
        sol = PyList_New(n);
        if (!sol) return NULL;
        for (int r = 0; r < n; r++) PyList_SET_ITEM(sol, r, PyLong_FromUnsignedLong(s.rv[r]));
    } else {
        ladder = 5;
        needs_u = needs_b = 1;
        sol = Py_None;
        Py_INCREF(sol);
    }
    return Py_BuildValue("(iiOOONi)", ladder, log.bif, log.used3 ? Py_True : Py_False,
                         needs_u ? Py_True : Py_False, needs_b ? Py_True : Py_False, sol, open0 - open1);
}

static PyMethodDef methods[] = {
    {"rate_rows", py_rate_rows, METH_VARARGS,
     "rate_rows(n, vals, known) -> (ladder, bifurcations, used_unique, needs_unique, needs_bifurcation,"
     " solution rows or None, filled): engine.ladder.rate in C"},
    {"count_rows", (PyCFunction)(void (*)(void))py_count_rows, METH_VARARGS | METH_KEYWORDS,
     "count_rows(n, vals, known, k=2, distinct=True, keep=k, max_nodes=-1, find=False) -> (count or -1, [row tuples], nodes)"},
    {"backbone_rows", (PyCFunction)(void (*)(void))py_backbone_rows, METH_VARARGS | METH_KEYWORDS,
     "backbone_rows(n, vals, known, distinct=True) -> (no_solution, value rows, known rows, nodes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "engine._kernel",
    "Line-domain Takuzu counter (C twin of engine.reference; see engine/_kernel.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&moddef); }
