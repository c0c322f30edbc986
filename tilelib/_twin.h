/* tilelib/_twin.h: what every C twin exports about its own build (see tilelib/native.py).
 *
 * setup.py compiles each extension with TWIN_SOURCES (its C files and headers, comma-separated)
 * and TWIN_DIGEST (tilelib.native.source_digest of them); twin_stamp() adds both to the module
 * as SOURCES and SOURCE_DIGEST, so tilelib.native.load_twin can tell a stale build. */
#ifndef TILES_TWIN_H
#define TILES_TWIN_H

#include <Python.h>

#ifndef TWIN_SOURCES
#define TWIN_SOURCES ""
#endif
#ifndef TWIN_DIGEST
#define TWIN_DIGEST ""
#endif

/* m with SOURCES and SOURCE_DIGEST added; NULL (m released) on failure */
static inline PyObject *twin_stamp(PyObject *m) {
    if (m && (PyModule_AddStringConstant(m, "SOURCES", TWIN_SOURCES) < 0
              || PyModule_AddStringConstant(m, "SOURCE_DIGEST", TWIN_DIGEST) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

#endif
