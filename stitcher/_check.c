/* stitcher/_check.c: Checker, the forward check of one square (see _core.h).
 *
 * Twin of check.PyForwardCheck (read its docstring first): same rows (the port of
 * check.pair_rows below), same score. A Checker is built cheaply; its rows are read from
 * the board at the first score (as the Python checker is built at the first candidate), for
 * the neighbours open at that moment. Per hit row: the valid-line count table of (nj, mask),
 * cached per (n, mask) as sorted (value, count) arrays; per n = 6 neighbour: the sorted packed
 * boundaries of every valid 6×6 grid under its four masks, cached per mask tuple (twins of
 * check.line_counts and check.boundary_keys).
 */
#include "_core.h"

typedef struct { uint8_t side, ss, d; uint16_t m; } Run;
typedef struct { int nruns; Run r[2]; } Runs;
typedef struct { int len; uint16_t *val, *cnt; } LineTab;
typedef struct { int len; uint32_t *keys; } KeyTab;
struct Row { uint32_t base; Runs rr; const LineTab *tab; };
struct Small { int nj; uint32_t base[4]; Runs rr[4]; const KeyTab *keys; };

/* ---- valid lines and the exact 6×6 table ---- */

static uint16_t *VL[CMAXN + 1];
static int VLP[CMAXN + 1];

const uint16_t *valid_lines_c(int n, int *P) {
    if (!VL[n]) {
        int cnt = 0;
        uint16_t *out = PyMem_Malloc(sizeof(uint16_t) * 1300);
        if (!out) return NULL;
        uint32_t full = (1u << n) - 1;
        for (uint32_t v = 0; v <= full; v++) {
            uint32_t inv = v ^ full;
            if (__builtin_popcount(v) == n / 2 && !(v & (v >> 1) & (v >> 2)) && !(inv & (inv >> 1) & (inv >> 2)))
                out[cnt++] = (uint16_t)v;
        }
        VL[n] = out;
        VLP[n] = cnt;
    }
    *P = VLP[n];
    return VL[n];
}

#define EN 6
static uint32_t (*SOL)[4];   /* edges (top, right, bottom, left) of every valid 6×6 grid */
static int NSOL;

static int is_valid_line(uint32_t v) {
    uint32_t full = (1u << EN) - 1, inv = v ^ full;
    return __builtin_popcount(v) == EN / 2 && !(v & (v >> 1) & (v >> 2)) && !(inv & (inv >> 1) & (inv >> 2));
}

static void sol_extend(uint32_t *rows, int k, const uint16_t *lines, int P, int *cap) {
    if (k == EN) {
        uint32_t cols[EN];
        for (int c = 0; c < EN; c++) {
            uint32_t v = 0;
            for (int r = 0; r < EN; r++) v |= ((rows[r] >> (EN - 1 - c)) & 1u) << (EN - 1 - r);
            if (!is_valid_line(v)) return;
            for (int d = 0; d < c; d++) if (cols[d] == v) return;
            cols[c] = v;
        }
        if (NSOL == *cap) {
            *cap *= 2;
            uint32_t (*g)[4] = PyMem_Realloc(SOL, sizeof *SOL * (size_t)*cap);
            if (!g) return;   /* NSOL stays short; solutions() reports the failure */
            SOL = g;
        }
        SOL[NSOL][0] = rows[0]; SOL[NSOL][1] = cols[EN - 1]; SOL[NSOL][2] = rows[EN - 1]; SOL[NSOL][3] = cols[0];
        NSOL++;
        return;
    }
    for (int q = 0; q < P; q++) {
        uint32_t ln = lines[q];
        int dup = 0;
        for (int r = 0; r < k; r++) dup |= rows[r] == ln;
        if (dup) continue;
        if (k >= 2 && ((rows[k - 1] & rows[k - 2] & ln) || (~rows[k - 1] & ~rows[k - 2] & ~ln & 0x3f))) continue;
        int bad = 0;   /* a column would hold more than half ones or zeros */
        for (int c = 0; c < EN && !bad; c++) {
            int ones = (int)((ln >> (EN - 1 - c)) & 1);
            for (int r = 0; r < k; r++) ones += (int)((rows[r] >> (EN - 1 - c)) & 1);
            bad = ones > EN / 2 || k + 1 - ones > EN / 2;
        }
        if (bad) continue;
        rows[k] = ln;
        sol_extend(rows, k + 1, lines, P, cap);
    }
}

