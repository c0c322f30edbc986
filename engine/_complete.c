/* engine._kernel, part 4: completing windows of a board by line domains (engine/complete.py).
 *
 * The problem: a region of H x W cells, some fixed (0/1), and K square windows (x, y, n) in it.
 * Find values for every free cell of the windows' union such that every row and column of every
 * window is a valid line of its side (balanced, no three equal in a row) and, in the windows
 * flagged `distinct`, no two rows and no two columns are equal; and every excluded grid
 * (k, g) differs from window k somewhere. This is exactly the model engine.cpsat builds for
 * generator.complete (one distinct window) and stitcher.joint (a square's window, distinct, with
 * its unplaced neighbours' windows, not distinct), so the two agree on feasibility.
 *
 * Method: the counter's line domains (_count.c) over many windows. Each line is a bitset over
 * the valid patterns of its side (Tables); a cell belongs to a row and a column of every window
 * holding it. Propagation to a fixpoint: a line's domain forces the positions all its patterns
 * agree on; a forced cell restricts every line through it; a settled line of a distinct window
 * leaves the domains of its parallel lines; an empty domain is a contradiction. Search: branch on
 * the free cell whose lines have the fewest patterns (first in cell order on ties), value order
 * drawn from a seeded splitmix64 stream, depth first, a copy of the state per level. A leaf is a
 * complete assignment: every line holds one valid pattern; it is rejected if some window equals
 * one of its excluded grids. Exhausting the search is a proof that no completion exists; passing
 * `max_nodes` stops with status -1 (the caller then asks CP-SAT).
 *
 * Python API (bytes are row-major, one byte 0/1 per cell):
 *   complete_windows(H, W, values, known, windows, exclude, seed, max_nodes)
 *     windows: sequence of (x, y, n, distinct); exclude: sequence of (k, bytes of n_k * n_k)
 *     -> (status, grid bytes or None, nodes): status 1 found (grid: H*W bytes, the fixed cells and
 *        the completion; 0 outside the windows), 0 none exists, -1 max_nodes passed.
 *   Bad input (sizes, a window outside the region or of a side without tables, a byte other than
 *   0/1, a value on a free cell, an excluded grid of the wrong size, more than 256 windows or
 *   2^20 cells) raises ValueError. A search whose states would pass 256 MB stops undecided.
 */
#include "_kernel.h"

#define MAX_WINDOWS 256
#define PROBE_NODES 256                       /* one singleton probe at the root */
#define RESTART_NODES 256                     /* the first attempt; each restart doubles it */
#define MAX_CELLS (1 << 20)
#define MAX_STACK_BYTES ((size_t)256 << 20)   /* the search's states in all: past it, undecided */

typedef struct {
    const Tables *t;
    int n, win, row;               /* side, window index, 1 for a row line */
    int off;                       /* first domain word in a state */
    int32_t cells[MAXN];           /* region index of position i */
} Line;

typedef struct {
    int H, Wd, NL, D, K;
    Line *lines;
    int *win_n, *win_first, *win_distinct;   /* per window: side, first line (rows, then columns) */
    int32_t *memb_first, *memb;              /* per region cell: memberships (line << 5 | pos) */
    int32_t *ucells;                         /* union cells, ascending region index */
    unsigned char *own;                      /* per region cell: in a distinct window */
    int NU;
    size_t state_bytes, kmask_at, settled_at;
    unsigned char **stack;                   /* one state per depth, allocated on first use */
    int depth_cap;
    unsigned char *inq;
    int nex;
    int *ex_k;
    uint16_t *ex_rows;                       /* nex * MAXN rows */
    uint64_t rng;
    long long nodes, max_nodes;
    int found, stopped, oom, deep;             /* deep: the states passed MAX_STACK_BYTES */
    unsigned char *result;                   /* the found state, copied */
} Cx;

