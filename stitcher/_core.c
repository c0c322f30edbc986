/* stitcher/_core.c: the module, the board, the stream draw and choose() (see _core.h).
 *
 * Python API (all twins of Python code that stays the reference; tests check both agree):
 *   Board(values, known, holders, G)            the board.Board buffers (G*G uint8 each)
 *     .constraint(x, y, n) -> (masks, values)   board.Board.constraint
 *     .place(x, y, n, edges) -> bool            False = seam conflict, nothing written
 *     .remove(x, y, n)                          board.Board.remove
 *   Table(...)                                  see _index.c
 *   Checker(...)                                see _check.c
 *   randbelow(stream, n) -> int                 tilelib.rng.Stream.randbelow, same bytes consumed
 *   choose(table, masks, values, m1, known, stream, check, tries, best_of, levels=0)
 *       -> None or (key, preferred, passed): place.choose over the candidates of
 *          index.MemoryIndex.lookup (of the ladder levels in the mask ``levels``, 0: any);
 *          check is None or a Checker.
 *
 * The draws read the stream as tilelib/_stream.h says, so it advances exactly as in Python.
 */
#include "_core.h"
#include "../tilelib/_twin.h"
#include "../tilelib/_stream.h"

extern PyMethodDef check_functions[];

/* ---- board ---- */