static int solutions(void) {
    if (SOL) return 0;
    int P, cap = 16384;
    const uint16_t *lines = valid_lines_c(EN, &P);
    SOL = PyMem_Malloc(sizeof *SOL * (size_t)cap);
    if (!lines || !SOL) { PyErr_NoMemory(); return -1; }
    uint32_t rows[EN];
    NSOL = 0;
    sol_extend(rows, 0, lines, P, &cap);
    return 0;
}

/* ---- cached tables ---- */

static LineTab **LT[CMAXN + 1];   /* LT[n][mask] */

static int cmp_u16(const void *a, const void *b) { return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b; }
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static const LineTab *line_tab(int n, uint32_t mask) {
    if (!LT[n] && !(LT[n] = PyMem_Calloc((size_t)1 << n, sizeof(LineTab *)))) return NULL;
    if (LT[n][mask]) return LT[n][mask];
    int P;
    const uint16_t *lines = valid_lines_c(n, &P);
    LineTab *t = PyMem_Calloc(1, sizeof *t);
    uint16_t *tmp = PyMem_Malloc(sizeof(uint16_t) * (P ? P : 1));
    if (!lines || !t || !tmp) { PyMem_Free(t); PyMem_Free(tmp); return NULL; }
    for (int q = 0; q < P; q++) tmp[q] = lines[q] & mask;
    qsort(tmp, P, sizeof *tmp, cmp_u16);
    t->val = PyMem_Malloc(sizeof(uint16_t) * (P ? P : 1));
    t->cnt = PyMem_Malloc(sizeof(uint16_t) * (P ? P : 1));
    if (!t->val || !t->cnt) { PyMem_Free(t->val); PyMem_Free(t->cnt); PyMem_Free(t); PyMem_Free(tmp); return NULL; }
    for (int q = 0; q < P; q++) {
        if (t->len && t->val[t->len - 1] == tmp[q]) t->cnt[t->len - 1]++;
        else { t->val[t->len] = tmp[q]; t->cnt[t->len] = 1; t->len++; }
    }
    PyMem_Free(tmp);
    return LT[n][mask] = t;
}

