#!/usr/bin/env bash
# Build a timing harness around Simon Tatham's Unruly generator, for
# `scripts/bench_generator.py --unruly PATH`.
#
# Usage: bash scripts/build_unruly_harness.sh SRC_DIR [OUT]   (OUT default /tmp/unruly-bench)
#
# SRC_DIR is a checkout of the public source of Simon Tatham's Portable Puzzle
# Collection (the directory holding unruly.c, puzzles.h, random.c, misc.c,
# malloc.c, nullfe.c; its current version: new_game_desc takes a bool). Nothing of
# that source is in this repository: the harness below only calls Unruly's own
# generator entry point (new_game_desc) with unique rows/columns and "normal"
# difficulty, and prints, per puzzle, the CPU milliseconds it took and the
# number of clues. It is written to and compiled in a temporary directory.
# Output of the binary: `PATH N COUNT [SEED]` prints COUNT lines "ms clues".
set -euo pipefail
src=${1:?usage: build_unruly_harness.sh SRC_DIR [OUT]}
out=${2:-/tmp/unruly-bench}
src=$(cd "$src" && pwd)
for f in unruly.c puzzles.h random.c misc.c malloc.c nullfe.c; do
  [[ -f "$src/$f" ]] || { echo "build_unruly_harness: $src/$f is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/harness.c" <<'HARNESS'
/* Timing harness (tiles project): CPU time per call of Unruly's new_game_desc. */
#define main unruly_standalone_main
#include "unruly.c"
#undef main
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n, count, i;
    const char *seed, *err;
    random_state *rs;
    game_params *p;
    if (argc < 3) {
        fprintf(stderr, "usage: %s N COUNT [SEED]\n", argv[0]);
        return 2;
    }
    n = atoi(argv[1]);
    count = atoi(argv[2]);
    seed = argc > 3 ? argv[3] : "tiles-bench";
    rs = random_new(seed, strlen(seed));
    p = default_params();
    p->w2 = p->h2 = n;
    p->unique = true;
    p->diff = DIFF_NORMAL;
    err = validate_params(p, true);
    if (err) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    for (i = 0; i < count; i++) {
        char *aux = NULL, *desc, *q;
        int clues = -1;
        double t0 = cpu_ms(), t1;
        desc = new_game_desc(p, rs, &aux, false);
        t1 = cpu_ms();
        for (q = desc; *q; q++)
            if (*q != 'z' && *q != 'Z')
                clues++;
        printf("%.6f %d\n", t1 - t0, clues);
        sfree(desc);
        sfree(aux);
    }
    free_params(p);
    random_free(rs);
    return 0;
}
HARNESS
cc -O2 -std=gnu99 -w -DSTANDALONE_SOLVER -I"$src" -o "$out" "$work/harness.c" \
  "$src/random.c" "$src/misc.c" "$src/malloc.c" "$src/nullfe.c" -lm
echo "$out"