#define DOMS(s) ((uint64_t *)(s))
#define KMASK(cx, s) ((uint32_t *)((s) + (cx)->kmask_at))
#define SETTLED(cx, s) ((unsigned char *)((s) + (cx)->settled_at))

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* the single pattern of a settled line */
static uint16_t settled_pattern(const Line *L, const uint64_t *d) {
    int w = 0;
    while (!d[w]) w++;
    return L->t->pats[w * 64 + __builtin_ctzll(d[w])];
}

/* Fix region cell c to v in every line through it; lines whose domain changed are queued. */
static void set_cell(Cx *cx, unsigned char *s, int32_t c, int v, int from) {
    uint64_t *dom = DOMS(s);
    uint32_t *km = KMASK(cx, s);
    for (int32_t m = cx->memb_first[c]; m < cx->memb_first[c + 1]; m++) {
        int l = cx->memb[m] >> 5, pos = cx->memb[m] & 31;
        Line *L = &cx->lines[l];
        km[l] |= 1u << (L->n - 1 - pos);
        if (l == from) continue;               /* its patterns all agree there already */
        const uint64_t *mask = L->t->cm[pos][v];
        uint64_t *d = dom + L->off;
        for (int w = 0; w < L->t->W; w++) d[w] &= mask[w];
        cx->inq[l] = 1;
    }
}

/* Propagate to a fixpoint from the queued lines (cx->inq); 0 on a contradiction. The queue is
 * a scan over inq flags, lowest line first, repeated until none is set. */
static int propagate(Cx *cx, unsigned char *s) {
    uint64_t *dom = DOMS(s);
    uint32_t *km = KMASK(cx, s);
    unsigned char *st = SETTLED(cx, s);
    int again = 1;
    while (again) {
        again = 0;
        for (int l = 0; l < cx->NL; l++) {
            if (!cx->inq[l]) continue;
            cx->inq[l] = 0;
            const Line *L = &cx->lines[l];
            const Tables *t = L->t;
            uint64_t *d = dom + L->off;
            const uint32_t open = t->full & ~km[l];
            uint32_t seen0, seen1;
            if (!scan_domain(t, d, open, &seen0, &seen1)) {
                memset(cx->inq, 0, (size_t)cx->NL);   /* leave the flags clear for the next node */
                return 0;
            }
            const uint32_t ones = open & ~seen0;
            uint32_t forced = ones | (open & ~seen1);
            while (forced) {
                int bit = __builtin_ctz(forced);
                forced &= forced - 1;
                set_cell(cx, s, L->cells[L->n - 1 - bit], (ones >> bit) & 1, l);
                again = 1;
            }
            if (cx->win_distinct[L->win] && km[l] == t->full && !st[l]) {
                st[l] = 1;
                int w = 0;
                while (!d[w]) w++;
                const uint64_t bw = d[w] & (~d[w] + 1);
                const int first = cx->win_first[L->win] + (L->row ? 0 : L->n);
                for (int S = first; S < first + L->n; S++) {
                    uint64_t *ds = dom + cx->lines[S].off;
                    if (S != l && (ds[w] & bw)) {
                        ds[w] &= ~bw;
                        cx->inq[S] = 1;
                        again = 1;
                    }
                }
            }
        }
    }
    return 1;
}

/* Window k's rows in a complete state equal excluded grid e */
static int excluded(const Cx *cx, const unsigned char *s) {
    const uint64_t *dom = (const uint64_t *)s;
    for (int e = 0; e < cx->nex; e++) {
        int k = cx->ex_k[e], n = cx->win_n[k], same = 1;
        for (int r = 0; r < n && same; r++) {
            const Line *L = &cx->lines[cx->win_first[k] + r];
            same = settled_pattern(L, dom + L->off) == cx->ex_rows[e * MAXN + r];
        }
        if (same) return 1;
    }
    return 0;
}

