-- tiles library schema, version 2 (see docs/FORMAT.md §5 and docs/DECISIONS.md; 2 adds `spent`).
-- Append-only and content-addressed: rows are inserted with INSERT OR IGNORE
-- and never updated, except the bookkeeping columns of `misses`.

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- One row per tile, stored in canonical orientation (FORMAT §3).
-- Edge ints are those of the canonical orientation; queries in any of the 16
-- orientations are expanded over the transforms (tilelib.query).
CREATE TABLE IF NOT EXISTS tiles (
    hash              TEXT PRIMARY KEY,   -- sha256 hex of n|solution|givens|seam_mask
    n                 INTEGER NOT NULL,
    version           INTEGER NOT NULL,   -- generator version that made the row
    seam_mask         INTEGER NOT NULL,   -- sides assumed known when thinned (1 top, 2 right, 4 bottom, 8 left)
    top               INTEGER NOT NULL,
    right             INTEGER NOT NULL,
    bottom            INTEGER NOT NULL,
    left              INTEGER NOT NULL,
    m                 INTEGER NOT NULL,   -- isolated multiplicity
    blank             REAL    NOT NULL,   -- fraction of cells not given
    ladder            INTEGER NOT NULL,   -- highest ladder level used (5: L4 cannot finish)
    bifurcations      INTEGER NOT NULL,
    used_unique       INTEGER NOT NULL,
    needs_unique      INTEGER NOT NULL,
    needs_bifurcation INTEGER NOT NULL,
    pins              INTEGER NOT NULL,   -- OR of alt_sides nibbles
    pin_depth         INTEGER NOT NULL,
    alt_sides         INTEGER NOT NULL,   -- nibble per alternative, first in the lowest nibble
    solution          BLOB    NOT NULL,
    givens            BLOB    NOT NULL,
    flip              BLOB    NOT NULL,
    alts              BLOB    NOT NULL,
    created           INTEGER NOT NULL    -- unix seconds
);

-- Query 1 and 2 of FORMAT §5: every side is the leading column of one index and
-- every adjacent pair of sides is covered by one index (cyclic order).
CREATE INDEX IF NOT EXISTS tiles_top_right   ON tiles (n, top, right);
CREATE INDEX IF NOT EXISTS tiles_right_bottom ON tiles (n, right, bottom);
CREATE INDEX IF NOT EXISTS tiles_bottom_left ON tiles (n, bottom, left);
CREATE INDEX IF NOT EXISTS tiles_left_top    ON tiles (n, left, top);
-- Query 3: difficulty features and seam mask.
CREATE INDEX IF NOT EXISTS tiles_difficulty  ON tiles (n, ladder, m, seam_mask);

-- A constraint the library could not answer (FORMAT §8). Stored in canonical
-- orientation of the constraint; identical misses are one row with a counter.
CREATE TABLE IF NOT EXISTS misses (
    id          INTEGER PRIMARY KEY,
    n           INTEGER NOT NULL,
    side_mask   INTEGER NOT NULL,         -- sides with at least one fixed cell
    top         INTEGER NOT NULL,
    right       INTEGER NOT NULL,
    bottom      INTEGER NOT NULL,
    left        INTEGER NOT NULL,
    top_mask    INTEGER NOT NULL,         -- which cells of each side are fixed
    right_mask  INTEGER NOT NULL,
    bottom_mask INTEGER NOT NULL,
    left_mask   INTEGER NOT NULL,
    packing     TEXT,                     -- packing id that first asked
    first_seen  INTEGER NOT NULL,
    last_seen   INTEGER NOT NULL,
    count       INTEGER NOT NULL DEFAULT 1,
    nofit       INTEGER NOT NULL DEFAULT 0, -- 1: proven to have no completion
    tile        TEXT,                     -- hash of the tile that drained it
    UNIQUE (n, top, right, bottom, left, top_mask, right_mask, bottom_mask, left_mask)
);
CREATE INDEX IF NOT EXISTS misses_open ON misses (nofit, tile, n);

CREATE TABLE IF NOT EXISTS manifests (
    day          TEXT PRIMARY KEY,        -- ISO date
    seed_commit  TEXT NOT NULL,
    json         TEXT NOT NULL,
    created      INTEGER NOT NULL
);

-- The fair rule's ledger (FORMAT §5, §9; tilelib/spent.py): one row per (canonical solution of
-- side n >= 10, board) for every board this library stored. Append-only, merged as a union.
CREATE TABLE IF NOT EXISTS spent (
    solution TEXT    NOT NULL,        -- sha256 hex of n|canonical solution BLOB
    board    TEXT    NOT NULL,        -- the manifest's digest (sha256 of its text)
    n        INTEGER NOT NULL,
    day      TEXT    NOT NULL,        -- the board's ISO day
    created  INTEGER NOT NULL,        -- unix seconds
    PRIMARY KEY (solution, board)
);

-- Tamper evidence (issue 11; FORMAT §5). tiles never updates or deletes a tiles or
-- manifests row itself (a rebuilt day's manifest is a new row), so any such change
-- marks the file; the next publish check then re-verifies every row instead of only
-- those added since the last verified push. 'verified:' keys never enter a snapshot.
CREATE TRIGGER IF NOT EXISTS tiles_updated AFTER UPDATE ON tiles
BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'tiles updated'); END;
CREATE TRIGGER IF NOT EXISTS tiles_deleted AFTER DELETE ON tiles
BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'tiles deleted'); END;
CREATE TRIGGER IF NOT EXISTS manifests_updated AFTER UPDATE ON manifests
BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'manifests updated'); END;
CREATE TRIGGER IF NOT EXISTS spent_updated AFTER UPDATE ON spent
BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'spent updated'); END;
CREATE TRIGGER IF NOT EXISTS spent_deleted AFTER DELETE ON spent
BEGIN INSERT OR REPLACE INTO meta (key, value) VALUES ('verified:dirty', 'spent deleted'); END;