static int line_count(const LineTab *t, uint32_t v) {
    int lo = 0, hi = t->len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (t->val[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo < t->len && t->val[lo] == v ? t->cnt[lo] : 0;
}

static KeyTab **KT[1 << (2 * EN)];   /* KT[m0 << 6 | m1][m2 << 6 | m3] */

static const KeyTab *key_tab(const uint32_t m[4]) {
    uint32_t hi = m[0] << EN | m[1], lo = m[2] << EN | m[3];
    if (!KT[hi] && !(KT[hi] = PyMem_Calloc((size_t)1 << (2 * EN), sizeof(KeyTab *)))) return NULL;
    if (KT[hi][lo]) return KT[hi][lo];
    if (solutions() < 0) return NULL;
    KeyTab *t = PyMem_Calloc(1, sizeof *t);
    uint32_t *k = PyMem_Malloc(sizeof(uint32_t) * (NSOL ? NSOL : 1));
    if (!t || !k) { PyMem_Free(t); PyMem_Free(k); return NULL; }
    for (int q = 0; q < NSOL; q++) {
        uint32_t key = 0;
        for (int s = 0; s < 4; s++) key = key << EN | (SOL[q][s] & m[s]);
        k[q] = key;
    }
    qsort(k, NSOL, sizeof *k, cmp_u32);
    int len = 0;
    for (int q = 0; q < NSOL; q++) if (!len || k[len - 1] != k[q]) k[len++] = k[q];
    t->len = len;
    t->keys = k;
    return KT[hi][lo] = t;
}

static int has_key(const KeyTab *t, uint32_t key) {
    int lo = 0, hi = t->len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (t->keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < t->len && t->keys[lo] == key;
}

/* ---- geometry: the port of check.pair_rows ---- */

typedef struct { int side; Runs rr; int sx, sy, vertical; uint32_t im; } PairRow;

static void add_run(Runs *rr, int side, int ss, uint32_t m, int d) {
    Run *r = &rr->r[rr->nruns++];
    r->side = (uint8_t)side; r->ss = (uint8_t)ss; r->m = (uint16_t)m; r->d = (uint8_t)d;
}

/* Rows that neighbour (xj, yj, sj) gives square (x, y, s): up to 4, by side of the neighbour;
 * returns how many (0 if no side meets the border; 4, sides 0..3, for an n = 6 neighbour). */
static int pair_rows_c(int x0, int y0, int s, int xa, int ya, int sj, PairRow out[4]) {
    int dx = xa - x0, dy = ya - y0;
    const int x = 0, y = 0, x1 = s, y1 = s;
    int xj = dx, yj = dy, nj = sj + 1, xe = xj + sj, ye = yj + sj;
    int have[4] = {0, 0, 0, 0};
    Runs rs[4];
    memset(rs, 0, sizeof rs);
    for (int h = 0; h < 2; h++) {               /* horizontal lines: row R, columns xj..xe */
        int side = h ? 2 : 0, R = h ? ye : yj;
        if (y < R && R < y1) {
            int a = xj <= x && x <= xe, b = xj <= x1 && x1 <= xe;
            if (a || b) {
                have[side] = 1;
                if (a) add_run(&rs[side], 3, y1 - R, 1, xe - x);
                if (b) add_run(&rs[side], 1, y1 - R, 1, xe - x1);
            }
        } else if (R == y || R == y1) {
            int lo = xj > x ? xj : x, hi = xe < x1 ? xe : x1;
            if (lo <= hi) {
                have[side] = 1;
                add_run(&rs[side], R == y ? 0 : 2, x1 - hi, (1u << (hi - lo + 1)) - 1, xe - hi);
            }
        }
    }
    for (int v = 0; v < 2; v++) {               /* vertical lines: column C, rows yj..ye */
        int side = v ? 3 : 1, C = v ? xj : xe;
        if (x < C && C < x1) {
            int a = yj <= y && y <= ye, b = yj <= y1 && y1 <= ye;
            if (a || b) {
                have[side] = 1;
                if (a) add_run(&rs[side], 0, x1 - C, 1, ye - y);
                if (b) add_run(&rs[side], 2, x1 - C, 1, ye - y1);
            }
        } else if (C == x || C == x1) {
            int lo = yj > y ? yj : y, hi = ye < y1 ? ye : y1;
            if (lo <= hi) {
                have[side] = 1;
                add_run(&rs[side], C == x ? 3 : 1, y1 - hi, (1u << (hi - lo + 1)) - 1, ye - hi);
            }
        }
    }
    if (!(have[0] | have[1] | have[2] | have[3])) return 0;
    int cnt = 0;
    for (int side = 0; side < 4; side++) {
        if (!have[side] && nj != EN) continue;
        PairRow *o = &out[cnt++];
        o->side = side;
        o->rr = rs[side];
        o->im = 0;
        for (int q = 0; q < rs[side].nruns; q++) o->im |= (uint32_t)rs[side].r[q].m << rs[side].r[q].d;
        o->vertical = side & 1;
        o->sx = x0 + (side == 1 ? xe : xj);
        o->sy = y0 + (side == 2 ? ye : yj);
    }
    return cnt;
}

static inline uint32_t runs_bits(const Runs *rr, const uint32_t e[4]) {
    uint32_t v = 0;
    for (int q = 0; q < rr->nruns; q++) {
        const Run *r = &rr->r[q];
        v |= ((e[r->side] >> r->ss) & r->m) << r->d;
    }
    return v;
}

/* ---- Checker ---- */

static int get3(PyObject *sq, int out[3]) {
    PyObject *fast = PySequence_Fast(sq, "a square is (x, y, s)");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 3) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "a square is (x, y, s)");
        return -1;
    }
    for (int q = 0; q < 3; q++) {
        out[q] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, q));
        if (out[q] == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
    }
    Py_DECREF(fast);
    return 0;
}