static int board_init(BoardObject *b, PyObject *args, PyObject *kw) {
    PyObject *ov, *ok, *oh;
    int G;
    if (!PyArg_ParseTuple(args, "OOOi", &ov, &ok, &oh, &G)) return -1;
    if (b->v) { PyErr_SetString(PyExc_TypeError, "Board is already initialised"); return -1; }
    if (G <= 0) { PyErr_SetString(PyExc_ValueError, "G must be positive"); return -1; }
    PyObject *objs[3] = {ov, ok, oh};
    Py_buffer *views[3] = {&b->bv, &b->bk, &b->bh};
    for (int q = 0; q < 3; q++) {
        if (PyObject_GetBuffer(objs[q], views[q], PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) goto fail;
        if (views[q]->itemsize != 1 || views[q]->len != (Py_ssize_t)G * G) {
            PyBuffer_Release(views[q]);
            PyErr_SetString(PyExc_ValueError, "board buffers must be G*G writable uint8");
            goto fail;
        }
        continue;
    fail:
        for (int r = 0; r < q; r++) PyBuffer_Release(views[r]);
        return -1;
    }
    b->v = b->bv.buf; b->k = b->bk.buf; b->h = b->bh.buf;
    b->G = G;
    return 0;
}

static void board_dealloc(BoardObject *b) {
    if (b->v) { PyBuffer_Release(&b->bv); PyBuffer_Release(&b->bk); PyBuffer_Release(&b->bh); }
    Py_TYPE(b)->tp_free((PyObject *)b);
}

/* flat offset of cell q (0..n-1) of side s of the window at (x0, y0) */
static inline size_t cell(int G, int x0, int y0, int n, int s, int q) {
    switch (s) {
    case 0: return (size_t)y0 * G + x0 + q;
    case 1: return (size_t)(y0 + q) * G + x0 + n - 1;
    case 2: return (size_t)(y0 + n - 1) * G + x0 + q;
    default: return (size_t)(y0 + q) * G + x0;
    }
}

void board_constraint(const BoardObject *b, int x0, int y0, int n, uint32_t masks[4], uint32_t vals[4]) {
    for (int s = 0; s < 4; s++) {
        uint32_t m = 0, v = 0;
        for (int q = 0; q < n; q++) {
            size_t c = cell(b->G, x0, y0, n, s, q);
            uint32_t kb = b->k[c] & 1;
            m = m << 1 | kb;
            v = v << 1 | (b->v[c] & kb);
        }
        masks[s] = m;
        vals[s] = v;
    }
}

static int window_args(BoardObject *b, PyObject *args, int *x0, int *y0, int *n, PyObject **edges) {
    if (!b->v) { PyErr_SetString(PyExc_ValueError, "Board is not initialised"); return -1; }
    if (edges ? !PyArg_ParseTuple(args, "iiiO", x0, y0, n, edges) : !PyArg_ParseTuple(args, "iii", x0, y0, n))
        return -1;
    if (*n < 2 || *n > CMAXN || *x0 < 0 || *y0 < 0 || *x0 + *n > b->G || *y0 + *n > b->G) {
        PyErr_Format(PyExc_ValueError, "window (%d, %d, n=%d) is not inside the board", *x0, *y0, *n);
        return -1;
    }
    return 0;
}

static PyObject *quad(const uint32_t a[4]) {
    return Py_BuildValue("(IIII)", a[0], a[1], a[2], a[3]);
}

static PyObject *board_py_constraint(BoardObject *b, PyObject *args) {
    int x0, y0, n;
    uint32_t m[4], v[4];
    if (window_args(b, args, &x0, &y0, &n, NULL) < 0) return NULL;
    board_constraint(b, x0, y0, n, m, v);
    PyObject *pm = quad(m), *pv = pm ? quad(v) : NULL;
    if (!pv) { Py_XDECREF(pm); return NULL; }
    return Py_BuildValue("(NN)", pm, pv);
}

static PyObject *board_py_place(BoardObject *b, PyObject *args) {
    int x0, y0, n;
    PyObject *oe;
    uint32_t e[4];
    if (window_args(b, args, &x0, &y0, &n, &oe) < 0 || parse_quad(oe, e, "edges") < 0) return NULL;
    for (int s = 0; s < 4; s++)
        if (e[s] >> n) { PyErr_SetString(PyExc_ValueError, "edge wider than n bits"); return NULL; }
    const int G = b->G;
    for (int s = 0; s < 4; s++)             /* the seam check, against the board before writing */
        for (int q = 0; q < n; q++) {
            size_t c = cell(G, x0, y0, n, s, q);
            if (b->k[c] && ((b->v[c] ^ (e[s] >> (n - 1 - q))) & 1)) Py_RETURN_FALSE;
        }
    for (int s = 0; s < 4; s++)             /* in numpy's order: a corner takes its last write */
        for (int q = 0; q < n; q++) {
            size_t c = cell(G, x0, y0, n, s, q);
            b->v[c] = (uint8_t)((e[s] >> (n - 1 - q)) & 1);
            b->k[c] = 1;
        }
    for (int s = 0; s < 4; s++)             /* each distinct border cell once (corners are listed twice) */
        for (int q = (s == 1 || s == 3); q < n - (s == 1 || s == 3); q++) b->h[cell(G, x0, y0, n, s, q)]++;
    Py_RETURN_TRUE;
}

static PyObject *board_py_remove(BoardObject *b, PyObject *args) {
    int x0, y0, n;
    if (window_args(b, args, &x0, &y0, &n, NULL) < 0) return NULL;
    for (int s = 0; s < 4; s++)
        for (int q = (s == 1 || s == 3); q < n - (s == 1 || s == 3); q++) {
            size_t c = cell(b->G, x0, y0, n, s, q);
            b->h[c]--;
            b->k[c] = b->h[c] > 0;
        }
    Py_RETURN_NONE;
}

static PyMethodDef board_methods[] = {
    {"constraint", (PyCFunction)board_py_constraint, METH_VARARGS, "constraint(x, y, n) -> (masks, values)"},
    {"place", (PyCFunction)board_py_place, METH_VARARGS, "place(x, y, n, edges) -> False on a seam conflict"},
    {"remove", (PyCFunction)board_py_remove, METH_VARARGS, "remove(x, y, n)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject BoardType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stitcher._core.Board",
    .tp_basicsize = sizeof(BoardObject),
    .tp_dealloc = (destructor)board_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Board(values, known, holders, G): C view of board.Board's buffers",
    .tp_methods = board_methods,
    .tp_init = (initproc)board_init,
    .tp_new = PyType_GenericNew,
};

/* ---- the stream (tilelib/_stream.h) ---- */

static PyObject *py_randbelow(PyObject *mod, PyObject *args) {
    PyObject *stream;
    unsigned long long n;
    uint64_t v;
    if (!PyArg_ParseTuple(args, "OK", &stream, &n)) return NULL;
    if (n == 0 || n > (1ull << 56)) { PyErr_SetString(PyExc_ValueError, "randbelow needs 0 < n <= 2**56"); return NULL; }
    if (stream_randbelow(stream, n, &v) < 0) return NULL;
    return PyLong_FromUnsignedLongLong(v);
}

/* ---- choose ---- */

static inline uint64_t pool_word(const TableObject *t, const uint64_t *pin, int pass, int w) {
    return t->acc[w] & (pass ? ~pin[w] : pin[w]);
}

/* rank of the idx-th member (0-based) of the pool whose prefix counts are in t->prefix */
static int pool_select(const TableObject *t, const uint64_t *pin, int pass, int32_t idx) {
    int lo = 0, hi = t->W;   /* the last w with prefix[w] <= idx */
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (t->prefix[mid] <= idx) lo = mid; else hi = mid;
    }
    uint64_t x = pool_word(t, pin, pass, lo);
    for (int32_t r = idx - t->prefix[lo]; r > 0; r--) x &= x - 1;
    return lo * 64 + __builtin_ctzll(x);
}

/* The extras of the pool (t->x_pool) and their positions in the merged order (t->x_mpos): an
 * extra inserted at rank q follows the pool's ranked members below q and the pool's earlier
 * extras. Needs t->prefix of the pool. Returns how many. */
static int pool_extras(TableObject *t, const uint64_t *pin, int pass, int known) {
    int nx = 0;
    for (int h = 0; h < t->nhit; h++) {
        int32_t q = t->x_hit[h];
        if (table_extra_pin(t, q, known) == pass) continue;   /* pass 0 wants the bit set */
        int64_t ins = 16 * (int64_t)t->x_ins[q >> 4];   /* before the entries of that rank */
        int32_t w = (int32_t)(ins >> 6), below;
        if (w >= t->W) below = t->prefix[t->W];
        else below = t->prefix[w] + __builtin_popcountll(pool_word(t, pin, pass, w) & ((1ull << (ins & 63)) - 1));
        t->x_pool[nx] = q;
        t->x_mpos[nx] = below + nx;
        nx++;
    }
    return nx;
}

typedef struct { int64_t pos, val; } Swap;

static PyObject *py_choose(PyObject *mod, PyObject *args) {
    PyObject *otab, *om, *ov, *stream, *check;
    int m1, known, tries, best_of;
    unsigned int levels = 0;
    uint32_t masks[4], vals[4];
    if (!PyArg_ParseTuple(args, "O!OOpiOOii|I", &TableType, &otab, &om, &ov, &m1, &known, &stream, &check,
                          &tries, &best_of, &levels))
        return NULL;
    TableObject *t = (TableObject *)otab;
    CheckerObject *chk = NULL;
    if (check != Py_None) {
        if (!PyObject_TypeCheck(check, &CheckerType)) {
            PyErr_SetString(PyExc_TypeError, "check must be a stitcher._core.Checker or None");
            return NULL;
        }
        chk = (CheckerObject *)check;
    }
    if (known < 0 || known > 15) { PyErr_SetString(PyExc_ValueError, "known is a side mask 0..15"); return NULL; }
    if (tries < 1) { PyErr_SetString(PyExc_ValueError, "tries must be >= 1"); return NULL; }
    if (parse_quad(om, masks, "masks") < 0 || parse_quad(ov, vals, "values") < 0) return NULL;
    if (table_lookup(t, masks, vals, m1, levels) < 0) return NULL;
    const int W = t->W;
    const uint64_t *pin = t->pin + (size_t)known * W;
    int64_t cnt[2] = {0, 0};
    for (int w = 0; w < W; w++) {
        cnt[0] += __builtin_popcountll(t->acc[w] & pin[w]);
        cnt[1] += __builtin_popcountll(t->acc[w] & ~pin[w]);
    }
    for (int h = 0; h < t->nhit; h++) cnt[!table_extra_pin(t, t->x_hit[h], known)]++;
    if (cnt[0] + cnt[1] == 0) Py_RETURN_NONE;
    int64_t first = -1, budget = tries;
    int first_pref = 0;
    Swap small[64], *moved = small;
    if (tries > 64 && !(moved = PyMem_Malloc(sizeof(Swap) * (size_t)tries))) return PyErr_NoMemory();
    PyObject *res = NULL;
    for (int pass = 0; pass < 2; pass++) {
        int64_t m = cnt[pass];
        if (budget <= 0 || m == 0) continue;
        int32_t acc = 0;
        for (int w = 0; w < W; w++) { t->prefix[w] = acc; acc += __builtin_popcountll(pool_word(t, pin, pass, w)); }
        t->prefix[W] = acc;
        int nx = pool_extras(t, pin, pass, known);
        int64_t limit = budget < m ? budget : m, best = -1;
        int nmoved = 0, best_score = 0, passed = 0;
        for (int64_t k = 0; k < limit; k++) {
            uint64_t d;
            if (stream_randbelow(stream, (uint64_t)(m - k), &d) < 0) goto out;
            int64_t j = k + (int64_t)d, vj = j, vk = k;
            int at = -1;
            for (int q = 0; q < nmoved; q++) {
                if (moved[q].pos == j) { vj = moved[q].val; at = q; }
                if (moved[q].pos == k) vk = moved[q].val;
            }
            if (at < 0) { at = nmoved++; moved[at].pos = j; }
            moved[at].val = vk;
            int64_t key = -1;
            int32_t before = 0;   /* extras of the pool merged before position vj */
            for (int q = 0; q < nx && key < 0; q++) {
                if (t->x_mpos[q] == vj) key = table_extra_key(t, t->x_pool[q]);
                else if (t->x_mpos[q] < vj) before++;
                else break;
            }
            if (key < 0) key = table_rank_key(t, pool_select(t, pin, pass, (int32_t)vj - before));
            budget--;
            if (first < 0) { first = key; first_pref = pass == 0; }
            if (!chk) { res = Py_BuildValue("(LOO)", (long long)key, pass ? Py_False : Py_True, Py_True); goto out; }
            if (checker_ready(chk) < 0) goto out;
            uint32_t e[4];
            table_edges(t, key, e);
            int sc = checker_score(chk, e);
            if (sc > 0) {
                passed++;
                if (sc > best_score) { best = key; best_score = sc; }
                if (passed >= best_of) break;
            }
        }
        if (best >= 0) { res = Py_BuildValue("(LOO)", (long long)best, pass ? Py_False : Py_True, Py_True); goto out; }
    }
    res = Py_BuildValue("(LOO)", (long long)first, first_pref ? Py_True : Py_False, Py_False);
out:
    if (moved != small) PyMem_Free(moved);
    return res;
}

static PyMethodDef methods[] = {
    {"randbelow", py_randbelow, METH_VARARGS, "randbelow(stream, n): tilelib.rng.Stream.randbelow in C"},
    {"choose", py_choose, METH_VARARGS,
     "choose(table, masks, values, m1, known, stream, check, tries, best_of, levels=0) -> None or "
     "(key, preferred, passed)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "stitcher._core",
    "C twin of the stitcher's per-square path (board, index lookup, draws, forward check); see _core.c.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&BoardType) < 0 || PyType_Ready(&TableType) < 0 || PyType_Ready(&CheckerType) < 0)
        return NULL;
    if (stream_names() < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    if (PyModule_AddFunctions(m, check_functions) < 0
            || PyModule_AddObjectRef(m, "Board", (PyObject *)&BoardType) < 0
            || PyModule_AddObjectRef(m, "Table", (PyObject *)&TableType) < 0
            || PyModule_AddObjectRef(m, "Checker", (PyObject *)&CheckerType) < 0
            || PyModule_AddIntConstant(m, "NONE_AFFECTED", NONE_AFFECTED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return twin_stamp(m);
}
