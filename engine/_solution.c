/* engine/_solution.c: generator.solution._attempt in C (random_attempt), for n > 6 where a
 * random valid grid is drawn by a budgeted search rather than from the table of all grids.
 *
 * The same search, draw for draw: row i is drawn uniformly by the stream (tilelib/_stream.h, so
 * the stream advances as Stream.randbelow would) from the valid lines, ascending, that the
 * columns' automaton states still allow — swap-with-last without replacement, a draw only when
 * more than one candidate is left — skipping a line an earlier row already is; every placed row
 * counts against the budget; a dead end backtracks; a full grid must have distinct columns.
 * The column automaton is generator.solution._column_automaton's: a column's state is (ones,
 * zeros, bottom value, bottom run), and a value is allowed when the column can still be finished
 * with n/2 of each and no three equal in a row (_can_finish). The tests check it against the
 * Python reference on many streams, budgets and sides.
 */
#include "_kernel.h"
#include "../tilelib/_stream.h"

#define HALF_MAX (MAXN / 2)
#define NSTATE ((HALF_MAX + 1) * (HALF_MAX + 1) * 2 * 3)

typedef struct {
    int ready;
    int16_t t[2][NSTATE]; /* t[val][state]: the state after val, -1 when the column cannot be finished */
} Automaton;

static Automaton AUTO[MAXN + 1];

static int state_of(int half, int o, int z, int v, int run) { return ((o * (half + 1) + z) * 2 + v) * 3 + run; }

/* _can_finish: a column whose bottom run is `run` cells of v, needing need1 more ones and need0 zeros */
static int can_finish(int v, int run, int need1, int need0, int8_t memo[2][4][HALF_MAX + 1][HALF_MAX + 1]) {
    if (need1 < 0 || need0 < 0 || run > 2) return 0;
    if (need1 == 0 && need0 == 0) return 1;
    int8_t *m = &memo[v][run][need1][need0];
    if (*m >= 0) return *m;
    int ok = (need1 && !(v == 1 && run >= 2) && can_finish(1, v == 1 ? run + 1 : 1, need1 - 1, need0, memo))
             || (need0 && !(v == 0 && run >= 2) && can_finish(0, v == 0 ? run + 1 : 1, need1, need0 - 1, memo));
    return *m = (int8_t)ok;
}

static const Automaton *automaton(int n) {
    Automaton *a = &AUTO[n];
    if (a->ready) return a;
    int half = n / 2;
    int8_t memo[2][4][HALF_MAX + 1][HALF_MAX + 1];
    memset(memo, -1, sizeof memo);
    for (int o = 0; o <= half; o++)
        for (int z = 0; z <= half; z++)
            for (int v = 0; v < 2; v++)
                for (int run = 0; run < 3; run++)
                    for (int val = 0; val < 2; val++) {
                        int o2 = o + val, z2 = z + 1 - val, r2 = (v == val && run) ? run + 1 : 1;
                        a->t[val][state_of(half, o, z, v, run)] =
                            can_finish(val, r2, half - o2, half - z2, memo) ? (int16_t)state_of(half, o2, z2, val, r2) : -1;
                    }
    a->ready = 1;
    return a;
}

typedef struct {
    int n;
    const Tables *tab;
    const Automaton *au;
    PyObject *stream;
    long limit, placed;
    uint32_t rows[MAXN];
    int16_t st[MAXN + 1][MAXN]; /* st[i][b]: state of the column at bit b after i rows */
} Search;

static int columns_distinct(const Search *s) {
    uint32_t cols[MAXN];
    for (int b = 0; b < s->n; b++) {
        uint32_t c = 0;
        for (int r = 0; r < s->n; r++) c = (c << 1) | ((s->rows[r] >> b) & 1);
        for (int q = 0; q < b; q++)
            if (cols[q] == c) return 0;
        cols[b] = c;
    }
    return 1;
}

/* 1: found (rows filled), 0: dead end, -1: error set, -2: out of budget */
static int fill(Search *s, int i) {
    const int n = s->n;
    if (i == n) return columns_distinct(s);
    uint32_t must0 = 0, must1 = 0;
    for (int b = 0; b < n; b++) {
        int q = s->st[i][b];
        if (s->au->t[1][q] < 0) must0 |= 1u << b;
        if (s->au->t[0][q] < 0) must1 |= 1u << b;
    }
    if (must0 & must1) return 0;
    uint16_t cands[MAXP];
    int left = 0;
    for (int j = 0; j < s->tab->P; j++) {
        uint32_t p = s->tab->pats[j];
        if (!(p & must0) && (p & must1) == must1) cands[left++] = (uint16_t)p;
    }
    while (left) {
        uint64_t k = 0;
        if (left > 1 && stream_randbelow(s->stream, (uint64_t)left, &k) < 0) return -1;
        uint32_t row = cands[k];
        cands[k] = cands[--left];
        int seen = 0;
        for (int r = 0; r < i; r++) seen |= s->rows[r] == row;
        if (seen) continue;
        if (++s->placed > s->limit) return -2;
        s->rows[i] = row;
        for (int b = 0; b < n; b++) s->st[i + 1][b] = s->au->t[(row >> b) & 1][s->st[i][b]];
        int got = fill(s, i + 1);
        if (got) return got;
    }
    return 0;
}

PyObject *py_random_attempt(PyObject *self, PyObject *args) {
    int n;
    long limit;
    PyObject *stream;
    (void)self;
    if (!PyArg_ParseTuple(args, "iOl", &n, &stream, &limit)) return NULL;
    const Tables *tab = checked_tables(n);
    if (!tab) return NULL;
    Search s = {.n = n, .tab = tab, .au = automaton(n), .stream = stream, .limit = limit};
    for (int b = 0; b < n; b++) s.st[0][b] = (int16_t)state_of(n / 2, 0, 0, 0, 0);
    int got = fill(&s, 0);
    if (got == -1) return NULL;
    if (got == -2) Py_RETURN_NONE;
    if (got == 0) return PyErr_Format(PyExc_AssertionError, "no valid %dx%d grid found", n, n);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    for (int r = 0; r < n; r++) {
        PyObject *v = PyLong_FromUnsignedLong(s.rows[r]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, r, v);
    }
    return out;
}
