/* engine._kernel: the C twin of engine/reference.py (counter, backbone) and
 * engine/ladder.py (rate), for speed. This file: per-n tables, row parsing and
 * the module; see _count.c and _ladder.c.
 *
 * Same model, same rules, same branching order, same node definition as the
 * Python reference (read its docstring first); the tests check both report
 * identical counts, solutions and node counts on a fixed instance set.
 *
 * Layout: 2n lines (rows 0..n-1, columns n..2n-1). A domain is W = ceil(P/64)
 * uint64 words over the P valid patterns of side n (ascending ints). Known
 * cells per line are kept as a mask in line-int convention (bit n-1-i =
 * position i). To find the cells a domain agrees on we walk its patterns,
 * OR-ing them and their complements until every position has shown both
 * values; only forced positions need the whole domain. The search
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
 *   thin_rows(...) / thin_ladder(...): the thinning loops (_count.c, _ladder.c)
 *   fit_lines(n, must0, must1) -> [the valid lines with no bit of must0 and every bit of
 *       must1, ascending]: generator.solution's row filter (no numpy on the generate path)
 *   random_attempt(n, stream, limit) -> rows or None: generator.solution._attempt (_solution.c)
 *   rate_rows(n, vals, known)
 *       -> (ladder, bifurcations, used_unique, needs_unique, needs_bifurcation,
 *           solution rows or None, filled): engine.ladder.rate (see _ladder.c)
 */
#include "_kernel.h"
#include "../tilelib/_twin.h"

static Tables *TAB[MAXN + 1];

static int runs_ok(uint32_t v, int n) {
    uint32_t inv = v ^ ((1u << n) - 1);
    return !(v & (v >> 1) & (v >> 2)) && !(inv & (inv >> 1) & (inv >> 2));
}

Tables *tables_for(int n) {
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
    if (n <= LINEDOM_MAXN) {
        t->linedom = (uint64_t *)PyMem_Malloc(sizeof(uint64_t) << (2 * n));
        if (!t->linedom) { PyMem_Free(t->index); PyMem_Free(t); return NULL; }
        for (uint32_t k = 0; k < (1u << n); k++)
            for (uint32_t v = 0; v < (1u << n); v++) line_domain(t, v, k, &t->linedom[(k << n) | v]);
    }
    TAB[n] = t;
    return t;
}

const Tables *checked_tables(int n) {
    if (n < 2 || n > MAXN || n % 2) {
        PyErr_Format(PyExc_ValueError, "n must be even in 2..%d, got %d", MAXN, n);
        return NULL;
    }
    const Tables *t = tables_for(n);
    if (!t) PyErr_NoMemory();
    return t;
}

int valid_grid(const Tables *t, const uint32_t *rows) {
    const int n = t->n;
    uint32_t cols[MAXN] = {0};
    for (int r = 0; r < n; r++) {
        if (rows[r] >> n || t->index[rows[r]] < 0) return 0;
        for (int c = 0; c < n; c++) cols[c] |= ((rows[r] >> (n - 1 - c)) & 1u) << (n - 1 - r);
    }
    for (int i = 0; i < n; i++) {
        if (t->index[cols[i]] < 0) return 0;
        for (int j = 0; j < i; j++)
            if (rows[i] == rows[j] || cols[i] == cols[j]) return 0;
    }
    return 1;
}

