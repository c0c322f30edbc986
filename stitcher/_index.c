/* stitcher/_index.c: Table, one tile size of the in-memory edge index as bitsets (see _core.h).
 *
 * Twin of index._SizeIndex.lookup. The table holds each canonical tile once (a row), ranked in
 * hash order (the Python side passes that order, a stable argsort of the hashes' first 60 bits);
 * a tile's 16 orientations are its *entries*, key 16 * row + t, and entry rank 16 * rank + t is
 * the (hash, t) order every answer comes in. A lookup pulls the constraint back through each
 * transform t (the sides it reads, reversed, complemented: ``plan``) and asks the canonical
 * rows; the answers land as the bits 16 * rank + t of one bitset over entry ranks, so the
 * candidates come out sorted. Memory is per canonical tile, not per entry: sixteen times less
 * than a table of oriented entries (docs/benchmarks/45). The sets over ranks:
 *
 *   cb    canonical side s has bit p == b (a partly known side ANDs one per known cell),
 *   m1    m = 1 (the seed tile),
 *   lvb   ladder level L,
 *
 * and over entry ranks, pin: the oriented pin bitmap has bit S set (the preferred pool of a
 * square whose known sides are S).
 *
 * A whole side == v is answered from a posting list (the ascending ranks whose canonical side
 * has that value): the lookup walks the shortest posting list of its whole sides and tests each
 * row against every side, so its cost is that list, and memory is 4 int32 per row. A value held
 * by at least Wc ranks (1 in 64) also gets a bitset ("dense", at most 4 N / Wc of them, so at most
 * 32 bytes per row): when every whole side of a lookup is dense, word-wise ANDs beat walking a list
 * longer than Wc. Both give the same set.
 *
 * Rows can be marked *dead* (``set_dead``: the fair rule's solutions already on the board, see
 * stitcher/fresh.py): a lookup leaves their entries out, as if they were not in the table, until
 * they are marked alive again; with none dead the lookup does no extra work.
 *
 * Rows added later (the drain's tiles) do not re-rank everything: ``extend`` appends them as
 * *extras*, a short list in hash order with each one's insertion point among the ranks; a lookup
 * tests them one by one and merges them into the order (the Python side rebuilds the Table once
 * the extras pass index.EXTRA_LIMIT rows).
 */
#include "_core.h"