static unsigned char *state_at(Cx *cx, int depth) {
    if (depth >= cx->depth_cap) {
        int cap = cx->depth_cap ? 2 * cx->depth_cap : 64;
        unsigned char **p = (unsigned char **)PyMem_Realloc(cx->stack, (size_t)cap * sizeof(*p));
        if (!p) { cx->oom = 1; return NULL; }
        for (int i = cx->depth_cap; i < cap; i++) p[i] = NULL;
        cx->stack = p;
        cx->depth_cap = cap;
    }
    if (!cx->stack[depth]) {
        if ((size_t)(depth + 1) * (cx->state_bytes + MAXP * sizeof(int)) > MAX_STACK_BYTES) {
            cx->stopped = cx->deep = 1;        /* deeper than memory allows: undecided, not a proof */
            return NULL;
        }
        cx->stack[depth] = (unsigned char *)PyMem_Malloc(cx->state_bytes + MAXP * sizeof(int));
        if (!cx->stack[depth]) { cx->oom = 1; return NULL; }
    }
    return cx->stack[depth];
}

/* The open line with the fewest patterns (lowest index on ties) among the lines of window
 * `scope`, or (scope < 0) of the distinct windows; -1 if all of them are settled. */
static int pick_line(const Cx *cx, const unsigned char *s, int scope) {
    const uint64_t *dom = DOMS(s);
    const uint32_t *km = KMASK(cx, s);
    int best_l = -1, best = INT_MAX;
    int lo = scope < 0 ? 0 : cx->win_first[scope];
    int hi = scope < 0 ? cx->NL : lo + 2 * cx->win_n[scope];
    for (int l = lo; l < hi; l++) {
        const Line *L = &cx->lines[l];
        if (km[l] == L->t->full || (scope < 0 && !cx->win_distinct[L->win])) continue;
        int c = 0;
        for (int w = 0; w < L->t->W && c < best; w++) c += __builtin_popcountll(dom[L->off + w]);
        if (c < best) { best = c; best_l = l; }
    }
    return best_l;
}

/* Line l of state s takes its pattern of rank j: every open cell set, the lines through them queued. */
static void put_pattern(Cx *cx, unsigned char *s, int l, int j) {
    const Line *L = &cx->lines[l];
    const uint16_t p = L->t->pats[j];
    for (int q = 0; q < L->n; q++) {
        const uint32_t b = 1u << (L->n - 1 - q);
        if (!(KMASK(cx, s)[l] & b)) set_cell(cx, s, L->cells[q], (p & b) ? 1 : 0, -1);
    }
}

/* The ranks of the patterns in line l's domain, ascending; their number. */
static int patterns(const Cx *cx, const unsigned char *s, int l, int *out) {
    const Line *L = &cx->lines[l];
    const uint64_t *d = DOMS(s) + L->off;
    int cnt = 0;
    for (int w = 0; w < L->t->W; w++)
        for (uint64_t x = d[w]; x; x &= x - 1) out[cnt++] = w * 64 + __builtin_ctzll(x);
    return cnt;
}

/* Depth-first search from state `depth`, branching on whole lines (the open line with the fewest
 * patterns, every pattern in turn). scope < 0: the completion itself: the distinct windows' lines
 * first, then the other windows' one window at a time, the first pattern tried drawn from the
 * seed; a complete assignment no excluded grid equals is the answer (cx->result). scope = k: a
 * probe of window k alone (its lines only, patterns in order): 1 as soon as window k is settled.
 * Returns 1 when done (found, or the probe succeeded), also when the node budget stopped it. */
static int dfs(Cx *cx, int depth, int scope) {
    const unsigned char *s = cx->stack[depth];
    int l = pick_line(cx, s, scope);
    for (int k = 0; scope < 0 && l < 0 && k < cx->K; k++)
        if (!cx->win_distinct[k]) l = pick_line(cx, s, k);
    if (l < 0) {
        if (scope >= 0) return 1;
        if (excluded(cx, s)) return 0;
        cx->found = 1;
        memcpy(cx->result, s, cx->state_bytes);
        return 1;
    }
    unsigned char *child = state_at(cx, depth + 1);
    if (!child) return 1;
    int *pats = (int *)(cx->stack[depth] + cx->state_bytes);      /* this level's, off the C stack */
    const int cnt = patterns(cx, s, l, pats);
    const int start = scope < 0 ? (int)(splitmix(&cx->rng) % (uint64_t)cnt) : 0;
    for (int i = 0; i < cnt; i++) {
        if (cx->nodes >= cx->max_nodes) { cx->stopped = 1; return 1; }
        cx->nodes++;
        memcpy(child, s, cx->state_bytes);
        put_pattern(cx, child, l, pats[(start + i) % cnt]);
        if (propagate(cx, child) && dfs(cx, depth + 1, scope)) return 1;
        if (cx->oom) return 1;
    }
    return 0;
}