int parse_rows(PyObject *seq, int n, uint32_t *out, const char *what) {
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
            PyErr_Clear();   /* negative, huge or not an int: one error type for callers */
            PyErr_Format(PyExc_ValueError, "%s row %d is not an int of %d bits", what, i, n);
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (uint32_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *py_fit_lines(PyObject *self, PyObject *args) {
    int n;
    unsigned long must0, must1;
    (void)self;
    if (!PyArg_ParseTuple(args, "ikk", &n, &must0, &must1)) return NULL;
    const Tables *t = checked_tables(n);
    if (!t) return NULL;
    int k = 0;
    for (int j = 0; j < t->P; j++)
        if (!(t->pats[j] & must0) && (t->pats[j] & must1) == must1) k++;
    PyObject *out = PyList_New(k);
    if (!out) return NULL;
    k = 0;
    for (int j = 0; j < t->P; j++) {
        uint32_t p = t->pats[j];
        if ((p & must0) || (p & must1) != must1) continue;
        PyObject *v = PyLong_FromUnsignedLong(p);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, v);
    }
    return out;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* generator.thin.removal_order's sort: the non-corner cells r*n + c, each keyed by the next 4
 * bytes of ``keys`` (big-endian), ordered by (key, cell). */
static PyObject *py_removal_order(PyObject *self, PyObject *args) {
    int n;
    Py_buffer keys;
    (void)self;
    if (!PyArg_ParseTuple(args, "iy*", &n, &keys)) return NULL;
    if (!checked_tables(n)) { PyBuffer_Release(&keys); return NULL; }
    const int m = n * n - 4;
    if (keys.len != 4 * (Py_ssize_t)m) {
        PyErr_Format(PyExc_ValueError, "removal_order: %d cells need %d key bytes, got %zd", m, 4 * m, keys.len);
        PyBuffer_Release(&keys);
        return NULL;
    }
    uint64_t buf[MAXN * MAXN];
    const unsigned char *k = (const unsigned char *)keys.buf;
    int j = 0;
    for (int i = 0; i < n * n; i++) {
        if (i == 0 || i == n - 1 || i == n * (n - 1) || i == n * n - 1) continue;
        const unsigned char *b = k + 4 * j;
        uint32_t key = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
        buf[j++] = ((uint64_t)key << 32) | (uint32_t)i;
    }
    PyBuffer_Release(&keys);
    qsort(buf, (size_t)m, sizeof buf[0], cmp_u64);
    PyObject *out = PyList_New(m);
    if (!out) return NULL;
    for (j = 0; j < m; j++) {
        PyObject *v = PyLong_FromLong((long)(buf[j] & 0xffffffffu));
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, j, v);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"rate_rows", py_rate_rows, METH_VARARGS,
     "rate_rows(n, vals, known) -> (ladder, bifurcations, used_unique, needs_unique, needs_bifurcation,"
     " solution rows or None, filled): engine.ladder.rate in C"},
    {"count_rows", (PyCFunction)(void (*)(void))py_count_rows, METH_VARARGS | METH_KEYWORDS,
     "count_rows(n, vals, known, k=2, distinct=True, keep=k, max_nodes=-1, find=False) -> (count or -1, [row tuples], nodes)"},
    {"backbone_rows", (PyCFunction)(void (*)(void))py_backbone_rows, METH_VARARGS | METH_KEYWORDS,
     "backbone_rows(n, vals, known, distinct=True) -> (no_solution, value rows, known rows, nodes)"},
    {"thin_rows", py_thin_rows, METH_VARARGS,
     "thin_rows(n, solution, known, order, m_max, seam_mask, group_b, group_room, max_nodes) -> "
     "(known rows, [solution row tuples], counts, nodes) or None: generator.thin's fast method in C"},
    {"techniques", py_techniques, METH_NOARGS,
     "techniques() -> ((level, name), ...): the ladder's techniques in the order the C solve tries them"},
    {"thin_ladder", py_thin_ladder, METH_VARARGS,
     "thin_ladder(n, solution, known, order, levels) -> known rows or None: remove givens in order while "
     "the standard solve with levels 1..levels still solves (Unruly's rule)"},
    {"fit_lines", py_fit_lines, METH_VARARGS,
     "fit_lines(n, must0, must1) -> [valid n-bit lines p with p & must0 == 0 and p & must1 == must1, ascending]"},
    {"removal_order", py_removal_order, METH_VARARGS,
     "removal_order(n, keys) -> the non-corner cells r*n + c ordered by (key, cell), cell i's key the "
     "next 4 bytes of keys, big-endian: generator.thin.removal_order's sort"},
    {"random_attempt", py_random_attempt, METH_VARARGS,
     "random_attempt(n, stream, limit) -> row ints of a random valid grid, or None past `limit` placed rows: "
     "generator.solution._attempt, draw for draw (see _solution.c)"},
    {"complete_windows", py_complete_windows, METH_VARARGS,
     "complete_windows(H, W, values, known, windows, exclude, seed, max_nodes) -> (status, grid bytes or None, "
     "nodes): a completion of square windows of a region by line domains (see _complete.c)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "engine._kernel",
    "Line-domain Takuzu counter (C twin of engine.reference; see engine/_kernel.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__kernel(void) { return twin_stamp(PyModule_Create(&moddef)); }
