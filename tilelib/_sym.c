/* tilelib._sym: the 16 transforms of FORMAT §3 on grid BLOBs, and the canonical
 * transform, in C. The C twin of tilelib.symmetry.apply_grid/apply_mask and
 * tilelib.tile.Tile.canonical_transform (which stay the reference: the tests
 * check both agree on every transform). Canonicalising a tile was ~0.1 ms of
 * numpy calls, more than thinning a 6x6 puzzle; here it is a few microseconds.
 *
 * A transform t = 8k + 4f + r maps new cell (i, j) to an old cell: mirror when
 * f (g'[i][j] = g[i][n-1-j]), then r clockwise turns (g'[i][j] = g[n-1-j][i]),
 * then complement the values when k (grids only, not masks). The source cell of
 * every new cell is tabulated once per (n, t).
 *
 * Python API (BLOBs as FORMAT §2: row-major, MSB first, zero padded; n even 2..16):
 *   transform(n, blob, t, complement) -> bytes
 *   canonical(n, solution, givens, seam_images) -> t   (seam_images: 16 ints, the
 *       seam mask under each t; the smallest key solution'+givens'+seam', ties: smallest t)
 *   canonical_rows(n, solution, givens, seam_images) -> (t, solution rows, givens rows)
 *       the same t and the image's grids as row ints (what the generator rates)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_twin.h"

#define MAXN 16
#define MAXC (MAXN * MAXN)
#define MAXB ((MAXC + 7) / 8)

static uint16_t SRC[MAXN + 1][16][MAXC];
static int READY[MAXN + 1];

static void tables(int n) {
    if (READY[n]) return;
    for (int t = 0; t < 16; t++) {
        int f = (t >> 2) & 1, r = t & 3;
        int si[MAXC], sj[MAXC], ti[MAXC], tj[MAXC];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                si[i * n + j] = i;
                sj[i * n + j] = f ? n - 1 - j : j;
            }
        for (int k = 0; k < r; k++) {               /* g'[i][j] = g[n-1-j][i] */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    int p = (n - 1 - j) * n + i;
                    ti[i * n + j] = si[p];
                    tj[i * n + j] = sj[p];
                }
            memcpy(si, ti, sizeof(int) * n * n);
            memcpy(sj, tj, sizeof(int) * n * n);
        }
        for (int p = 0; p < n * n; p++) SRC[n][t][p] = (uint16_t)(si[p] * n + sj[p]);
    }
    READY[n] = 1;
}

static void unpack(const unsigned char *b, int cells, unsigned char *out) {
    for (int p = 0; p < cells; p++) out[p] = (b[p >> 3] >> (7 - (p & 7))) & 1;
}

static void pack_image(int n, int t, const unsigned char *cells, int complement, unsigned char *out) {
    const int nc = n * n, nb = (nc + 7) / 8;
    const uint16_t *src = SRC[n][t];
    memset(out, 0, nb);
    for (int p = 0; p < nc; p++)
        if (cells[src[p]] ^ complement) out[p >> 3] |= (unsigned char)(0x80 >> (p & 7));
}

static int get_blob(PyObject *o, int n, const unsigned char **buf, const char *what) {
    if (!PyBytes_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes", what);
        return -1;
    }
    if (PyBytes_GET_SIZE(o) != (n * n + 7) / 8) {
        PyErr_Format(PyExc_ValueError, "%s must be %d bytes for n=%d", what, (n * n + 7) / 8, n);
        return -1;
    }
    *buf = (const unsigned char *)PyBytes_AS_STRING(o);
    return 0;
}

static int check_n(int n) {
    if (n < 2 || n > MAXN || n % 2) {
        PyErr_Format(PyExc_ValueError, "n must be even in 2..%d, got %d", MAXN, n);
        return -1;
    }
    tables(n);
    return 0;
}

static PyObject *py_transform(PyObject *self, PyObject *args) {
    int n, t, complement;
    PyObject *blob;
    const unsigned char *b;
    if (!PyArg_ParseTuple(args, "iOip", &n, &blob, &t, &complement)) return NULL;
    if (check_n(n) < 0 || get_blob(blob, n, &b, "blob") < 0) return NULL;
    if (t < 0 || t > 15) return PyErr_Format(PyExc_ValueError, "transform %d is not in 0..15", t);
    unsigned char cells[MAXC], out[MAXB];
    unpack(b, n * n, cells);
    pack_image(n, t, cells, complement && (t >> 3), out);
    return PyBytes_FromStringAndSize((const char *)out, (n * n + 7) / 8);
}