/* One probe from the root: window k alone with the shared cells of line l set as in pattern p,
 * within PROBE_NODES nodes (more is "not refuted"); 1 unless refuted. */
static int probe_ok(Cx *cx, int l, uint32_t smask, uint16_t p) {
    const Line *L = &cx->lines[l];
    unsigned char *child = state_at(cx, 1);
    if (!child) return 1;
    memcpy(child, cx->stack[0], cx->state_bytes);
    for (int q = 0; q < L->n; q++) {
        const uint32_t b = 1u << (L->n - 1 - q);
        if ((smask & b) && !(KMASK(cx, child)[l] & b)) set_cell(cx, child, L->cells[q], (p & b) ? 1 : 0, -1);
    }
    const long long cap = cx->max_nodes;
    cx->max_nodes = cx->nodes + PROBE_NODES < cap ? cx->nodes + PROBE_NODES : cap;
    cx->nodes++;
    int ok = propagate(cx, child) && dfs(cx, 1, L->win);
    if (cx->stopped && cx->max_nodes < cap) { cx->stopped = 0; ok = 1; }
    cx->max_nodes = cap;
    return ok;
}

/* Singleton consistency at the root where a window without distinct lines meets the distinct
 * ones: for each of its lines holding two or more cells of a distinct window, each value those
 * shared cells can take is probed (window k alone, with them set), and the line's patterns
 * showing a refuted value are dropped. The completion's search then never puts on a distinct
 * window an edge its neighbour cannot take, which is where a plain search thrashes: each of the
 * square's many grids failing in the neighbour for the same reason. 0 if the root is refuted. */
static int root_probes(Cx *cx) {
    unsigned char *root = cx->stack[0];
    int pats[MAXP];
    for (int l = 0; l < cx->NL; l++) {
        const Line *L = &cx->lines[l];
        if (cx->win_distinct[L->win] || KMASK(cx, root)[l] == L->t->full) continue;
        uint32_t smask = 0;
        for (int q = 0; q < L->n; q++)
            if (cx->own[L->cells[q]]) smask |= 1u << (L->n - 1 - q);
        smask &= ~KMASK(cx, root)[l];
        if (__builtin_popcount(smask) < 2) continue;
        const int cnt = patterns(cx, root, l, pats);
        int dropped = 0;
        for (int i = 0; i < cnt; i++) {
            if (pats[i] < 0) continue;
            const uint16_t p = L->t->pats[pats[i]];
            const int ok = probe_ok(cx, l, smask, p);
            if (cx->oom || cx->stopped) return 1;
            for (int j = i; j < cnt; j++) {             /* the same shared values: settled too */
                if (pats[j] < 0 || ((L->t->pats[pats[j]] ^ p) & smask)) continue;
                if (!ok) DOMS(root)[L->off + pats[j] / 64] &= ~(1ull << (pats[j] % 64));
                pats[j] = -1;
            }
            dropped |= !ok;
        }
        if (dropped) {
            cx->inq[l] = 1;
            if (!propagate(cx, root)) return 0;
        }
    }
    return 1;
}

/* The completion's search in attempts of growing node budgets (RESTART_NODES, doubling), each
 * drawing its own first patterns from the seed's stream: a feasible problem whose first search
 * went down a barren branch is usually found at once by the next. An attempt that ends within its
 * budget is complete (found, or a proof that nothing exists); the caller's max_nodes caps them all. */
