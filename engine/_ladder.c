/* engine._kernel, part 2: the difficulty ladder (engine/ladder.py in C). */
#include "_kernel.h"

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
/* The techniques, cheapest first: engine.ladder.TECHNIQUES in C. lsolve walks this table. */
static const struct { int level; const char *name; } TECHNIQUES[N_LEVELS] = {
    {L_RUNS, "runs"}, {L_BALANCE, "balance"}, {L_UNIQUE, "uniqueness"}, {L_BIFURCATION, "bifurcation"},
};

/* z: the rows of a valid grid that agrees with every known cell, or NULL. Every technique's fill
 * is a sound deduction, so a state that starts inside z stays inside z, and a bifurcation trial
 * that sets a cell to z's value cannot reach a contradiction (the lower levels' fills all stay
 * inside z as well): with z, a trial runs only the other value, and the result is the same. */
/* complete: bit r = row r has every cell known, bit 16+c = column c; nknown: cells known. Both are
 * kept by lset, so a scan visits only the dirty or complete lines, and "solved" is one compare. */
typedef struct {
    int n, nknown;
    uint32_t rv[MAXN], rk[MAXN], cv[MAXN], ck[MAXN];
    uint32_t dirty[4], complete;
    const uint32_t *z;
} LState;
typedef struct { int maxlevel, bif, used3; } LLog;
enum { S_SOLVED = 0, S_STUCK = 1, S_CONTRA = 2 };

/* The lines of orientation o (0 rows, 1 columns) in a line mask (bit i = row i, 16+i = column i),
 * as a mask of indexes; FOR_LINES walks its indexes ascending. */
#define LINES_OF(mask, o) ((o) ? (mask) >> 16 : (mask) & 0xFFFFu)
#define FOR_LINES(i, lines) for (uint32_t m_ = (lines), i; m_ && ((i = __builtin_ctz(m_)), 1); m_ &= m_ - 1)

static inline void lset(LState *s, int r, int c, int v) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    uint32_t rb = 1u << (n - 1 - c), cb = 1u << (n - 1 - r);
    s->nknown += !(s->rk[r] & rb);
    s->rk[r] |= rb;
    s->ck[c] |= cb;
    if (v) { s->rv[r] |= rb; s->cv[c] |= cb; }
    uint32_t d = (1u << r) | (1u << (16 + c));
    s->dirty[0] |= d; s->dirty[1] |= d; s->dirty[2] |= d; s->dirty[3] |= d;
    if (s->rk[r] == full) { s->dirty[3] |= full; s->complete |= 1u << r; }            /* rows' L3 */
    if (s->ck[c] == full) { s->dirty[3] |= full << 16; s->complete |= 1u << (16 + c); }
}

static int lviolated(LState *s) {
    const int n = s->n, half = n / 2;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[0];
    s->dirty[0] = 0;
    for (int o = 0; o < 2; o++) {
        const uint32_t *V = o ? s->cv : s->rv, *K = o ? s->ck : s->rk;
        FOR_LINES(i, LINES_OF(todo, o)) {
            uint32_t ones = V[i] & K[i], zeros = ~V[i] & K[i] & full;
            if ((ones & (ones >> 1) & (ones >> 2)) || (zeros & (zeros >> 1) & (zeros >> 2))) return 1;
            if (__builtin_popcount(ones) > half || __builtin_popcount(zeros) > half) return 1;
            if (K[i] == full)
                FOR_LINES(j, LINES_OF(s->complete, o))
                    if (j != i && V[j] == V[i]) return 1;
        }
    }
    return 0;
}

/* A technique's fills: v[0][r] / v[1][r] are row-int masks of the cells of row r to set to 0 / 1,
 * for the rows in `rows` (a row's masks are zeroed when it first gets a fill, so an empty Fills is
 * just rows = 0, and applying one walks only the rows it touches). */
typedef struct { uint32_t rows, v[2][MAXN]; } Fills;

