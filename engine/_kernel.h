/* engine/_kernel.h: what the parts of the engine._kernel extension share.
 *
 * _kernel.c  tables of valid lines per n, row parsing, the module definition;
 * _count.c   the line-domain counter and backbone (count_rows, backbone_rows);
 * _ladder.c  the difficulty ladder (rate_rows);
 * _complete.c completion of square windows by line domains (complete_windows);
 * _solution.c generator.solution's budgeted draw of a random valid grid (random_attempt).
 */
#ifndef ENGINE_KERNEL_H
#define ENGINE_KERNEL_H

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
    uint64_t *linedom;                 /* n <= LINEDOM_MAXN (one word): linedom[known << n | vals] = the
                                          domain line_domain computes, in one lookup; else NULL */
} Tables;

#define LINEDOM_MAXN 8                 /* 2^16 words (512 KiB) at n = 8; P(8) = 34 fits one word */


/* d = every valid pattern of the tables' side: P bits over W words (a line with nothing known). */
static inline void full_domain(const Tables *t, uint64_t *d) {
    for (int w = 0; w < t->W; w++) {
        int lo = w * 64, hi = lo + 64 < t->P ? lo + 64 : t->P;
        d[w] = (hi - lo == 64) ? ~0ull : ((1ull << (hi - lo)) - 1);
    }
}

/* d = the valid patterns that agree with a line's known positions (line-int bits of `known`,
 * values in `vals`). */
static inline void line_domain(const Tables *t, uint32_t vals, uint32_t known, uint64_t *d) {
    full_domain(t, d);
    while (known) {
        int b = __builtin_ctz(known);
        known &= known - 1;
        const uint64_t *m = t->cm[t->n - 1 - b][(vals >> b) & 1];
        for (int w = 0; w < t->W; w++) d[w] &= m[w];
    }
}

/* Scan the domain d of a line whose open positions are `open` (line-int bits): *seen0 / *seen1 get
 * the open positions where some pattern of the domain has a 0 / a 1: the patterns' OR and their
 * complements' OR, walked pattern by pattern until every open position has shown both values, so
 * a large domain usually stops within its first few patterns; only forced positions need the whole
 * domain. 0 when the domain is empty. (_count.c's and _complete.c's propagation, _ladder.c's agreed.) */
static inline int scan_domain(const Tables *t, const uint64_t *d, uint32_t open, uint32_t *seen0,
                              uint32_t *seen1) {
    uint32_t s0 = 0, s1 = 0;
    int any = 0;
    for (int w = 0; w < t->W; w++)
        for (uint64_t x = d[w]; x; x &= x - 1) {
            const uint32_t p = t->pats[w * 64 + __builtin_ctzll(x)];
            any = 1;
            s1 |= p;
            s0 |= ~p;
            if (!(open & ~(s0 & s1))) goto done;
        }
done:
    *seen0 = s0 & open;
    *seen1 = s1 & open;
    return any;
}

/* The tables of side n (even, 2..MAXN), built on first use; NULL when out of memory. */
Tables *tables_for(int n);
/* Check n (even, 2..MAXN) and fetch its tables; NULL with a Python error set otherwise. */
const Tables *checked_tables(int n);
/* 1 when rows (n row ints) form a valid grid: every row and column a valid line, all rows distinct,
 * all columns distinct (the ladder's shortcut needs a true solution, _ladder.c). */
int valid_grid(const Tables *t, const uint32_t *rows);
/* Read n row ints of n bits from a Python sequence; -1 with ValueError/TypeError set. */
int parse_rows(PyObject *seq, int n, uint32_t *out, const char *what);
/* random_attempt(n, stream, limit) (_solution.c) */
PyObject *py_random_attempt(PyObject *self, PyObject *args);

/* The ladder's levels, one per technique of engine.ladder.TECHNIQUES; _ladder.c's table TECHNIQUES
 * lists them cheapest first with their names (techniques() exports it; tests/test_ladder.py holds it
 * equal to the Python list). Level L is bit L-1 of an `enabled` mask. */
enum { L_RUNS = 1, L_BALANCE = 2, L_UNIQUE = 3, L_BIFURCATION = 4, N_LEVELS = 4 };
#define LEVEL_BIT(level) (1 << ((level) - 1))
#define ALL_LEVELS ((1 << N_LEVELS) - 1)

/* The standard solve with the levels in `enabled` (bit level-1) solves vals/known (_ladder.c); z is
 * a valid grid agreeing with the known cells (bifurcation trials then skip z's value) or NULL. */
int ladder_solves(const Tables *t, int n, const uint32_t *vals, const uint32_t *known, int enabled,
                  const uint32_t *z);
int ladder_solves_without(const Tables *t, int n, const uint32_t *sol, const uint32_t *known, int enabled,
                          const uint32_t *z, int r, int c);

PyObject *py_count_rows(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_backbone_rows(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_rate_rows(PyObject *self, PyObject *args);
PyObject *py_techniques(PyObject *self, PyObject *unused);
PyObject *py_thin_rows(PyObject *self, PyObject *args);
PyObject *py_thin_ladder(PyObject *self, PyObject *args);
PyObject *py_complete_windows(PyObject *self, PyObject *args);

#endif