static void restarts(Cx *cx) {
    const long long cap = cx->max_nodes;
    for (long long budget = RESTART_NODES, a = 0;; a++) {
        cx->max_nodes = cap;
        cx->stopped = 0;
        if (a == 1 && (!root_probes(cx) || cx->stopped || cx->oom)) break;   /* refuted, or out of nodes */
        cx->max_nodes = budget < cap - cx->nodes ? cx->nodes + budget : cap;
        cx->stopped = 0;
        dfs(cx, 0, -1);
        if (cx->found || cx->oom || cx->deep || !cx->stopped || cx->max_nodes == cap) break;
        if (budget < LLONG_MAX / 2) budget *= 2;
    }
    cx->max_nodes = cap;
}

/* ---------------------------------------------------------------- Python glue */

static void cx_free(Cx *cx) {
    for (int i = 0; i < cx->depth_cap; i++) PyMem_Free(cx->stack[i]);
    PyMem_Free(cx->stack);
    PyMem_Free(cx->lines);
    PyMem_Free(cx->win_n);
    PyMem_Free(cx->win_first);
    PyMem_Free(cx->win_distinct);
    PyMem_Free(cx->memb_first);
    PyMem_Free(cx->memb);
    PyMem_Free(cx->ucells);
    PyMem_Free(cx->own);
    PyMem_Free(cx->inq);
    PyMem_Free(cx->ex_k);
    PyMem_Free(cx->ex_rows);
    PyMem_Free(cx->result);
}

static int bad(const char *msg) {
    PyErr_SetString(PyExc_ValueError, msg);
    return -1;
}

/* own[c]: region cell c lies in a distinct window; -1 if out of memory. */
static int own_cells(Cx *cx) {
    cx->own = PyMem_Calloc((size_t)cx->H * cx->Wd, 1);
    if (!cx->own) { PyErr_NoMemory(); return -1; }
    for (int l = 0; l < cx->NL; l++)
        if (cx->win_distinct[cx->lines[l].win])
            for (int i = 0; i < cx->lines[l].n; i++) cx->own[cx->lines[l].cells[i]] = 1;
    return 0;
}

/* The windows, their lines and every cell's memberships; -1 with ValueError/MemoryError set. */
static int read_windows(Cx *cx, PyObject *pw) {
    PyObject *fast = PySequence_Fast(pw, "windows must be a sequence of (x, y, n, distinct)");
    if (!fast) return -1;
    Py_ssize_t K = PySequence_Fast_GET_SIZE(fast);
    if (K < 1 || K > MAX_WINDOWS) { Py_DECREF(fast); return bad("windows: between 1 and 256 windows"); }
    cx->K = (int)K;
    cx->win_n = PyMem_Calloc(K, sizeof(int));
    cx->win_first = PyMem_Calloc(K, sizeof(int));
    cx->win_distinct = PyMem_Calloc(K, sizeof(int));
    int *wx = PyMem_Calloc(K, sizeof(int)), *wy = PyMem_Calloc(K, sizeof(int));
    int rc = -1;
    if (!cx->win_n || !cx->win_first || !cx->win_distinct || !wx || !wy) { PyErr_NoMemory(); goto out; }
    cx->NL = 0;
    for (Py_ssize_t k = 0; k < K; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, k);
        int x, y, n, dist;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iiip", &x, &y, &n, &dist)) {
            PyErr_Clear();
            bad("every window must be a tuple (x, y, n, distinct) of ints");
            goto out;
        }
        if (!checked_tables(n)) goto out;
        if (x < 0 || y < 0 || x > cx->Wd - n || y > cx->H - n) { bad("a window lies outside the region"); goto out; }
        wx[k] = x; wy[k] = y; cx->win_n[k] = n; cx->win_distinct[k] = dist;
        cx->win_first[k] = cx->NL;
        cx->NL += 2 * n;
    }
    cx->lines = PyMem_Calloc(cx->NL, sizeof(Line));
    size_t ncell = (size_t)cx->H * cx->Wd;
    cx->memb_first = PyMem_Calloc(ncell + 1, sizeof(int32_t));
    cx->memb = PyMem_Calloc((size_t)cx->NL * MAXN, sizeof(int32_t));
    if (!cx->lines || !cx->memb_first || !cx->memb) { PyErr_NoMemory(); goto out; }
    cx->D = 0;
    for (int k = 0; k < cx->K; k++) {
        const int n = cx->win_n[k];
        const Tables *t = tables_for(n);
        for (int j = 0; j < 2 * n; j++) {
            Line *L = &cx->lines[cx->win_first[k] + j];
            L->t = t; L->n = n; L->win = k; L->row = j < n; L->off = cx->D;
            cx->D += t->W;
            for (int i = 0; i < n; i++) {
                int r = L->row ? wy[k] + j : wy[k] + i, c = L->row ? wx[k] + i : wx[k] + j - n;
                L->cells[i] = r * cx->Wd + c;
                cx->memb_first[L->cells[i] + 1]++;
            }
        }
    }
    for (size_t c = 0; c < ncell; c++) cx->memb_first[c + 1] += cx->memb_first[c];
    int32_t *fill = PyMem_Calloc(ncell, sizeof(int32_t));
    if (!fill) { PyErr_NoMemory(); goto out; }
    cx->NU = 0;
    for (int l = 0; l < cx->NL; l++)
        for (int i = 0; i < cx->lines[l].n; i++) {
            int32_t c = cx->lines[l].cells[i];
            cx->memb[cx->memb_first[c] + fill[c]++] = (l << 5) | i;
        }
    for (size_t c = 0; c < ncell; c++) cx->NU += fill[c] > 0;
    cx->ucells = PyMem_Calloc(cx->NU ? cx->NU : 1, sizeof(int32_t));
    if (!cx->ucells) { PyMem_Free(fill); PyErr_NoMemory(); goto out; }
    for (size_t c = 0, u = 0; c < ncell; c++)
        if (fill[c]) cx->ucells[u++] = (int32_t)c;
    PyMem_Free(fill);
    if (own_cells(cx) < 0) goto out;
    rc = 0;