static inline void fill_row(Fills *F, int r, uint32_t mask, int v) {
    if (!(F->rows & (1u << r))) { F->rows |= 1u << r; F->v[0][r] = F->v[1][r] = 0; }
    F->v[v][r] |= mask;
}

static inline void add_fill(int n, Fills *F, int is_row, int idx, uint32_t mask, int v) {
    if (!mask) return;
    if (is_row) { fill_row(F, idx, mask, v); return; }
    while (mask) {
        int b = __builtin_ctz(mask);
        mask &= mask - 1;
        fill_row(F, n - 1 - b, 1u << (n - 1 - idx), v);
    }
}

static void t_runs(LState *s, Fills *F) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[1];
    s->dirty[1] = 0;
    for (int o = 0; o < 2; o++)
        FOR_LINES(i, LINES_OF(todo, o)) {
            uint32_t v = o ? s->cv[i] : s->rv[i], k = o ? s->ck[i] : s->rk[i];
            uint32_t freeb = full & ~k;
            if (!freeb) continue;
            for (int f = 0; f < 2; f++) {
                uint32_t x = f == 0 ? (v & k) : (~v & k & full);
                uint32_t pair = x & (x >> 1);
                uint32_t target = ((pair >> 1) | (pair << 2) | ((x & (x >> 2)) << 1)) & freeb;
                add_fill(n, F, !o, i, target, f);
            }
        }
}

static void t_balance(LState *s, Fills *F) {
    const int n = s->n, half = n / 2;
    const uint32_t full = (1u << n) - 1;
    const uint32_t todo = s->dirty[2];
    s->dirty[2] = 0;
    for (int o = 0; o < 2; o++)
        FOR_LINES(i, LINES_OF(todo, o)) {
            uint32_t v = o ? s->cv[i] : s->rv[i], k = o ? s->ck[i] : s->rk[i];
            uint32_t freeb = full & ~k;
            if (!freeb) continue;
            if (__builtin_popcount(v & k) == half) add_fill(n, F, !o, i, freeb, 0);
            else if (__builtin_popcount(~v & k & full) == half) add_fill(n, F, !o, i, freeb, 1);
        }
}

/* positions (line-int bits) on which every pattern of a nonempty domain agrees, and their values:
 * scan_domain over every position (the patterns walked one by one until each position has shown
 * both values; a domain late in a solve holds a few patterns). */
static void agreed(const Tables *t, const uint64_t *d, uint32_t *known, uint32_t *vals) {
    uint32_t seen0, seen1;
    scan_domain(t, d, t->full, &seen0, &seen1);
    *known = t->full & ~(seen0 & seen1);
    *vals = t->full & ~seen0;
}

static int t_unique(LState *s, const Tables *t, Fills *F) {
    const int n = s->n, W = t->W;
    const uint32_t full = (1u << n) - 1;
    uint64_t dom[MAXW], red[MAXW];
    const uint32_t todo = s->dirty[3];
    s->dirty[3] = 0;
    for (int o = 0; o < 2; o++) {
        const uint32_t *V = o ? s->cv : s->rv, *K = o ? s->ck : s->rk;
        FOR_LINES(i, LINES_OF(todo, o)) {
            const uint32_t v = V[i], k = K[i];
            if (k == full) continue;
            int dups[MAXN], nd = 0;
            FOR_LINES(j, LINES_OF(s->complete, o))
                if ((V[j] & k) == v && t->index[V[j]] >= 0) dups[nd++] = t->index[V[j]];
            if (!nd) continue;
            int any = 0;
            line_domain(t, v, k, dom);
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
            add_fill(n, F, !o, i, m & ~v1, 0);
            add_fill(n, F, !o, i, m & v1, 1);
        }
    }
    return 0;
}

static int lsolve(LState *s, const Tables *t, int enabled, LLog *log);