static int get_i64(PyObject *obj, Py_buffer *view, Py_ssize_t want, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize != 8 || !view->format || (strcmp(view->format, "q") && strcmp(view->format, "l")
            && strcmp(view->format, "<q") && strcmp(view->format, "<l") && strcmp(view->format, "=q"))
            || view->len != want * 8) {
        PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous int64 buffer of %zd items", what, want);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Room for N rows in the by-row arrays, and a quarter more: a night's drained tiles are appended
 * (extend) into pages nobody has touched, so a forked half writes only those instead of
 * reallocating, and so copying, each inherited array whole. Untouched room costs no memory. */
static int table_room(int N) {
    long long r = (long long)N + N / 4 + 64;
    return r > INT32_MAX ? INT32_MAX : (int)r;
}

/* v's n low bits (v < 2^16) in reverse order */
static inline uint32_t rev_bits(uint32_t v, int n) {
    v = ((v >> 1) & 0x5555u) | ((v & 0x5555u) << 1);
    v = ((v >> 2) & 0x3333u) | ((v & 0x3333u) << 2);
    v = ((v >> 4) & 0x0f0fu) | ((v & 0x0f0fu) << 4);
    v = ((v >> 8) & 0x00ffu) | ((v & 0x00ffu) << 8);
    return v >> (16 - n);
}

void table_edges(const TableObject *t, int64_t key, uint32_t e[4]) {
    const uint16_t *c = t->ce[key >> 4];
    const uint8_t *p = t->plan[key & 15];
    const uint32_t full = (1u << t->n) - 1;
    for (int s = 0; s < 4; s++) {
        uint32_t x = c[p[s] & 3];
        if (p[s] & 4) x = rev_bits(x, t->n);
        if (p[s] & 8) x ^= full;
        e[s] = x;
    }
}

/* The constraint on the canonical tile whose transform tr meets (masks, vals): side s of the
 * transform reads canonical side plan & 3, so that side must meet the mask and value read back. */
static void pull_back(const TableObject *t, int tr, const uint32_t masks[4], const uint32_t vals[4],
                      uint32_t cm[4], uint32_t cv[4]) {
    for (int s = 0; s < 4; s++) {
        uint8_t p = t->plan[tr][s];
        uint32_t m = masks[s], v = vals[s];
        if (p & 8) v ^= m;
        if (p & 4) { m = rev_bits(m, t->n); v = rev_bits(v, t->n); }
        cm[p & 3] = m;
        cv[p & 3] = v;
    }
}

static void table_free_arrays(TableObject *t) {
    PyMem_Free(t->ce); PyMem_Free(t->rank_row); PyMem_Free(t->row_rank); PyMem_Free(t->all); PyMem_Free(t->m1);
    PyMem_Free(t->pin); PyMem_Free(t->cb); PyMem_Free(t->vidx); PyMem_Free(t->post_off); PyMem_Free(t->post);
    PyMem_Free(t->dense); PyMem_Free(t->vb); PyMem_Free(t->ce_rank);
    PyMem_Free(t->acc); PyMem_Free(t->cacc); PyMem_Free(t->prefix);
    t->ce = NULL; t->rank_row = t->row_rank = NULL; t->all = t->m1 = t->pin = t->cb = NULL;
    t->vidx = t->post_off = t->post = t->dense = NULL; t->vb = NULL; t->ce_rank = NULL;
    t->acc = t->cacc = NULL; t->prefix = NULL;
    PyMem_Free(t->x_row); PyMem_Free(t->x_ins); PyMem_Free(t->x_pin); PyMem_Free(t->x_m1);
    PyMem_Free(t->x_hit); PyMem_Free(t->x_pool); PyMem_Free(t->x_mpos);
    t->x_row = t->x_ins = t->x_hit = t->x_pool = t->x_mpos = NULL; t->x_pin = NULL; t->x_m1 = NULL;
    t->E = t->nhit = 0;
    PyMem_Free(t->edead); PyMem_Free(t->rdead);
    t->edead = NULL; t->rdead = NULL; t->ndead = 0;
    PyMem_Free(t->lv); PyMem_Free(t->lv_rank); PyMem_Free(t->lvb);
    t->lv = NULL; t->lv_rank = NULL; t->lvb = NULL;
}

static void table_dealloc(TableObject *t) {
    table_free_arrays(t);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* plan (64) and pinmap (256) from their int64 buffers: 0..15 each */
static int read_maps(TableObject *t, PyObject *o_plan, PyObject *o_pinmap) {
    Py_buffer bp, bm;
    if (get_i64(o_plan, &bp, 64, "plan") < 0) return -1;
    if (get_i64(o_pinmap, &bm, 256, "pinmap") < 0) { PyBuffer_Release(&bp); return -1; }
    const int64_t *P = bp.buf, *M = bm.buf;
    int bad = 0;
    for (int q = 0; q < 64; q++) bad |= P[q] < 0 || P[q] > 15;
    for (int q = 0; q < 256; q++) bad |= M[q] < 0 || M[q] > 15;
    if (!bad)
        for (int tr = 0; tr < 16; tr++) {
            int seen = 0;
            for (int s = 0; s < 4; s++) t->plan[tr][s] = (uint8_t)P[4 * tr + s], seen |= 1 << (P[4 * tr + s] & 3);
            for (int S = 0; S < 16; S++) t->pinmap[tr][S] = (uint8_t)M[16 * tr + S];
            bad |= seen != 15;   /* each transform reads every canonical side once */
        }
    PyBuffer_Release(&bp); PyBuffer_Release(&bm);
    if (bad) { PyErr_SetString(PyExc_ValueError, "plan must map each transform's sides onto 0..3, pinmap into 0..15"); return -1; }
    return 0;
}

/* Table(n, N, edges, pins, m, order, levels, plan, pinmap): edges (N, 4) canonical edges by row,
 * pins (canonical pin bitmaps) / m / levels (the ladder level, 0..TABLE_LEVELS-1) by row, order =
 * the rows in hash order; plan (16, 4) and pinmap (16, 16) as in _core.h. All int64 buffers. */
static int table_init(TableObject *t, PyObject *args, PyObject *kw) {
    int n;
    Py_ssize_t N;
    PyObject *o_ce, *o_pins, *o_m, *o_order, *o_lv, *o_plan, *o_pinmap;
    if (!PyArg_ParseTuple(args, "inOOOOOOO", &n, &N, &o_ce, &o_pins, &o_m, &o_order, &o_lv, &o_plan, &o_pinmap))
        return -1;
    if (n < 2 || n > CMAXN || n % 2 || N < 0 || N > INT32_MAX / 32) {
        PyErr_Format(PyExc_ValueError, "Table: n must be even in 2..%d and N >= 0", CMAXN);
        return -1;
    }
    table_free_arrays(t);
    t->N = t->N0 = 0;
    if (read_maps(t, o_plan, o_pinmap) < 0) return -1;
    Py_buffer b_ce, b_pins, b_m, b_order, b_lv;
    if (get_i64(o_ce, &b_ce, 4 * N, "edges") < 0) return -1;
    if (get_i64(o_pins, &b_pins, N, "pins") < 0) { PyBuffer_Release(&b_ce); return -1; }
    if (get_i64(o_m, &b_m, N, "m") < 0) { PyBuffer_Release(&b_ce); PyBuffer_Release(&b_pins); return -1; }
    if (get_i64(o_order, &b_order, N, "order") < 0) {
        PyBuffer_Release(&b_ce); PyBuffer_Release(&b_pins); PyBuffer_Release(&b_m);
        return -1;
    }
    if (get_i64(o_lv, &b_lv, N, "levels") < 0) {
        PyBuffer_Release(&b_ce); PyBuffer_Release(&b_pins); PyBuffer_Release(&b_m); PyBuffer_Release(&b_order);
        return -1;
    }
    const int64_t *CE = b_ce.buf, *PINS = b_pins.buf, *M = b_m.buf, *ORD = b_order.buf, *LV = b_lv.buf;
    int rc = -1;
    int Wc = (int)((N + 63) / 64), W = (int)((16 * N + 63) / 64);
    if (Wc == 0) Wc = 1;
    if (W == 0) W = 1;
    t->n = n; t->Wc = Wc; t->W = W;
    t->cap = table_room((int)N);
    size_t N1 = N ? (size_t)N : 1;
    uint32_t full = (1u << n) - 1;
    t->ce = PyMem_Calloc((size_t)t->cap, sizeof *t->ce);
    t->rank_row = PyMem_Calloc(N1, sizeof(int32_t)); t->row_rank = PyMem_Malloc(N1 * sizeof(int32_t));
    t->all = PyMem_Calloc(Wc, 8); t->m1 = PyMem_Calloc(Wc, 8); t->pin = PyMem_Calloc(16 * (size_t)W, 8);
    t->cb = PyMem_Calloc((size_t)8 * n * Wc, 8);
    t->vidx = PyMem_Malloc(sizeof(int32_t) * ((size_t)4 << n));
    t->acc = PyMem_Calloc(W, 8); t->cacc = PyMem_Calloc(Wc, 8);
    t->prefix = PyMem_Calloc(W + 1, sizeof(int32_t));
    t->edead = PyMem_Calloc((size_t)t->cap, 1); t->rdead = PyMem_Calloc(Wc, 8);
    t->lv = PyMem_Calloc((size_t)t->cap, 1); t->lv_rank = PyMem_Calloc(N1, 1);
    t->lvb = PyMem_Calloc((size_t)TABLE_LEVELS * Wc, 8);
    t->ce_rank = PyMem_Calloc(N1, sizeof *t->ce_rank);
    if (!t->ce || !t->rank_row || !t->row_rank || !t->all || !t->m1 || !t->pin || !t->cb || !t->vidx || !t->acc
            || !t->cacc || !t->prefix || !t->edead || !t->rdead || !t->lv || !t->lv_rank || !t->lvb || !t->ce_rank) {
        PyErr_NoMemory();
        goto done;
    }
    /* The loops below touch only this object's arrays and the held buffers, so they run without
     * the GIL: index.py builds several tables at once on threads (allocation keeps the GIL). */
    int bad = 0, slots = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t e = 0; e < N && !bad; e++) {
        if (LV[e] < 0 || LV[e] >= TABLE_LEVELS || PINS[e] < 0 || PINS[e] > 0xffff) { bad = 1; break; }
        t->lv[e] = (uint8_t)LV[e];
        t->row_rank[e] = -1;
    }
    for (Py_ssize_t e = 0; e < N && !bad; e++)
        for (int s = 0; s < 4; s++) {
            int64_t v = CE[4 * e + s];
            if (v < 0 || v > (int64_t)full) { bad = 1; break; }
            t->ce[e][s] = (uint16_t)v;
        }
    if (!bad) {
        for (size_t q = 0; q < ((size_t)4 << n); q++) t->vidx[q] = -1;
        for (Py_ssize_t e = 0; e < N; e++)
            for (int s = 0; s < 4; s++) {
                int32_t *q = &t->vidx[(s << n) | t->ce[e][s]];
                if (*q < 0) *q = slots++;
            }
    }
    Py_END_ALLOW_THREADS
    if (bad) { PyErr_SetString(PyExc_ValueError, "edge, pin bitmap or level out of range"); goto done; }
    t->post_off = PyMem_Calloc((size_t)slots + 1, sizeof(int32_t));
    t->post = PyMem_Malloc(sizeof(int32_t) * 4 * N1);
    if (!t->post_off || !t->post) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t e = 0; e < N; e++)
        for (int s = 0; s < 4; s++) t->post_off[t->vidx[(s << n) | t->ce[e][s]] + 1]++;
    for (int q = 0; q < slots; q++) t->post_off[q + 1] += t->post_off[q];
    int32_t *fill = PyMem_Malloc(sizeof(int32_t) * (size_t)(slots ? slots : 1));
    t->dense = PyMem_Malloc(sizeof(int32_t) * (size_t)(slots ? slots : 1));
    if (!fill || !t->dense) { PyMem_Free(fill); PyErr_NoMemory(); goto done; }
    memcpy(fill, t->post_off, sizeof(int32_t) * (size_t)slots);
    int ndense = 0;
    for (int q = 0; q < slots; q++)
        t->dense[q] = t->post_off[q + 1] - t->post_off[q] >= Wc ? ndense++ : -1;
    t->vb = PyMem_Calloc(ndense ? (size_t)ndense * Wc : 1, 8);
    if (!t->vb) { PyMem_Free(fill); PyErr_NoMemory(); goto done; }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < N; r++) {
        int64_t e = ORD[r];
        if (e < 0 || e >= N || t->row_rank[e] >= 0) { bad = 1; break; }
        t->rank_row[r] = (int32_t)e;
        t->row_rank[e] = (int32_t)r;
        size_t w = (size_t)r >> 6;
        uint64_t bit = 1ull << (r & 63);
        t->all[w] |= bit;
        if (M[e] == 1) t->m1[w] |= bit;
        t->lv_rank[r] = t->lv[e];
        t->lvb[(size_t)t->lv[e] * Wc + w] |= bit;
        /* pin bit S of the 16 entries 16 r + tr: 16 bits of word (16 r) / 64 */
        for (int S = 0; S < 16; S++) {
            uint64_t bits = 0;
            for (int tr = 0; tr < 16; tr++) bits |= (uint64_t)((PINS[e] >> t->pinmap[tr][S]) & 1) << tr;
            t->pin[(size_t)S * W + ((size_t)r >> 2)] |= bits << (16 * (r & 3));
        }
        for (int s = 0; s < 4; s++) {
            uint32_t v = t->ce[e][s];
            int32_t slot = t->vidx[(s << n) | v];
            t->post[fill[slot]++] = (int32_t)r;
            if (t->dense[slot] >= 0) t->vb[(size_t)t->dense[slot] * Wc + w] |= bit;
            t->ce_rank[r][s] = (uint16_t)v;
            for (int p = 0; p < n; p++)
                t->cb[((size_t)(s * n + p) * 2 + ((v >> p) & 1)) * Wc + w] |= bit;
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(fill);
    if (bad) { PyErr_SetString(PyExc_ValueError, "order must hold every row once"); goto done; }
    t->N = t->N0 = (int)N;
    rc = 0;
done:
    PyBuffer_Release(&b_ce); PyBuffer_Release(&b_pins); PyBuffer_Release(&b_m); PyBuffer_Release(&b_order);
    PyBuffer_Release(&b_lv);
    if (rc < 0) table_free_arrays(t), t->N = t->N0 = 0;
    return rc;
}

/* extend(edges_new, rows, ins, pins, m, levels_new): rows N..N+k-1 get the canonical edges
 * edges_new (k, 4) and the ladder levels levels_new (k); the extras become rows (every row past
 * the ranked ones, in hash order) with their insertion points, canonical pin bitmaps and m. All
 * int64 buffers. */
static PyObject *table_py_extend(TableObject *t, PyObject *args) {
    PyObject *o_ce, *o_ids, *o_ins, *o_pins, *o_m, *o_lv;
    if (!PyArg_ParseTuple(args, "OOOOOO", &o_ce, &o_ids, &o_ins, &o_pins, &o_m, &o_lv)) return NULL;
    if (!t->acc) { PyErr_SetString(PyExc_ValueError, "Table is not initialised"); return NULL; }
    Py_buffer b_ce;
    if (PyObject_GetBuffer(o_ce, &b_ce, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t k = b_ce.len / 32;
    PyBuffer_Release(&b_ce);
    Py_ssize_t E = (Py_ssize_t)(t->N - t->N0) + k;
    if (t->N + k > INT32_MAX / 32) { PyErr_SetString(PyExc_ValueError, "Table: too many rows"); return NULL; }
    Py_buffer bo, bi, bn, bp, bm, bl;
    if (get_i64(o_ce, &bo, 4 * k, "edges") < 0) return NULL;
    if (get_i64(o_ids, &bi, E, "rows") < 0) { PyBuffer_Release(&bo); return NULL; }
    if (get_i64(o_ins, &bn, E, "ins") < 0) { PyBuffer_Release(&bo); PyBuffer_Release(&bi); return NULL; }
    if (get_i64(o_pins, &bp, E, "pins") < 0) {
        PyBuffer_Release(&bo); PyBuffer_Release(&bi); PyBuffer_Release(&bn);
        return NULL;
    }
    if (get_i64(o_m, &bm, E, "m") < 0) {
        PyBuffer_Release(&bo); PyBuffer_Release(&bi); PyBuffer_Release(&bn); PyBuffer_Release(&bp);
        return NULL;
    }
    if (get_i64(o_lv, &bl, k, "levels") < 0) {
        PyBuffer_Release(&bo); PyBuffer_Release(&bi); PyBuffer_Release(&bn); PyBuffer_Release(&bp);
        PyBuffer_Release(&bm);
        return NULL;
    }
    const int64_t *CE = bo.buf, *IDS = bi.buf, *INS = bn.buf, *PINS = bp.buf, *M = bm.buf, *LV = bl.buf;
    PyObject *res = NULL;
    const uint32_t full = (1u << t->n) - 1;
    int N = t->N + (int)k;
    for (Py_ssize_t q = 0; q < 4 * k; q++)
        if (CE[q] < 0 || CE[q] > (int64_t)full) { PyErr_SetString(PyExc_ValueError, "edge out of range"); goto done; }
    for (Py_ssize_t q = 0; q < k; q++)
        if (LV[q] < 0 || LV[q] >= TABLE_LEVELS) { PyErr_SetString(PyExc_ValueError, "level out of range"); goto done; }
    for (Py_ssize_t q = 0; q < E; q++)
        if (IDS[q] < t->N0 || IDS[q] >= N || INS[q] < 0 || INS[q] > t->N0 || (q && INS[q] < INS[q - 1])
                || PINS[q] < 0 || PINS[q] > 0xffff) {
            PyErr_SetString(PyExc_ValueError, "extras out of range or not in order");
            goto done;
        }
    if (N > t->cap) {   /* past the room: grow by a quarter (most extends fit and move nothing) */
        int cap = table_room(N > t->cap + t->cap / 4 ? N : t->cap + t->cap / 4);
        uint16_t (*ce)[4] = PyMem_Realloc(t->ce, sizeof *ce * (size_t)cap);
        if (!ce) { PyErr_NoMemory(); goto done; }
        t->ce = ce;
        uint8_t *edead = PyMem_Realloc(t->edead, (size_t)cap);
        if (!edead) { PyErr_NoMemory(); goto done; }
        t->edead = edead;
        uint8_t *lv = PyMem_Realloc(t->lv, (size_t)cap);
        if (!lv) { PyErr_NoMemory(); goto done; }
        t->lv = lv;
        t->cap = cap;
    }
    memset(t->edead + t->N, 0, (size_t)k);
    for (Py_ssize_t q = 0; q < k; q++) t->lv[t->N + q] = (uint8_t)LV[q];
    size_t sz = (size_t)(E ? E : 1);
    int32_t *id = PyMem_Realloc(t->x_row, sz * 4), *ins = id ? PyMem_Realloc(t->x_ins, sz * 4) : NULL;
    if (id) t->x_row = id;
    if (ins) t->x_ins = ins;
    uint16_t *pin = ins ? PyMem_Realloc(t->x_pin, sz * 2) : NULL;
    if (pin) t->x_pin = pin;
    uint8_t *m1 = pin ? PyMem_Realloc(t->x_m1, sz) : NULL;
    if (m1) t->x_m1 = m1;
    int32_t *hit = m1 ? PyMem_Realloc(t->x_hit, 16 * sz * 4) : NULL;
    if (hit) t->x_hit = hit;
    int32_t *pool = hit ? PyMem_Realloc(t->x_pool, 16 * sz * 4) : NULL;
    if (pool) t->x_pool = pool;
    int32_t *mpos = pool ? PyMem_Realloc(t->x_mpos, 16 * sz * 4) : NULL;
    if (!mpos) { PyErr_NoMemory(); goto done; }
    t->x_mpos = mpos;
    for (Py_ssize_t q = 0; q < k; q++)
        for (int s = 0; s < 4; s++) t->ce[t->N + q][s] = (uint16_t)CE[4 * q + s];
    for (Py_ssize_t q = 0; q < E; q++) {
        t->x_row[q] = (int32_t)IDS[q]; t->x_ins[q] = (int32_t)INS[q];
        t->x_pin[q] = (uint16_t)PINS[q]; t->x_m1[q] = M[q] == 1;
    }
    t->N = N;
    t->E = (int)E;
    t->nhit = 0;
    res = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bo); PyBuffer_Release(&bi); PyBuffer_Release(&bn); PyBuffer_Release(&bp); PyBuffer_Release(&bm);
    PyBuffer_Release(&bl);
    return res;
}

int parse_quad(PyObject *seq, uint32_t out[4], const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 4) {
        PyErr_Format(PyExc_ValueError, "%s must hold 4 ints", what);
        Py_DECREF(fast);
        return -1;
    }
    for (int s = 0; s < 4; s++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, s));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        if (v < 0 || v > 0xffff) {
            PyErr_Format(PyExc_ValueError, "%s: %ld is not a line of <= 16 bits", what, v);
            Py_DECREF(fast);
            return -1;
        }
        out[s] = (uint32_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

static inline int meets(const uint16_t *e, const uint32_t m[4], const uint32_t v[4]) {
    return (e[0] & m[0]) == v[0] && (e[1] & m[1]) == v[1] && (e[2] & m[2]) == v[2] && (e[3] & m[3]) == v[3];
}

/* The ranked rows meeting the canonical constraint (masks, vals), m = 1 if asked, alive and of the
 * levels asked, as the bitset t->cacc over ranks. */
static void rows_meeting(TableObject *t, const uint32_t masks[4], const uint32_t vals[4], int m1, uint32_t levels) {
    const int n = t->n, Wc = t->Wc;
    const uint32_t full = (1u << n) - 1;
    const uint64_t *ops[4 * CMAXN + 4];
    int nops = 0, empty = 0, best = -1;   /* best: the shortest posting list of a whole side */
    int32_t wslots[4];
    int nwhole = 0;
    for (int s = 0; s < 4; s++) {
        if (!masks[s]) continue;
        if (masks[s] == full) {
            int32_t slot = t->vidx[(s << n) | vals[s]];
            if (slot < 0) empty = 1;
            else wslots[nwhole++] = slot;
            if (slot >= 0 && (best < 0 || t->post_off[slot + 1] - t->post_off[slot] < t->post_off[best + 1] - t->post_off[best]))
                best = slot;
        } else {
            for (int p = 0; p < n; p++)
                if ((masks[s] >> p) & 1)
                    ops[nops++] = t->cb + ((size_t)(s * n + p) * 2 + ((vals[s] >> p) & 1)) * Wc;
        }
    }
    uint64_t *acc = t->cacc;
    if (empty) {
        memset(acc, 0, (size_t)Wc * 8);
    } else if (best >= 0 && t->dense[best] < 0) {
        /* every rank of the shortest whole-side list (shorter than Wc) that meets all four sides
         * (and m = 1) */
        memset(acc, 0, (size_t)Wc * 8);
        const uint64_t *base = m1 ? t->m1 : t->all;
        for (int32_t q = t->post_off[best], end = t->post_off[best + 1]; q < end; q++) {
            int32_t r = t->post[q];
            if (((base[r >> 6] >> (r & 63)) & 1) && !(t->ndead && ((t->rdead[r >> 6] >> (r & 63)) & 1))
                    && (!levels || ((levels >> t->lv_rank[r]) & 1)) && meets(t->ce_rank[r], masks, vals))
                acc[r >> 6] |= 1ull << (r & 63);
        }
    } else {
        /* no whole side, or all of them dense: AND the bitsets */
        for (int k = 0; k < nwhole; k++) ops[nops++] = t->vb + (size_t)t->dense[wslots[k]] * Wc;
        memcpy(acc, m1 ? t->m1 : t->all, (size_t)Wc * 8);
        for (int k = 0; k < nops; k++) {
            const uint64_t *op = ops[k];
            for (int w = 0; w < Wc; w++) acc[w] &= op[w];
        }
        if (t->ndead)
            for (int w = 0; w < Wc; w++) acc[w] &= ~t->rdead[w];
        if (levels) {
            const uint64_t *lops[TABLE_LEVELS];
            int nl = 0;
            for (int L = 0; L < TABLE_LEVELS; L++)
                if ((levels >> L) & 1) lops[nl++] = t->lvb + (size_t)L * Wc;
            for (int w = 0; w < Wc; w++) {
                uint64_t keep = 0;
                for (int k = 0; k < nl; k++) keep |= lops[k][w];
                acc[w] &= keep;
            }
        }
    }
}

int table_lookup(TableObject *t, const uint32_t masks[4], const uint32_t vals[4], int m1, uint32_t levels) {
    const uint32_t full = (1u << t->n) - 1;
    if (!t->acc) { PyErr_SetString(PyExc_ValueError, "Table is not initialised"); return -1; }
    if (levels >> TABLE_LEVELS) { PyErr_SetString(PyExc_ValueError, "levels is a mask of ladder levels 0..7"); return -1; }
    for (int s = 0; s < 4; s++)
        if ((masks[s] & ~full) || (vals[s] & ~masks[s])) {
            PyErr_SetString(PyExc_ValueError, "constraint values must lie inside their n-bit masks");
            return -1;
        }
    uint32_t cm[16][4], cv[16][4];
    for (int tr = 0; tr < 16; tr++) pull_back(t, tr, masks, vals, cm[tr], cv[tr]);
    memset(t->acc, 0, (size_t)t->W * 8);
    for (int tr = 0; tr < 16; tr++) {
        rows_meeting(t, cm[tr], cv[tr], m1, levels);
        for (int w = 0; w < t->Wc; w++)   /* rank r -> entry rank 16 r + tr */
            for (uint64_t x = t->cacc[w]; x; x &= x - 1) {
                int64_t R = 16 * ((int64_t)w * 64 + __builtin_ctzll(x)) + tr;
                t->acc[R >> 6] |= 1ull << (R & 63);
            }
    }
    t->nhit = 0;
    for (int q = 0; q < t->E; q++) {
        int32_t row = t->x_row[q];
        if ((m1 && !t->x_m1[q]) || (t->ndead && t->edead[row]) || (levels && !((levels >> t->lv[row]) & 1)))
            continue;
        for (int tr = 0; tr < 16; tr++)
            if (meets(t->ce[row], cm[tr], cv[tr])) t->x_hit[t->nhit++] = 16 * q + tr;
    }
    return 0;
}

/* lookup(masks, values, m1, levels=0) -> bytes of int64 entry keys in (hash, t) order */
static PyObject *table_py_lookup(TableObject *t, PyObject *args) {
    PyObject *om, *ov;
    int m1;
    unsigned int levels = 0;
    uint32_t masks[4], vals[4];
    if (!PyArg_ParseTuple(args, "OOp|I", &om, &ov, &m1, &levels)) return NULL;
    if (parse_quad(om, masks, "masks") < 0 || parse_quad(ov, vals, "values") < 0) return NULL;
    if (table_lookup(t, masks, vals, m1, levels) < 0) return NULL;
    Py_ssize_t cnt = t->nhit;
    for (int w = 0; w < t->W; w++) cnt += __builtin_popcountll(t->acc[w]);
    PyObject *out = PyBytes_FromStringAndSize(NULL, cnt * 8);
    if (!out) return NULL;
    int64_t *dst = (int64_t *)PyBytes_AS_STRING(out);
    int h = 0;   /* merge: the extras inserted before rank r come before its entries */
    for (int w = 0; w < t->W; w++)
        for (uint64_t x = t->acc[w]; x; x &= x - 1) {
            int64_t R = (int64_t)w * 64 + __builtin_ctzll(x);
            for (; h < t->nhit && 16 * (int64_t)t->x_ins[t->x_hit[h] >> 4] <= R; h++) *dst++ = table_extra_key(t, t->x_hit[h]);
            *dst++ = table_rank_key(t, R);
        }
    for (; h < t->nhit; h++) *dst++ = table_extra_key(t, t->x_hit[h]);
    return out;
}

/* set_dead(rows, dead): mark the rows (int64 buffer) dead (dead true) or alive */
static PyObject *table_py_set_dead(TableObject *t, PyObject *args) {
    PyObject *o_ids;
    int dead;
    if (!PyArg_ParseTuple(args, "Op", &o_ids, &dead)) return NULL;
    if (!t->acc) { PyErr_SetString(PyExc_ValueError, "Table is not initialised"); return NULL; }
    Py_buffer b;
    if (PyObject_GetBuffer(o_ids, &b, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    Py_ssize_t k = b.len / 8;
    PyBuffer_Release(&b);
    if (get_i64(o_ids, &b, k, "rows") < 0) return NULL;
    const int64_t *ids = b.buf;
    for (Py_ssize_t q = 0; q < k; q++)
        if (ids[q] < 0 || ids[q] >= t->N) {
            PyBuffer_Release(&b);
            PyErr_SetString(PyExc_IndexError, "set_dead: no such row");
            return NULL;
        }
    for (Py_ssize_t q = 0; q < k; q++) {
        int64_t e = ids[q];
        if (t->edead[e] == (dead ? 1 : 0)) continue;
        t->edead[e] = dead ? 1 : 0;
        t->ndead += dead ? 1 : -1;
        if (e < t->N0) {
            int32_t r = t->row_rank[e];
            if (dead) t->rdead[r >> 6] |= 1ull << (r & 63);
            else t->rdead[r >> 6] &= ~(1ull << (r & 63));
        }
    }
    PyBuffer_Release(&b);
    return Py_NewRef(Py_None);
}

/* edges(key) -> the oriented edges of an entry */
static PyObject *table_py_edges(TableObject *t, PyObject *arg) {
    long long k = PyLong_AsLongLong(arg);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 0 || k >= 16 * (long long)t->N) { PyErr_SetString(PyExc_IndexError, "no such entry"); return NULL; }
    uint32_t e[4];
    table_edges(t, k, e);
    return Py_BuildValue("(IIII)", e[0], e[1], e[2], e[3]);
}

static PyObject *table_get_n(TableObject *t, void *c) { (void)c; return PyLong_FromLong(t->n); }
static PyObject *table_get_N(TableObject *t, void *c) { (void)c; return PyLong_FromLong(t->N); }
static PyObject *table_get_E(TableObject *t, void *c) { (void)c; return PyLong_FromLong(t->E); }
static PyObject *table_get_dead(TableObject *t, void *c) { (void)c; return PyLong_FromLong(t->ndead); }
static PyObject *table_get_room(TableObject *t, void *c) { (void)c; return PyLong_FromLong(t->cap); }

static PyMethodDef table_methods[] = {
    {"lookup", (PyCFunction)table_py_lookup, METH_VARARGS,
     "lookup(masks, values, m1, levels=0) -> bytes of int64 entry keys (16 * row + t) satisfying the "
     "constraint (and of a ladder level in the mask levels, 0: any), (hash, t) order"},
    {"edges", (PyCFunction)table_py_edges, METH_O, "edges(key) -> oriented (top, right, bottom, left)"},
    {"set_dead", (PyCFunction)table_py_set_dead, METH_VARARGS,
     "set_dead(rows, dead): rows (int64) dead (left out of every lookup) or alive again"},
    {"extend", (PyCFunction)table_py_extend, METH_VARARGS,
     "extend(edges_new, rows, ins, pins, m, levels_new): append rows (levels_new: theirs); rows/ins/pins/m "
     "describe every extra, hash order"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef table_getset[] = {
    {"n", (getter)table_get_n, NULL, "tile side", NULL},
    {"N", (getter)table_get_N, NULL, "rows (canonical tiles)", NULL},
    {"E", (getter)table_get_E, NULL, "extras (rows not in the bitsets)", NULL},
    {"dead", (getter)table_get_dead, NULL, "rows marked dead", NULL},
    {"room", (getter)table_get_room, NULL, "rows the by-row arrays hold before extend reallocates them", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stitcher._core.Table",
    .tp_basicsize = sizeof(TableObject),
    .tp_dealloc = (destructor)table_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Table(n, N, edges, pins, m, order, levels, plan, pinmap): one tile size of the edge index as "
              "bitsets over its canonical tiles, asked in the 16 orientations",
    .tp_methods = table_methods,
    .tp_getset = table_getset,
    .tp_init = (initproc)table_init,
    .tp_new = PyType_GenericNew,
};
