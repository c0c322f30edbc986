/* stitcher/_core.h: what the parts of the stitcher._core extension share.
 *
 * stitcher._core is the C twin of the stitcher's per-square hot path, for speed
 * (issue 6: >= 20,000 placements/s on a warm G=1000 board). The Python modules
 * stay the reference and the tests check C == Python:
 *
 * _core.c   the module, the board (constraint read, seam-checked place/remove on
 *           the Board's numpy buffers; twin of board.Board), the project stream's
 *           randbelow on a tilelib.rng.Stream, and choose() (twin of
 *           place.choose over index.MemoryIndex.lookup, with the forward check);
 * _index.c  Table: one tile size of the in-memory index as bitsets over its
 *           canonical tiles in hash order, asked in the 16 orientations (twin of
 *           index._SizeIndex.lookup);
 * _check.c  Checker: the forward check of one square (twin of check.PyForwardCheck).
 *
 * Lines are ints of n <= 16 bits, first cell = MSB (FORMAT §2); n is even, 2..16.
 */
#ifndef STITCHER_CORE_H
#define STITCHER_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define CMAXN 16
#define NONE_AFFECTED (1 << 30)   /* score when no unplaced neighbour side touches the square */

/* ---- board (_core.c) ---- */
typedef struct {
    PyObject_HEAD
    Py_buffer bv, bk, bh;        /* values, known, holders: G*G uint8, C-contiguous */
    uint8_t *v, *k, *h;
    int G;
} BoardObject;
extern PyTypeObject BoardType;

/* masks/values (top, right, bottom, left) of the window (x0, y0, n) from the known cells */
void board_constraint(const BoardObject *b, int x0, int y0, int n, uint32_t masks[4], uint32_t vals[4]);

/* ---- index table (_index.c) ---- */
typedef struct {
    PyObject_HEAD
    int n, N;                    /* side; tiles (rows: canonical tiles, each 16 entries 16 * row + t) */
    int N0;                      /* rows 0..N0-1 are ranked in the bitsets; N0..N-1 are extras */
    int Wc, W;                   /* 64-bit words per bitset over the N0 ranks; over the 16 * N0 entry ranks */
    int cap;                     /* room of the by-row arrays ce, edead, lv (>= N; see table_room) */
    uint8_t plan[16][4];         /* side s of transform t: canonical side plan & 3, reversed if & 4,
                                  * complemented if & 8 (symmetry.EDGE_MAP) */
    uint8_t pinmap[16][16];      /* pin bit S of transform t of a tile = its canonical pin bit pinmap[t][S] */
    uint16_t (*ce)[4];           /* canonical edges by row */
    int32_t *rank_row, *row_rank;   /* row of each rank (hash order) and back (N0 of each) */
    uint64_t *all, *m1;          /* over ranks: every rank; m = 1 */
    uint64_t *pin;               /* pin[S * W + w]: over entry ranks 16 * rank + t, pin bit S set */
    uint64_t *cb;                /* cb[((s * n + p) * 2 + b) * Wc]: canonical side s has bit p == b */
    int32_t *vidx;               /* vidx[s << n | v]: slot of canonical side s == v, or -1 */
    int32_t *post_off, *post;    /* ranks with canonical side s == v: post[post_off[slot] .. post_off[slot+1]),
                                  * ascending (a posting list, not a bitset: memory O(rows), not
                                  * O(values x rows)) */
    int32_t *dense;              /* dense[slot]: its bitset in vb when its list holds >= Wc ranks, else -1 */
    uint64_t *vb;                /* the bitsets of the dense slots (at most 4 N0 / Wc = 256 of them) */
    uint16_t (*ce_rank)[4];      /* canonical edges by rank (a posting walk reads them in order) */
    uint64_t *acc;               /* the last lookup's entry ranks (W words; the GIL is held throughout) */
    uint64_t *cacc;              /* scratch: one transform's ranks (Wc words) */
    int32_t *prefix;
    /* extras (rows added after the bitsets were built), in hash order: row, insertion point among
     * the ranks (how many ranked rows sort before it), canonical pin bitmap, m == 1 */
    int E;
    int32_t *x_row, *x_ins;
    uint16_t *x_pin;
    uint8_t *x_m1;
    int nhit;                    /* scratch: the extra entries the last lookup matched, as 16 * q + t */
    int32_t *x_hit, *x_pool, *x_mpos;   /* (16 E each) a pool's extra entries and their merged positions */
    /* dead rows (the fair rule: a solution already on the board): no lookup returns their entries */
    int ndead;                   /* dead rows; 0 skips the test altogether */
    uint8_t *edead;              /* by row (N of them) */
    uint64_t *rdead;             /* by rank, a bitset of Wc words (ranked rows only) */
    /* ladder levels 0..7 (0: unknown): a lookup can keep only the rows of a set of levels (the
     * candidate pools of a difficulty profile, stitcher/profile.py) without a table of their own */
    uint8_t *lv;                 /* by row (N of them) */
    uint8_t *lv_rank;            /* by rank (N0 of them: a posting walk reads them in order) */
    uint64_t *lvb;               /* lvb[L * Wc]: the ranks of level L */
} TableObject;
extern PyTypeObject TableType;

#define TABLE_LEVELS 8           /* ladder levels a table tells apart (0..7) */

/* Candidates of a constraint: ranked entries as the bitset t->acc over entry ranks (16 * rank + t),
 * extra entries as t->x_hit[0..nhit-1] (16 * q + t, in order); ``levels``: bit L set keeps the
 * rows of ladder level L (0 keeps every row). Returns 0, or -1 with a Python error on bad input. */
int table_lookup(TableObject *t, const uint32_t masks[4], const uint32_t vals[4], int m1, uint32_t levels);
int parse_quad(PyObject *seq, uint32_t out[4], const char *what);
/* The oriented edges of entry key (16 * row + t; 0 <= key < 16 N). */
void table_edges(const TableObject *t, int64_t key, uint32_t e[4]);

/* The entry (key) at entry rank R, of extra entry h (16 * q + t), and the extra's pin bit S. */
static inline int64_t table_rank_key(const TableObject *t, int64_t R) {
    return 16 * (int64_t)t->rank_row[R >> 4] + (R & 15);
}
static inline int64_t table_extra_key(const TableObject *t, int32_t h) {
    return 16 * (int64_t)t->x_row[h >> 4] + (h & 15);
}
static inline int table_extra_pin(const TableObject *t, int32_t h, int S) {
    return (t->x_pin[h >> 4] >> t->pinmap[h & 15][S]) & 1;
}

/* ---- forward check (_check.c) ---- */
typedef struct Row Row;
typedef struct Small Small;
typedef struct {
    PyObject_HEAD
    BoardObject *board;
    TableObject *table;          /* for scores of keys; may be NULL (scores of edges only) */
    PyObject *squares, *adj, *placements, *children;
    Py_ssize_t i;
    int ready, nrows, nsmall;
    Row *rows;                   /* hit rows of open neighbours */
    Small *smalls;               /* n = 6 open neighbours: their whole boundary */
} CheckerObject;
extern PyTypeObject CheckerType;

/* Build the rows from the board as it is now (once); -1 with a Python error. */
int checker_ready(CheckerObject *c);
/* The score of oriented edges e (checker_ready first). */
int checker_score(const CheckerObject *c, const uint32_t e[4]);

/* valid n-bit lines (balanced, no three equal in a row), ascending; count in *P */
const uint16_t *valid_lines_c(int n, int *P);

#endif