static int t_bifurcation(LState *s, const Tables *t, int enabled, Fills *F) {
    const int n = s->n;
    const uint32_t full = (1u << n) - 1;
    const int inner = enabled & ~LEVEL_BIT(L_BIFURCATION);   /* the trial runs the levels below */
    LState trial;
    for (int r = 0; r < n; r++) {
        uint32_t freeb = full & ~s->rk[r];
        while (freeb) {
            int b = 31 - __builtin_clz(freeb);   /* leftmost open cell first */
            freeb &= ~(1u << b);
            int c = n - 1 - b, bad[2] = {0, 0}, nb = 0;
            for (int v = 0; v < 2; v++) {
                if (s->z && (int)((s->z[r] >> b) & 1) == v) continue;   /* z's value: no contradiction */
                trial = *s;
                lset(&trial, r, c, v);
                bad[v] = lsolve(&trial, t, inner, NULL) == S_CONTRA;
                nb += bad[v];
            }
            if (nb == 2) return -1;
            if (nb == 1) {
                add_fill(n, F, 1, r, 1u << b, bad[0] ? 1 : 0);
                return 0;
            }
        }
    }
    return 0;
}

/* The standard solve; enabled has bit (level-1) set for each enabled level. */
static int lsolve(LState *s, const Tables *t, int enabled, LLog *log) {
    const int n = s->n;
    for (;;) {
        if (lviolated(s)) return S_CONTRA;
        if (s->nknown == n * n) return S_SOLVED;
        int progressed = 0;
        for (int i = 0; i < N_LEVELS && !progressed; i++) {
            const int level = TECHNIQUES[i].level;
            if (!(enabled & LEVEL_BIT(level))) continue;
            Fills F;
            F.rows = 0;
            int rc = 0;
            switch (level) {
            case L_RUNS: t_runs(s, &F); break;
            case L_BALANCE: t_balance(s, &F); break;
            case L_UNIQUE: rc = t_unique(s, t, &F); break;
            case L_BIFURCATION: rc = t_bifurcation(s, t, enabled, &F); break;
            }
            if (rc < 0) return S_CONTRA;
            if (!F.rows) continue;
            FOR_LINES(r, F.rows)
                if (F.v[0][r] & F.v[1][r]) return S_CONTRA;
            FOR_LINES(r, F.rows) {
                uint32_t m = F.v[0][r] | F.v[1][r];
                while (m) {
                    int b = __builtin_ctz(m);
                    m &= m - 1;
                    lset(s, r, n - 1 - b, (F.v[1][r] >> b) & 1);
                }
            }
            if (log) {
                if (level > log->maxlevel) log->maxlevel = level;
                if (level == L_BIFURCATION) log->bif++;
                if (level == L_UNIQUE) log->used3 = 1;
            }
            progressed = 1;
        }
        if (!progressed) return S_STUCK;
    }
}

static void lstate_init(LState *s, int n, const uint32_t *vals, const uint32_t *known, const uint32_t *z) {
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->z = z;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            if ((known[r] >> (n - 1 - c)) & 1) lset(s, r, c, (vals[r] >> (n - 1 - c)) & 1);
    const uint32_t all = ((1u << n) - 1) | (((1u << n) - 1) << 16);
    for (int t = 0; t < 4; t++) s->dirty[t] = all;       /* a fresh solve looks at every line */
}