int checker_ready(CheckerObject *c) {
    if (c->ready) return 0;
    const BoardObject *b = c->board;
    const int G = b->G;
    int sq[3], nb[3];
    PyObject *item = PySequence_GetItem(c->squares, c->i);
    if (!item) return -1;
    int r = get3(item, sq);
    Py_DECREF(item);
    if (r < 0) return -1;
    PyObject *adj = PySequence_GetItem(c->adj, c->i);
    if (!adj) return -1;
    PyObject *fast = PySequence_Fast(adj, "adjacency list");
    Py_DECREF(adj);
    if (!fast) return -1;
    Py_ssize_t na = PySequence_Fast_GET_SIZE(fast);
    PyMem_Free(c->rows);
    PyMem_Free(c->smalls);
    c->rows = PyMem_Malloc(sizeof(Row) * (size_t)(4 * na + 1));
    c->smalls = PyMem_Malloc(sizeof(Small) * (size_t)(na + 1));
    if (!c->rows || !c->smalls) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    c->nrows = c->nsmall = 0;
    for (Py_ssize_t a = 0; a < na; a++) {
        PyObject *j = PySequence_Fast_GET_ITEM(fast, a);
        PyObject *pl = PyObject_GetItem(c->placements, j);
        if (!pl) goto fail;
        int open_ = pl == Py_None;
        Py_DECREF(pl);
        if (!open_) continue;
        int inch = PySequence_Contains(c->children, j);
        if (inch < 0) goto fail;
        if (inch) continue;
        PyObject *sj = PyObject_GetItem(c->squares, j);
        if (!sj) goto fail;
        r = get3(sj, nb);
        Py_DECREF(sj);
        if (r < 0) goto fail;
        int nj = nb[2] + 1;
        if (nj < 2 || nj > CMAXN || nj % 2 || nb[0] < 0 || nb[1] < 0 || nb[0] + nj > G || nb[1] + nj > G) {
            PyErr_SetString(PyExc_ValueError, "neighbour square out of range");
            goto fail;
        }
        PairRow pr[4];
        int cnt = pair_rows_c(sq[0], sq[1], sq[2], nb[0], nb[1], nb[2], pr);
        uint32_t masks[4] = {0, 0, 0, 0}, bases[4] = {0, 0, 0, 0};
        for (int q = 0; q < cnt; q++) {
            const PairRow *p = &pr[q];
            size_t off = (size_t)p->sy * G + p->sx, step = p->vertical ? (size_t)G : 1;
            uint32_t known = 0, vals = 0;
            for (int k = 0; k < nj; k++, off += step) {
                uint32_t kb = b->k[off] & 1;
                known = known << 1 | kb;
                vals = vals << 1 | (b->v[off] & kb);
            }
            uint32_t mask = known | p->im, base = vals & ~p->im;
            masks[p->side] = mask;
            bases[p->side] = base;
            if (p->rr.nruns) {
                Row *row = &c->rows[c->nrows++];
                row->base = base;
                row->rr = p->rr;
                if (!(row->tab = line_tab(nj, mask))) { PyErr_NoMemory(); goto fail; }
            }
        }
        if (cnt && nj == EN) {
            Small *sm = &c->smalls[c->nsmall++];
            sm->nj = nj;
            for (int q = 0; q < 4; q++) { sm->base[q] = bases[pr[q].side]; sm->rr[q] = pr[q].rr; }
            if (!(sm->keys = key_tab(masks))) { PyErr_NoMemory(); goto fail; }
        }
    }
    Py_DECREF(fast);
    c->ready = 1;
    return 0;
fail:
    Py_DECREF(fast);
    return -1;
}

