/* tilelib/_stream.h: draws from a tilelib.rng.Stream in C, the bytes consumed exactly as in Python.
 *
 * A Stream keeps its current SHA-256 block in its public ``block`` and the read position in ``pos``
 * (documented there): a draw reads its bytes there when the block holds them and otherwise calls
 * ``stream.bytes(k)`` (which refills), so the stream advances as ``Stream.randbelow`` would.
 * Included by every C twin that draws (stitcher/_core.c, engine/_solution.c). */
#ifndef TILES_STREAM_H
#define TILES_STREAM_H

#include <Python.h>
#include <stdint.h>

static PyObject *S_block, *S_pos, *S_bytes;

/* the attribute names, interned once per module */
static int stream_names(void) {
    if (S_block) return 0;
    S_block = PyUnicode_InternFromString("block");
    S_pos = PyUnicode_InternFromString("pos");
    S_bytes = PyUnicode_InternFromString("bytes");
    return (S_block && S_pos && S_bytes) ? 0 : -1;
}

/* the next nb (1..8) bytes of the stream, big-endian */
static int stream_take(PyObject *stream, int nb, uint64_t *out) {
    if (stream_names() < 0) return -1;
    PyObject *buf = PyObject_GetAttr(stream, S_block);
    if (!buf) return -1;
    PyObject *opos = PyObject_GetAttr(stream, S_pos);
    if (!opos) { Py_DECREF(buf); return -1; }
    Py_ssize_t pos = PyLong_AsSsize_t(opos);
    Py_DECREF(opos);
    if (pos == -1 && PyErr_Occurred()) { Py_DECREF(buf); return -1; }
    if (!PyBytes_Check(buf)) { Py_DECREF(buf); PyErr_SetString(PyExc_TypeError, "stream.block is not bytes"); return -1; }
    const unsigned char *p;
    PyObject *got = NULL;
    if (pos >= 0 && pos + nb <= PyBytes_GET_SIZE(buf)) {
        p = (const unsigned char *)PyBytes_AS_STRING(buf) + pos;
        PyObject *np_ = PyLong_FromSsize_t(pos + nb);
        if (!np_ || PyObject_SetAttr(stream, S_pos, np_) < 0) { Py_XDECREF(np_); Py_DECREF(buf); return -1; }
        Py_DECREF(np_);
    } else {
        PyObject *onb = PyLong_FromLong(nb);
        got = onb ? PyObject_CallMethodObjArgs(stream, S_bytes, onb, NULL) : NULL;
        Py_XDECREF(onb);
        if (!got) { Py_DECREF(buf); return -1; }
        if (!PyBytes_Check(got) || PyBytes_GET_SIZE(got) != nb) {
            Py_DECREF(got); Py_DECREF(buf);
            PyErr_SetString(PyExc_TypeError, "stream.bytes(k) must return k bytes");
            return -1;
        }
        p = (const unsigned char *)PyBytes_AS_STRING(got);
    }
    uint64_t v = 0;
    for (int q = 0; q < nb; q++) v = v << 8 | p[q];
    *out = v;
    Py_XDECREF(got);
    Py_DECREF(buf);
    return 0;
}

/* Stream.randbelow(n): k = bit length of n - 1 (at least 1), draw k bits until one is < n */
static int stream_randbelow(PyObject *stream, uint64_t n, uint64_t *out) {
    int k = n > 1 ? 64 - __builtin_clzll(n - 1) : 1;
    int nb = (k + 7) / 8;
    for (;;) {
        uint64_t v;
        if (stream_take(stream, nb, &v) < 0) return -1;
        v >>= 8 * nb - k;
        if (v < n) { *out = v; return 0; }
    }
}

#endif