PyObject *py_rate_rows(PyObject *self, PyObject *args) {
    int n;
    PyObject *pv, *pk, *pz = Py_None;
    if (!PyArg_ParseTuple(args, "iOO|O", &n, &pv, &pk, &pz)) return NULL;
    uint32_t vals[MAXN], known[MAXN], zrows[MAXN];
    const uint32_t *z = NULL;
    const Tables *t = checked_tables(n);
    if (!t) return NULL;
    if (parse_rows(pv, n, vals, "vals") < 0 || parse_rows(pk, n, known, "known") < 0) return NULL;
    for (int r = 0; r < n; r++) vals[r] &= known[r];
    if (pz != Py_None) {
        if (parse_rows(pz, n, zrows, "solution") < 0) return NULL;
        if (!valid_grid(t, zrows)) return PyErr_Format(PyExc_ValueError, "solution is not a valid %dx%d grid", n, n);
        for (int r = 0; r < n; r++)
            if ((zrows[r] ^ vals[r]) & known[r])
                return PyErr_Format(PyExc_ValueError, "solution disagrees with a known cell of row %d", r);
        z = zrows;
    }
    const uint32_t full = t->full;
    LState s;
    lstate_init(&s, n, vals, known, z);
    int open0 = 0, open1 = 0;
    for (int r = 0; r < n; r++) open0 += __builtin_popcount(full & ~s.rk[r]);
    LLog log = {0, 0, 0};
    int status = lsolve(&s, t, ALL_LEVELS, &log);
    for (int r = 0; r < n; r++) open1 += __builtin_popcount(full & ~s.rk[r]);
    int ladder, needs_u, needs_b;
    PyObject *sol;
    if (status == S_SOLVED) {
        ladder = log.maxlevel;
        needs_u = needs_b = 0;
        if (log.used3 || log.bif) {
            LState s2;
            lstate_init(&s2, n, vals, known, z);
            needs_u = lsolve(&s2, t, ALL_LEVELS & ~LEVEL_BIT(L_UNIQUE), NULL) != S_SOLVED;
        }
        if (log.bif) {
            LState s3;
            lstate_init(&s3, n, vals, known, z);
            needs_b = lsolve(&s3, t, ALL_LEVELS & ~LEVEL_BIT(L_BIFURCATION), NULL) != S_SOLVED;
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


/* Does the standard solve with the levels in `enabled` (bit level-1) solve the puzzle? (thinning) */
int ladder_solves(const Tables *t, int n, const uint32_t *vals, const uint32_t *known, int enabled,
                  const uint32_t *z) {
    uint32_t v[MAXN];
    for (int r = 0; r < n; r++) v[r] = vals[r] & known[r];
    LState s;
    lstate_init(&s, n, v, known, z);
    return lsolve(&s, t, enabled, NULL) == S_SOLVED;
}

/* ladder_solves of `known`, which is the known cells of a puzzle the solve is known to solve but
 * for the open cell (r, c) (the thinning's trial removal); sol: that puzzle's solution, z as in
 * lsolve. The solve runs its first two levels to their fixpoint before it tries a third (it restarts
 * at L1 after each fill), and the closure of runs and balance is monotone: if that fixpoint holds
 * (r, c), it is the fixpoint the known puzzle reaches, with the same lines' dirty marks (L1's and
 * L2's clear, L3's every line), so the rest of the solve is the known puzzle's: it solves. Else
 * the solve goes on from there, exactly as one solve would. */
int ladder_solves_without(const Tables *t, int n, const uint32_t *sol, const uint32_t *known, int enabled,
                          const uint32_t *z, int r, int c) {
    uint32_t v[MAXN];
    for (int i = 0; i < n; i++) v[i] = sol[i] & known[i];
    LState s;
    lstate_init(&s, n, v, known, z);
    const int low = enabled & (LEVEL_BIT(L_RUNS) | LEVEL_BIT(L_BALANCE));
    const int st = lsolve(&s, t, low, NULL);
    if (st != S_STUCK) return st == S_SOLVED;
    if ((s.rk[r] >> (n - 1 - c)) & 1) return 1;
    return low != enabled && lsolve(&s, t, enabled, NULL) == S_SOLVED;
}

/* techniques() -> ((level, name), ...): the table lsolve walks, for the test against engine.ladder */
PyObject *py_techniques(PyObject *self, PyObject *unused) {
    PyObject *out = PyTuple_New(N_LEVELS);
    if (!out) return NULL;
    for (int i = 0; i < N_LEVELS; i++) {
        PyObject *item = Py_BuildValue("(is)", TECHNIQUES[i].level, TECHNIQUES[i].name);
        if (!item) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}