int checker_score(const CheckerObject *c, const uint32_t e[4]) {
    int best = NONE_AFFECTED;
    for (int q = 0; q < c->nrows; q++) {
        const Row *row = &c->rows[q];
        int k = line_count(row->tab, row->base | runs_bits(&row->rr, e));
        if (!k) return 0;
        if (k < best) best = k;
    }
    for (int q = 0; q < c->nsmall; q++) {
        const Small *sm = &c->smalls[q];
        uint32_t key = 0;
        for (int s = 0; s < 4; s++) key = key << sm->nj | (sm->base[s] | runs_bits(&sm->rr[s], e));
        if (!has_key(sm->keys, key)) return 0;
    }
    return best;
}

static int checker_init(CheckerObject *c, PyObject *args, PyObject *kw) {
    PyObject *board, *table = Py_None, *squares, *adj, *placements, *children;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "O!nOOOO|O", &BoardType, &board, &i, &squares, &adj, &placements, &children, &table))
        return -1;
    if (table != Py_None && !PyObject_TypeCheck(table, &TableType)) {
        PyErr_SetString(PyExc_TypeError, "table must be a stitcher._core.Table or None");
        return -1;
    }
    Py_XSETREF(c->board, (BoardObject *)Py_NewRef(board));
    Py_XSETREF(c->table, table == Py_None ? NULL : (TableObject *)Py_NewRef(table));
    Py_XSETREF(c->squares, Py_NewRef(squares));
    Py_XSETREF(c->adj, Py_NewRef(adj));
    Py_XSETREF(c->placements, Py_NewRef(placements));
    Py_XSETREF(c->children, Py_NewRef(children));
    c->i = i;
    c->ready = 0;
    PyMem_Free(c->rows); PyMem_Free(c->smalls);
    c->rows = NULL; c->smalls = NULL;
    return 0;
}

static void checker_dealloc(CheckerObject *c) {
    Py_XDECREF(c->board); Py_XDECREF(c->table); Py_XDECREF(c->squares); Py_XDECREF(c->adj);
    Py_XDECREF(c->placements); Py_XDECREF(c->children);
    PyMem_Free(c->rows); PyMem_Free(c->smalls);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* checker(key) with a table, or checker(edges): the score */
static PyObject *checker_call(CheckerObject *c, PyObject *args, PyObject *kw) {
    PyObject *arg;
    uint32_t e[4];
    if (!PyArg_ParseTuple(args, "O", &arg)) return NULL;
    if (PyLong_Check(arg) || PyIndex_Check(arg)) {
        Py_ssize_t k = PyNumber_AsSsize_t(arg, PyExc_IndexError);
        if (k == -1 && PyErr_Occurred()) return NULL;
        if (!c->table) { PyErr_SetString(PyExc_TypeError, "this checker scores edges, not keys"); return NULL; }
        if (k < 0 || k >= 16 * (Py_ssize_t)c->table->N) { PyErr_SetString(PyExc_IndexError, "no such entry"); return NULL; }
        table_edges(c->table, k, e);
    } else if (parse_quad(arg, e, "edges") < 0) {
        return NULL;
    }
    if (checker_ready(c) < 0) return NULL;
    return PyLong_FromLong(checker_score(c, e));
}

static PyObject *solutions_edges_c(PyObject *mod, PyObject *noarg) {
    if (solutions() < 0) return NULL;
    PyObject *out = PyList_New(NSOL);
    if (!out) return NULL;
    for (int q = 0; q < NSOL; q++) {
        PyObject *t = Py_BuildValue("(IIII)", SOL[q][0], SOL[q][1], SOL[q][2], SOL[q][3]);
        if (!t) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, q, t);
    }
    return out;
}

PyMethodDef check_functions[] = {
    {"solutions_edges6", solutions_edges_c, METH_NOARGS, "edges of every valid 6×6 grid (small.solutions_edges(6) twin)"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject CheckerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stitcher._core.Checker",
    .tp_basicsize = sizeof(CheckerObject),
    .tp_dealloc = (destructor)checker_dealloc,
    .tp_call = (ternaryfunc)checker_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Checker(board, i, squares, adj, placements, children, table=None): forward-check score of "
              "square i, rows read from the board at the first call; call with an entry key (needs the "
              "table) or with oriented edges",
    .tp_init = (initproc)checker_init,
    .tp_new = PyType_GenericNew,
};