out:
    PyMem_Free(wx);
    PyMem_Free(wy);
    Py_DECREF(fast);
    return rc;
}

/* The excluded grids as row ints; -1 with ValueError set. */
static int read_exclude(Cx *cx, PyObject *pe) {
    PyObject *fast = PySequence_Fast(pe, "exclude must be a sequence of (k, grid bytes)");
    if (!fast) return -1;
    Py_ssize_t E = PySequence_Fast_GET_SIZE(fast);
    int rc = -1;
    cx->nex = (int)E;
    cx->ex_k = PyMem_Calloc(E ? E : 1, sizeof(int));
    cx->ex_rows = PyMem_Calloc((E ? E : 1) * MAXN, sizeof(uint16_t));
    if (!cx->ex_k || !cx->ex_rows) { PyErr_NoMemory(); goto out; }
    for (Py_ssize_t e = 0; e < E; e++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, e);
        int k;
        Py_buffer g;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iy*", &k, &g)) {
            PyErr_Clear();
            bad("every excluded grid must be a tuple (k, bytes)");
            goto out;
        }
        int n = (k >= 0 && k < cx->K) ? cx->win_n[k] : -1;
        int ok = n > 0 && g.len == (Py_ssize_t)n * n;
        for (int r = 0; ok && r < n; r++) {
            uint16_t row = 0;
            for (int c = 0; c < n; c++) {
                unsigned char b = ((const unsigned char *)g.buf)[r * n + c];
                if (b > 1) ok = 0;
                row = (uint16_t)((row << 1) | (b & 1));
            }
            cx->ex_rows[e * MAXN + r] = row;
        }
        PyBuffer_Release(&g);
        if (!ok) { bad("an excluded grid needs a window index and n*n bytes of 0/1"); goto out; }
        cx->ex_k[e] = k;
    }
    rc = 0;
out:
    Py_DECREF(fast);
    return rc;
}