/* The canonical transform of (solution, givens, seam_images) in args; best gets its key (the image's
 * solution BLOB, givens BLOB, seam byte). -1 with a Python error set on bad arguments. */
static int canonical_key(PyObject *args, int *pn, unsigned char *best) {
    int n;
    PyObject *ps, *pg, *pseams;
    const unsigned char *bs, *bg;
    if (!PyArg_ParseTuple(args, "iOOO", &n, &ps, &pg, &pseams)) return -1;
    if (check_n(n) < 0 || get_blob(ps, n, &bs, "solution") < 0 || get_blob(pg, n, &bg, "givens") < 0)
        return -1;
    int seams[16];
    PyObject *fast = PySequence_Fast(pseams, "seam_images must be a sequence");
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 16) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "seam_images must hold 16 ints");
        return -1;
    }
    for (int t = 0; t < 16; t++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, t));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        seams[t] = (int)(v & 0xff);
    }
    Py_DECREF(fast);
    const int nb = (n * n + 7) / 8;
    unsigned char cs[MAXC], cg[MAXC], key[2 * MAXB + 1];
    unpack(bs, n * n, cs);
    unpack(bg, n * n, cg);
    int best_t = -1;
    for (int t = 0; t < 16; t++) {
        pack_image(n, t, cs, t >> 3, key);
        pack_image(n, t, cg, 0, key + nb);
        key[2 * nb] = (unsigned char)seams[t];
        if (best_t < 0 || memcmp(key, best, 2 * nb + 1) < 0) {
            memcpy(best, key, 2 * nb + 1);
            best_t = t;
        }
    }
    *pn = n;
    return best_t;
}

static PyObject *py_canonical(PyObject *self, PyObject *args) {
    unsigned char best[2 * MAXB + 1];
    int n, t = canonical_key(args, &n, best);
    return t < 0 ? NULL : PyLong_FromLong(t);
}

/* The n row ints (bit n-1-c = cell (r, c)) of a BLOB. */
static PyObject *blob_row_list(int n, const unsigned char *b) {
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int r = 0; r < n; r++) {
        unsigned long v = 0;
        for (int c = 0; c < n; c++) {
            int p = r * n + c;
            v = (v << 1) | ((b[p >> 3] >> (7 - (p & 7))) & 1);
        }
        PyObject *x = PyLong_FromUnsignedLong(v);
        if (!x) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, r, x);
    }
    return out;
}

static PyObject *py_canonical_rows(PyObject *self, PyObject *args) {
    unsigned char best[2 * MAXB + 1];
    int n, t = canonical_key(args, &n, best);
    if (t < 0) return NULL;
    PyObject *sol = blob_row_list(n, best), *giv = sol ? blob_row_list(n, best + (n * n + 7) / 8) : NULL;
    if (!giv) { Py_XDECREF(sol); return NULL; }
    return Py_BuildValue("(iNN)", t, sol, giv);
}

static PyMethodDef methods[] = {
    {"transform", py_transform, METH_VARARGS,
     "transform(n, blob, t, complement) -> bytes: the BLOB's grid under transform t "
     "(values complemented when t >= 8 and complement is true)"},
    {"canonical", py_canonical, METH_VARARGS,
     "canonical(n, solution, givens, seam_images) -> t with the smallest key (FORMAT §3)"},
    {"canonical_rows", py_canonical_rows, METH_VARARGS,
     "canonical_rows(n, solution, givens, seam_images) -> (t, solution rows, givens rows) of the "
     "canonical image (row ints, bit n-1-c = cell (r, c))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT, "tilelib._sym",
    "FORMAT §3 transforms and the canonical transform on BLOBs (C twin of tilelib.symmetry/tile).", -1, methods,
};

PyMODINIT_FUNC PyInit__sym(void) { return twin_stamp(PyModule_Create(&moddef)); }
