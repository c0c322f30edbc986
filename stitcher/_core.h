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
 * _index.c  Table: one tile size of the in-memory index as bitsets over the
 *           entries in (hash, t) order (twin of index._SizeIndex.lookup);
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
    int n, N, W;                 /* side, entries, 64-bit words per bitset */
    int N0;                      /* entries 0..N0-1 are ranked in the bitsets; N0..N-1 are extras */
    int cap;                     /* room of the by-entry arrays oe, edead, lv (>= N; see table_room) */
    uint16_t (*oe)[4];           /* oriented edges by entry id */
    int32_t *rank_entry;         /* entry id of each rank ((hash, t) order) */
    uint64_t *all, *m1, *pin;    /* every rank; m = 1 ranks; pin[16][W]: pin bit S set */
    uint64_t *cb;                /* cb[((s * n + p) * 2 + b) * W]: side s has bit p == b */
    int32_t *vidx;               /* vidx[s << n | v]: slot of whole side s == v, or -1 */
    int32_t *post_off, *post;    /* ranks with whole side s == v: post[post_off[slot] .. post_off[slot+1]),
                                  * ascending (a posting list, not a bitset: memory O(entries), not
                                  * O(values x entries), which at n = 16 was ~5,000 bitsets of N bits) */
    int32_t *dense;              /* dense[slot]: its bitset in vb when its list holds >= W ranks, else -1 */
    uint64_t *vb;                /* the bitsets of the dense slots (at most 4N / W = 256 of them) */
    uint16_t (*oe_rank)[4];      /* oriented edges by rank (a posting walk reads them in order) */
    uint64_t *acc, *pool;        /* scratch (one lookup at a time: the GIL is held throughout) */
    int32_t *prefix;
    /* extras (entries added after the bitsets were built), in (hash, t) order: id, insertion
     * point among the ranks (how many ranked entries sort before it), pin bitmap, m == 1 */
    int E;
    int32_t *x_id, *x_ins;
    uint16_t *x_pin;
    uint8_t *x_m1;
    int nhit;                    /* scratch: the extras the last lookup matched (x_hit), a pool's */
    int32_t *x_hit, *x_pool, *x_mpos;   /* extras and their merged positions (x_pool, x_mpos) */
    /* dead entries (the fair rule: a solution already on the board): no lookup returns them */
    int ndead;                   /* dead entries; 0 skips the test altogether */
    uint8_t *edead;              /* by entry id (N of them) */
    uint64_t *rdead;             /* by rank, a bitset of W words (ranked entries only) */
    int32_t *entry_rank;         /* rank of each ranked entry id (N0 of them) */
    /* ladder levels 0..7 (0: unknown): a lookup can keep only the entries of a set of levels (the
     * candidate pools of a difficulty profile, stitcher/profile.py) without a table of their own */
    uint8_t *lv;                 /* by entry id (N of them) */
    uint8_t *lv_rank;            /* by rank (N0 of them: a posting walk reads them in order) */
    uint64_t *lvb;               /* lvb[L * W]: the ranks of level L */
} TableObject;
extern PyTypeObject TableType;

#define TABLE_LEVELS 8           /* ladder levels a table tells apart (0..7) */

/* Candidates of a constraint: ranked ones as the bitset t->acc, extras as t->x_hit[0..nhit-1];
 * ``levels``: bit L set keeps the entries of ladder level L (0 keeps every entry). Returns 0, or
 * -1 with a Python error on bad input. */
int table_lookup(TableObject *t, const uint32_t masks[4], const uint32_t vals[4], int m1, uint32_t levels);
int parse_quad(PyObject *seq, uint32_t out[4], const char *what);

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