/* The root state: full domains, the fixed cells set, propagated; 0 if that is already a contradiction. */
static int root_state(Cx *cx, unsigned char *s, const unsigned char *vals, const unsigned char *known) {
    uint64_t *dom = DOMS(s);
    for (int l = 0; l < cx->NL; l++) {
        const Line *L = &cx->lines[l];
        full_domain(L->t, dom + L->off);
        KMASK(cx, s)[l] = 0;
        SETTLED(cx, s)[l] = 0;
        cx->inq[l] = 1;
    }
    for (int u = 0; u < cx->NU; u++) {
        int32_t c = cx->ucells[u];
        if (known[c]) set_cell(cx, s, c, vals[c], -1);
    }
    return propagate(cx, s);
}

PyObject *py_complete_windows(PyObject *self, PyObject *args) {
    int H, Wd;
    Py_buffer bv, bk;
    PyObject *pw, *pe;
    unsigned long long seed;
    long long max_nodes;
    (void)self;
    if (!PyArg_ParseTuple(args, "iiy*y*OOKL", &H, &Wd, &bv, &bk, &pw, &pe, &seed, &max_nodes)) return NULL;
    Cx cx;
    memset(&cx, 0, sizeof(cx));
    PyObject *ret = NULL;
    const unsigned char *vals = bv.buf, *known = bk.buf;
    if (H < 1 || Wd < 1 || (long long)H * Wd > MAX_CELLS) { bad("the region must be 1..1048576 cells"); goto out; }
    if (bv.len != (Py_ssize_t)H * Wd || bk.len != (Py_ssize_t)H * Wd) {
        bad("values and known must hold H*W bytes");
        goto out;
    }
    for (Py_ssize_t i = 0; i < bv.len; i++)
        if (vals[i] > 1 || known[i] > 1 || (vals[i] && !known[i])) {
            bad(vals[i] > 1 || known[i] > 1 ? "values and known must be 0/1 bytes"
                                            : "a value of 1 on a free cell (inconsistent fixed cells)");
            goto out;
        }
    cx.H = H;
    cx.Wd = Wd;
    if (read_windows(&cx, pw) < 0 || read_exclude(&cx, pe) < 0) goto out;
    cx.kmask_at = (size_t)cx.D * sizeof(uint64_t);
    cx.settled_at = cx.kmask_at + (size_t)cx.NL * sizeof(uint32_t);
    cx.state_bytes = (cx.settled_at + cx.NL + 7) & ~(size_t)7;
    cx.inq = PyMem_Calloc(cx.NL, 1);
    cx.result = PyMem_Malloc(cx.state_bytes);
    if (!cx.inq || !cx.result) { PyErr_NoMemory(); goto out; }
    cx.rng = seed;
    cx.max_nodes = max_nodes < 0 ? LLONG_MAX : max_nodes;
    unsigned char *root = state_at(&cx, 0);
    if (!root) { PyErr_NoMemory(); goto out; }
    cx.nodes = 1;
    if (root_state(&cx, root, vals, known)) restarts(&cx);
    if (cx.oom) { PyErr_NoMemory(); goto out; }
    if (!cx.found) {
        ret = Py_BuildValue("(iOL)", cx.stopped ? -1 : 0, Py_None, cx.nodes);
        goto out;
    }
    PyObject *grid = PyBytes_FromStringAndSize(NULL, bv.len);
    if (!grid) goto out;
    unsigned char *g = (unsigned char *)PyBytes_AS_STRING(grid);
    memcpy(g, vals, bv.len);
    for (int k = 0; k < cx.K; k++)
        for (int r = 0; r < cx.win_n[k]; r++) {
            const Line *L = &cx.lines[cx.win_first[k] + r];
            uint16_t p = settled_pattern(L, DOMS(cx.result) + L->off);
            for (int i = 0; i < L->n; i++) g[L->cells[i]] = (p >> (L->n - 1 - i)) & 1;
        }
    ret = Py_BuildValue("(iNL)", 1, grid, cx.nodes);
out:
    cx_free(&cx);
    PyBuffer_Release(&bv);
    PyBuffer_Release(&bk);
    return ret;
}
