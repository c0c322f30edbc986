"""An independent verifier of a `tiles` daily board, written from docs/FORMAT.md alone.

It imports nothing from the tiles project: only the standard library and
sqlite3. Given a manifest file and a library file it re-implements what
FORMAT.md specifies — the manifest schema (§9), the packing rules (§6), grid
BLOBs and edges (§2), the 16 transforms and the canonical form and content
hash (§3), the stored-tile checks (§4), given a day's bundle the check that it holds exactly the
board's rows (§5, §10 step bundle), board assembly with the seam and clue
checks (§6, §10.3), frontier propagation (§10.4) and, for a ``tile-by-tile``
manifest, the tile-by-tile closure (§10 step closure), where each tile's
candidate solutions are enumerated by brute force from the Takuzu rules (§1)
— plus, with a seed, the commitment of §9 (re-drawing the packing needs the
packers' code, which FORMAT.md does not restate, so that part of §10.5 is out
of scope here). It also re-implements the seed derivation (§9), the random
stream's bytes (§7) and the manifest's one text layout (§9), which is what a
byte-for-byte replay comparison (§13) needs.

    python independent_verifier.py MANIFEST LIBRARY [--seed HEX]

prints ``ok: <status> …`` and exits 0, or ``rejected: <step>: <reason>`` and
exits 5 (2 for a manifest that does not parse). ``verify()`` is the same as a
function that raises ``Rejected``.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import sqlite3
import sys
from functools import cache

SIZES = (6, 8, 10, 12, 14, 16)
HEX64 = re.compile(r"[0-9a-f]{64}")
KEYS = ("format", "day", "board", "seed_commit", "packer", "seed_tile", "tiles", "zones", "clues", "status", "stats")
TILE_COLUMNS = (
    "hash",
    "n",
    "version",
    "seam_mask",
    "top",
    "right",
    "bottom",
    "left",
    "m",
    "blank",
    "ladder",
    "bifurcations",
    "used_unique",
    "needs_unique",
    "needs_bifurcation",
    "pins",
    "pin_depth",
    "alt_sides",
    "solution",
    "givens",
    "flip",
    "alts",
)


class Rejected(Exception):
    """The board fails: ``step`` is FORMAT §10's step name (or "manifest" when it does not parse)."""

    def __init__(self, step: str, msg: str) -> None:
        super().__init__(f"{step}: {msg}")
        self.step = step


class Inconclusive(Exception):
    """The board may be sound but this verifier cannot settle it (a 'unique' claim needs a global count)."""


# ---------------------------------------------------------------- §9 manifest


def _is_int(v) -> bool:
    return type(v) is int


def _need(cond: bool, msg: str) -> None:
    if not cond:
        raise Rejected("manifest", msg)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def parse_manifest(text: str) -> dict:
    """The manifest as a dict with ``squares`` [(x0, y0, s)], ``zones`` [[(x, y, w, h)]], ``clues`` [(r, c)]."""
    try:
        m = json.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        raise Rejected("manifest", f"not JSON ({e})") from None
    _need(isinstance(m, dict), "top level is not an object")
    for k in KEYS:
        _need(k in m, f"missing key {k}")
    _need(m["format"] == "tiles-manifest/1", "unknown format")
    day = m["day"]
    _need(isinstance(day, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", day) is not None, "day is not YYYY-MM-DD")
    try:
        datetime.date.fromisoformat(day)
    except ValueError:
        raise Rejected("manifest", "day is not a calendar date") from None
    b = m["board"]
    _need(isinstance(b, dict) and _is_int(b.get("cells")) and _is_int(b.get("pitch")), "board needs int cells, pitch")
    _need(b["pitch"] == b["cells"] - 1, "board.pitch is not cells - 1")
    _need(isinstance(m["seed_commit"], str) and HEX64.fullmatch(m["seed_commit"]) is not None, "bad seed_commit")
    p = m["packer"]
    _need(isinstance(p, dict) and isinstance(p.get("name"), str) and _is_int(p.get("version")), "bad packer")
    _need(isinstance(p.get("params", {}), dict), "packer.params is not an object")
    _need(_is_int(m["seed_tile"]), "seed_tile is not an int")
    _need(isinstance(m["tiles"], list), "tiles is not a list")
    squares, hashes, ts = [], [], []
    for i, t in enumerate(m["tiles"]):
        _need(isinstance(t, dict), f"tiles[{i}] is not an object")
        for k in ("id", "x0", "y0", "n", "t"):
            _need(_is_int(t.get(k)), f"tiles[{i}].{k} is not an int")
        _need(t["id"] == i, f"tiles[{i}].id is not {i}")
        _need(isinstance(t.get("hash"), str) and HEX64.fullmatch(t["hash"]) is not None, f"tiles[{i}].hash")
        _need(0 <= t["t"] <= 15, f"tiles[{i}].t out of 0..15")
        squares.append((t["x0"], t["y0"], t["n"] - 1))
        hashes.append(t["hash"])
        ts.append(t["t"])
    _need(isinstance(m["zones"], list), "zones is not a list")
    zones = []
    for i, z in enumerate(m["zones"]):
        _need(isinstance(z, dict) and z.get("id") == i and _is_int(z.get("id")), f"zones[{i}].id")
        _need(isinstance(z.get("rects"), list), f"zones[{i}].rects")
        rects = []
        for r in z["rects"]:
            _need(isinstance(r, list) and len(r) == 4 and all(_is_int(v) for v in r), f"zones[{i}] rect")
            rects.append(tuple(r))
        zones.append(rects)
    G = b["cells"]
    _need(isinstance(m["clues"], list), "clues is not a list")
    clues = []
    for rc in m["clues"]:
        _need(isinstance(rc, list) and len(rc) == 2 and all(_is_int(v) for v in rc), "clue is not [row, col]")
        _need(0 <= rc[0] < G and 0 <= rc[1] < G, "clue outside the board")
        _need(tuple(rc) not in clues, "clue repeats")
        clues.append(tuple(rc))
    _need(m["status"] in ("frontier", "unique", "ambiguous"), "bad status")
    _need(isinstance(m["stats"], dict), "stats is not an object")
    reuse = m.get("reuse", "any")
    _need(reuse in ("fresh", "any"), f"reuse is {reuse!r}, not fresh or any")
    play = m.get("play", "propagation")
    _need(play in ("tile-by-tile", "propagation"), f"play is {play!r}, not tile-by-tile or propagation")
    return {
        "G": G,
        "P": b["pitch"],
        "seed_commit": m["seed_commit"],
        "seed_tile": m["seed_tile"],
        "squares": squares,
        "hashes": hashes,
        "ts": ts,
        "zones": zones,
        "clues": clues,
        "status": m["status"],
        "packer": m["packer"],
        "stats": m["stats"],
        "reuse": reuse,
        "play": play,
        "day": day,
        "digest": hashlib.sha256(text.encode("utf-8")).hexdigest() if isinstance(text, str) else None,
    }


def manifest_text(m: dict) -> str:
    """§9's one text layout of a manifest dict (what a replay compares byte for byte)."""

    def compact(v) -> str:
        return json.dumps(v, separators=(",", ":"), ensure_ascii=True, sort_keys=True, allow_nan=False)

    parts = []
    for key in KEYS + tuple(k for k in ("difficulty", "reuse", "play", "build") if k in m):
        v = m[key]
        if key in ("tiles", "zones", "clues") and v:
            items = [json.dumps(x, separators=(",", ":"), ensure_ascii=True) for x in v]  # keys as given
            text = "[\n  " + ",\n  ".join(items) + "\n ]"
        elif key == "packer":
            text = (
                '{"name":'
                + json.dumps(v["name"])
                + ',"version":'
                + json.dumps(v["version"])
                + ',"params":'
                + compact(v.get("params", {}))
                + "}"
            )
        else:
            text = compact(v)
        parts.append(json.dumps(key) + ":" + text)
    return "{" + ",\n ".join(parts) + "}\n"


# ---------------------------------------------------------------- §7 stream, §9 seed


def stream_bytes(seed: bytes, label: str, k: int) -> bytes:
    """The first k bytes of Stream(seed, label): sha256(seed ‖ len(L) ‖ L ‖ i) blocks, i = 0, 1, …"""
    lab = label.encode("utf-8")
    out = b""
    i = 0
    while len(out) < k:
        out += hashlib.sha256(seed + len(lab).to_bytes(4, "big") + lab + i.to_bytes(8, "big")).digest()
        i += 1
    return out[:k]


def day_seed(secret: str, day: str) -> bytes:
    """§9: HMAC-SHA256(key = secret as UTF-8, message = "tiles-daily:" + day)."""
    import hmac

    return hmac.new(secret.encode("utf-8"), ("tiles-daily:" + day).encode("utf-8"), hashlib.sha256).digest()


# ---------------------------------------------------------------- §2 bits, §3 transforms


def blob_of(rows: list[int], n: int) -> bytes:
    """Row ints (MSB = column 0) → grid BLOB: n·n bits row-major, MSB first, zero padded."""
    v = 0
    for r in rows:
        v = (v << n) | r
    nbytes = (n * n + 7) // 8
    return (v << (8 * nbytes - n * n)).to_bytes(nbytes, "big")


def rows_of(blob: bytes, n: int) -> list[int]:
    """Grid BLOB → row ints; ValueError on a wrong length."""
    nbytes = (n * n + 7) // 8
    if len(blob) != nbytes:
        raise ValueError(f"a BLOB for n={n} is {nbytes} bytes, not {len(blob)}")
    v = int.from_bytes(blob, "big") >> (8 * nbytes - n * n)
    return [(v >> (n * (n - 1 - r))) & ((1 << n) - 1) for r in range(n)]


def cell(rows: list[int], r: int, c: int, n: int) -> int:
    return (rows[r] >> (n - 1 - c)) & 1


def from_cells(get, n: int) -> list[int]:
    """Row ints of the grid whose cell (i, j) is get(i, j)."""
    return [sum(get(i, j) << (n - 1 - j) for j in range(n)) for i in range(n)]


def reverse(v: int, n: int) -> int:
    return int(format(v, f"0{n}b")[::-1], 2)


def edges_of(rows: list[int], n: int) -> tuple[int, int, int, int]:
    """(top, right, bottom, left): row 0, column n-1 downwards, row n-1, column 0 downwards, first cell MSB."""
    right = sum(((r & 1) << (n - 1 - i)) for i, r in enumerate(rows))
    left = sum((((r >> (n - 1)) & 1) << (n - 1 - i)) for i, r in enumerate(rows))
    return rows[0], right, rows[-1], left


def transform(rows: list[int], n: int, t: int, values: bool = True) -> list[int]:
    """§3: mirror left-right if f, rotate clockwise r times, complement if k (values only)."""
    k, f, r = t >> 3, (t >> 2) & 1, t & 3
    g = rows
    if f:
        g = [reverse(x, n) for x in g]
    for _ in range(r):
        src = g
        g = from_cells(lambda i, j, src=src: cell(src, n - 1 - j, i, n), n)  # g'[i][j] = g[n-1-j][i]
    if k and values:
        g = [x ^ ((1 << n) - 1) for x in g]
    return g


@cache
def side_source(t: int) -> tuple[int, int, int, int]:
    """For each new side (top, right, bottom, left), the old side it comes from: transform a grid of
    distinct labels by t's geometric steps and find each new side's cells among the old sides."""
    n = 4
    labels = [[i * n + j for j in range(n)] for i in range(n)]
    g = [row[::-1] for row in labels] if (t >> 2) & 1 else [row[:] for row in labels]
    for _ in range(t & 3):
        g = [[g[n - 1 - j][i] for j in range(n)] for i in range(n)]

    def sides(x):
        return [x[0], [row[-1] for row in x], x[-1], [row[0] for row in x]]

    old = sides(labels)
    return tuple(next(s for s, o in enumerate(old) if o == new or o == new[::-1]) for new in sides(g))


def transform_side_mask(mask: int, t: int) -> int:
    """Bit s of the result is bit side_source(t)[s] of ``mask`` (§3: side masks move with the sides)."""
    return sum(((mask >> src) & 1) << s for s, src in enumerate(side_source(t)))


def canonical_t(sol: list[int], giv: list[int], seam: int, n: int) -> int:
    """§3: the t with the smallest key solution_blob ‖ givens_blob ‖ seam byte; ties → smallest t."""
    keys = [
        (
            blob_of(transform(sol, n, t), n)
            + blob_of(transform(giv, n, t, values=False), n)
            + bytes([transform_side_mask(seam, t)]),
            t,
        )
        for t in range(16)
    ]
    return min(keys)[1]


def content_hash(n: int, sol_blob: bytes, giv_blob: bytes, seam: int) -> str:
    return hashlib.sha256(bytes([n]) + sol_blob + giv_blob + bytes([seam])).hexdigest()


# ---------------------------------------------------------------- §1 rules, brute-force enumeration


@cache
def valid_lines(n: int) -> tuple[int, ...]:
    """Every n-bit line with n/2 ones and no three equal consecutive cells."""
    out = []
    for v in range(1 << n):
        if bin(v).count("1") != n // 2:
            continue
        s = format(v, f"0{n}b")
        if "000" in s or "111" in s:
            continue
        out.append(v)
    return tuple(out)


def obeys_rules(rows: list[int], n: int) -> bool:
    lines = set(valid_lines(n))
    cols = [sum(cell(rows, i, j, n) << (n - 1 - i) for i in range(n)) for j in range(n)]
    return (
        all(r in lines for r in rows) and all(c in lines for c in cols) and len(set(rows)) == n and len(set(cols)) == n
    )


def _transpose(rows: list[int], n: int) -> list[int]:
    """Row ints of the transposed grid (column j read downwards, first cell MSB)."""
    return [sum(((rows[i] >> (n - 1 - j)) & 1) << (n - 1 - i) for i in range(n)) for j in range(n)]


def _narrow(rows: list[list[int]], cols: list[list[int]], n: int) -> bool:
    """Line-domain propagation to a fixpoint: a cell on which every candidate of its row (or column)
    agrees restricts its column (row); a line whose domain is one value leaves the domains of the
    other lines of its kind (rule 3). False on an empty domain."""
    full = (1 << n) - 1
    changed = True
    while changed:
        changed = False
        for doms, others in ((rows, cols), (cols, rows)):
            ones = [full] * n
            zeros = [full] * n
            for i, d in enumerate(doms):
                if not d:
                    return False
                for v in d:
                    ones[i] &= v
                    zeros[i] &= ~v & full
            # cell (i, j) of these lines is cell (j, i) of the others: bit n-1-j of line i
            k1, k0 = _transpose(ones, n), _transpose(zeros, n)
            for j, d in enumerate(others):
                mask = k1[j] | k0[j]
                if mask:
                    kept = [v for v in d if v & mask == k1[j]]
                    if len(kept) != len(d):
                        others[j][:] = kept
                        changed = True
                        if not kept:
                            return False
            fixed = [d[0] for d in doms if len(d) == 1]
            if len(set(fixed)) != len(fixed):
                return False
            for d in doms:
                if len(d) > 1:
                    kept = [v for v in d if v not in fixed]
                    if len(kept) != len(d):
                        d[:] = kept
                        changed = True
                        if not kept:
                            return False
    return True


def solutions(n: int, kmask: list[int], kval: list[int]):
    """Every grid obeying §1 whose cells equal ``kval`` where ``kmask`` is 1 (row ints), each once.

    Brute force by the rules with line domains: every row and column starts as the valid lines that
    match its known cells; ``_narrow`` propagates; then branch on the undecided row with the fewest
    candidates. A grid is yielded only when every row and column is one valid line and all rows and
    all columns are distinct."""
    lines = valid_lines(n)
    cmask, cval = _transpose(kmask, n), _transpose(kval, n)
    rows = [[v for v in lines if v & kmask[r] == kval[r]] for r in range(n)]
    cols = [[v for v in lines if v & cmask[c] == cval[c]] for c in range(n)]

    def search(rows, cols):
        if not _narrow(rows, cols, n):
            return
        open_rows = [r for r in range(n) if len(rows[r]) > 1]
        if not open_rows:
            grid = [d[0] for d in rows]
            tr = _transpose(grid, n)
            if (
                all(len(d) == 1 and d[0] == v for d, v in zip(cols, tr, strict=True))
                and len(set(grid)) == n
                and len(set(tr)) == n
            ):
                yield grid
            return
        r = min(open_rows, key=lambda i: len(rows[i]))
        for v in rows[r]:
            rr = [list(d) for d in rows]
            rr[r] = [v]
            yield from search(rr, [list(d) for d in cols])

    yield from search(rows, cols)


# ---------------------------------------------------------------- §4 stored tiles


def nibbles(packed: int, count: int) -> list[int]:
    return [(packed >> (4 * i)) & 15 for i in range(count)]


def tile_problem(row: dict) -> str | None:
    """The first thing wrong with a stored tile (§4's verifier list), or None."""
    n = row["n"]
    if n not in SIZES:
        return f"n = {n} is not a tile size"
    try:
        sol = rows_of(bytes(row["solution"]), n)
        giv = rows_of(bytes(row["givens"]), n)
        flip = rows_of(bytes(row["flip"]), n)
    except (ValueError, TypeError) as e:
        return f"malformed BLOB ({e})"
    if type(row["seam_mask"]) is not int or not 0 <= row["seam_mask"] <= 15:
        return "seam_mask is not a side mask"
    if content_hash(n, bytes(row["solution"]), bytes(row["givens"]), row["seam_mask"]) != row["hash"]:
        return "content does not hash to the key"
    if not obeys_rules(sol, n):
        return "solution breaks the rules"
    if canonical_t(sol, giv, row["seam_mask"], n) != 0:
        return "not stored in canonical orientation"
    if cell(giv, 0, 0, n) or cell(giv, 0, n - 1, n) or cell(giv, n - 1, 0, n) or cell(giv, n - 1, n - 1, n):
        return "a corner is given"
    m = row["m"]
    bl = (n * n + 7) // 8
    alts_blob = bytes(row["alts"])
    if m < 1 or len(alts_blob) != (m - 1) * bl:
        return "m and alts disagree"
    chunks = [alts_blob[i : i + bl] for i in range(0, len(alts_blob), bl)]
    if chunks != sorted(set(chunks)):
        return "alternatives are not strictly ascending"
    sides = nibbles(row["alt_sides"], m - 1)
    if row["alt_sides"] >> (4 * (m - 1)):
        return "alt_sides has extra nibbles"
    e0 = edges_of(sol, n)
    want_flip = [0] * n
    for i, chunk in enumerate(chunks):
        alt = rows_of(chunk, n)
        if alt == sol or not obeys_rules(alt, n):
            return f"alternative {i} equals the solution or breaks the rules"
        if any((a ^ s) & g for a, s, g in zip(alt, sol, giv, strict=True)):
            return f"alternative {i} contradicts a given"
        diff = sum(1 << s for s, (x, y) in enumerate(zip(edges_of(alt, n), e0, strict=True)) if x != y)
        if sides[i] != diff:
            return f"alt_sides nibble {i} is wrong"
        if not diff & row["seam_mask"]:
            return f"alternative {i} breaks the pinning invariant"
        want_flip = [w | (a ^ s) for w, a, s in zip(want_flip, alt, sol, strict=True)]
    if flip != want_flip:
        return "flip is wrong"
    pins = 0
    for s in sides:
        pins |= s
    if row["pins"] != pins:
        return "pins is wrong"
    depth = (
        0
        if not sides
        else min((bin(mask).count("1") for mask in range(1, 16) if all(s & mask for s in sides)), default=5)
    )
    if row["pin_depth"] != depth:
        return "pin_depth is wrong"
    given = sum(bin(g).count("1") for g in giv)
    if abs(row["blank"] - (1 - given / (n * n))) > 1e-9:
        return "blank is wrong"
    found = sorted(blob_of(s, n) for s in solutions(n, giv, [s & g for s, g in zip(sol, giv, strict=True)]))
    if found != sorted([bytes(row["solution"])] + chunks):
        return f"its givens admit {len(found)} solutions, not exactly the solution and its {m - 1} alternatives"
    return None


# ---------------------------------------------------------------- §6 packing and board


def check_packing(mf: dict) -> None:
    P = mf["P"]
    if not 1 <= P <= 4095:
        raise Rejected("packing", f"pitch {P} is out of range")
    squares = mf["squares"]
    if not 0 <= mf["seed_tile"] < len(squares):
        raise Rejected("packing", f"seed_tile {mf['seed_tile']} is not a tile id")
    occ = bytearray(P * P)

    def mark(x, y, w, h, what):
        if x < 0 or y < 0 or x + w > P or y + h > P:
            raise Rejected("packing", f"{what} lies outside the board")
        for yy in range(y, y + h):
            row = occ[yy * P + x : yy * P + x + w]
            if any(row):
                raise Rejected("packing", f"{what} overlaps")
            occ[yy * P + x : yy * P + x + w] = b"\x01" * w

    for i, (x, y, s) in enumerate(squares):
        if s not in (5, 7, 9, 11, 13, 15):
            raise Rejected("packing", f"tile {i} has side {s}")
        mark(x, y, s, s, f"tile {i}")
    for zi, zone in enumerate(mf["zones"]):
        if not zone:
            raise Rejected("packing", f"zone {zi} is empty")
        for x, y, w, h in zone:
            if w <= 0 or h <= 0:
                raise Rejected("packing", f"zone {zi} has an empty rectangle")
            mark(x, y, w, h, f"zone {zi}")
    if 0 in occ:
        y, x = divmod(occ.index(0), P)
        raise Rejected("packing", f"gap at pitch unit ({x},{y})")


PACKER_VERSIONS = {"big-first": 1, "grown": 1, "bands": 1, "substitution": 1, "islands": 1}  # FORMAT §7


def check_claims(mf: dict) -> None:
    """FORMAT §10.1 claims: a known packer at its version; stated tiles, clues and zone share agree."""
    pk = mf["packer"]
    if not isinstance(pk, dict) or PACKER_VERSIONS.get(pk.get("name")) != pk.get("version"):
        raise Rejected("claims", f"packer {pk!r} is not one of FORMAT §7 at its version")
    st = mf["stats"]
    if "tiles" in st and st["tiles"] != len(mf["squares"]):
        raise Rejected("claims", "stats.tiles differs from the board")
    if "clues" in st and st["clues"] != len(mf["clues"]):
        raise Rejected("claims", "stats.clues differs from the board")
    if "zone_fraction" in st:
        area = sum(w * h for z in mf["zones"] for (_x, _y, w, h) in z)
        if (
            not isinstance(st["zone_fraction"], (int, float))
            or abs(st["zone_fraction"] - round(area / mf["P"] ** 2, 6)) > 1e-6
        ):
            raise Rejected("claims", "stats.zone_fraction differs from the packing's zone share")


def load_tiles(mf: dict, conn: sqlite3.Connection) -> dict[str, dict]:
    """§10.2 in id order, each distinct hash once."""
    out: dict[str, dict] = {}
    for i, (h, (_x, _y, s)) in enumerate(zip(mf["hashes"], mf["squares"], strict=True)):
        if h not in out:
            r = conn.execute(f"SELECT {', '.join(TILE_COLUMNS)} FROM tiles WHERE hash = ?", (h,)).fetchone()
            if r is None:
                raise Rejected("tiles", f"tile {i}: no row {h}")
            row = dict(zip(TILE_COLUMNS, r, strict=True))
        else:
            row = out[h]
        if row["n"] != s + 1:
            raise Rejected("tiles", f"tile {i}: stored n={row['n']}, the square needs n={s + 1}")
        if h not in out:
            problem = tile_problem(row)
            if problem:
                raise Rejected("tiles", f"tile {i} ({h[:12]}…): {problem}")
            out[h] = row
    return out


def solution_hash(rows: list[int], n: int) -> str:
    """§5: sha256(n ‖ the smallest BLOB of the 16 images of the solution)."""
    return hashlib.sha256(bytes([n]) + min(blob_of(transform(rows, n, t), n) for t in range(16))).hexdigest()


def check_fresh(mf: dict, tiles: dict[str, dict], conn: sqlite3.Connection) -> None:
    """§10.2's fresh step: no n >= 10 solution twice, none spent by the board the library holds as
    the manifest of another day."""
    if mf["reuse"] != "fresh":
        return
    first: dict[str, int] = {}
    placed = []
    for i, h in enumerate(mf["hashes"]):
        n = tiles[h]["n"]
        if n < 10:
            continue
        sol = solution_hash(rows_of(bytes(tiles[h]["solution"]), n), n)
        if sol in first:
            raise Rejected("fresh", f"tile {i} repeats the solution of tile {first[sol]}")
        first[sol] = i
        placed.append((i, sol))
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'spent'").fetchone()
    if not has:
        return
    for i, sol in placed:
        for board, day in conn.execute("SELECT board, day FROM spent WHERE solution = ?", (sol,)):
            if board == mf["digest"] or day == mf["day"]:
                continue
            row = conn.execute("SELECT json FROM manifests WHERE day = ?", (day,)).fetchone()
            if row and hashlib.sha256(row[0].encode("utf-8")).hexdigest() == board:
                raise Rejected("fresh", f"tile {i}: its solution was spent by the board of {day}")


def check_bundle(mf: dict, conn: sqlite3.Connection) -> bool:
    """§10 step bundle, for a library whose meta kind is ``bundle`` (§5): exactly this board's rows.
    Returns whether the library was a bundle."""
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    if meta.get("kind") != "bundle":
        return False
    if meta.get("bundle_day") != mf["day"]:
        raise Rejected("bundle", f"the bundle is of {meta.get('bundle_day')}, not {mf['day']}")
    rows = conn.execute("SELECT day, json FROM manifests").fetchall()
    if len(rows) != 1 or rows[0][0] != mf["day"]:
        raise Rejected("bundle", "the bundle does not hold exactly one manifest, of its day")
    if hashlib.sha256(str(rows[0][1]).encode("utf-8")).hexdigest() != mf["digest"]:
        raise Rejected("bundle", "the bundle's manifest is not this one")
    have = {h: (n, bytes(sol)) for h, n, sol in conn.execute("SELECT hash, n, solution FROM tiles")}
    for i, h in enumerate(mf["hashes"]):
        if h not in have:
            raise Rejected("bundle", f"tile {i} has no row in the bundle")
    if set(have) - set(mf["hashes"]):
        raise Rejected("bundle", "the bundle holds a tile the manifest does not place")
    if conn.execute("SELECT count(*) FROM misses").fetchone()[0]:
        raise Rejected("bundle", "the bundle holds misses rows")
    want = {
        (solution_hash(rows_of(have[h][1], have[h][0]), have[h][0]), mf["digest"], have[h][0], mf["day"])
        for h in set(mf["hashes"])
        if have[h][0] >= 10
    }
    if set(conn.execute("SELECT solution, board, n, day FROM spent")) != want:
        raise Rejected("bundle", "the bundle's spent rows are not exactly the board's own")
    return True


def assemble(mf: dict, tiles: dict[str, dict]):
    """§10.3: (values, owners, givens) as flat G·G bytearrays; values 2 outside every window."""
    G = mf["G"]
    val = bytearray(b"\x02" * (G * G))
    owners = bytearray(G * G)
    giv = bytearray(G * G)
    for i, ((x0, y0, s), h, t) in enumerate(zip(mf["squares"], mf["hashes"], mf["ts"], strict=True)):
        row, n = tiles[h], s + 1
        sol = transform(rows_of(bytes(row["solution"]), n), n, t)
        gv = transform(rows_of(bytes(row["givens"]), n), n, t, values=False)
        for r in range(n):
            for c in range(n):
                p = (y0 + r) * G + x0 + c
                v = cell(sol, r, c, n)
                if val[p] != 2 and val[p] != v:
                    raise Rejected("seams", f"board cell (row {y0 + r}, col {x0 + c}) differs in tile {i}")
                val[p] = v
                owners[p] += 1
                giv[p] |= cell(gv, r, c, n)
    for zone in mf["zones"]:
        for x, y, w, h in zone:
            for r in range(y, y + h + 1):
                for c in range(x, x + w + 1):
                    if owners[r * G + c]:
                        giv[r * G + c] = 1
    for r, c in mf["clues"]:
        if owners[r * G + c] == 0:
            raise Rejected("clues", f"clue [{r}, {c}] is in no tile window")
        if owners[r * G + c] >= 3:
            raise Rejected("clues", f"clue [{r}, {c}] is on a junction")
        giv[r * G + c] = 1
    return val, owners, giv


# ---------------------------------------------------------------- §10.4 frontier


def propagate(mf: dict, val, owners, giv) -> tuple[int, int]:
    """§10.4. Known cells start as the givens in tile windows. Visiting a tile enumerates its candidates
    (grids obeying §1 that match the known cells of its window) and makes known every cell they all
    agree on. Round 1 visits every tile in id order; each next round visits, in id order, the tiles
    that gained a known cell after their visit (a tile whose window is entirely known is not queued).
    Returns (unknown tile cells left, rounds)."""
    G = mf["G"]
    squares = mf["squares"]
    known = bytearray(1 if giv[p] and owners[p] else 0 for p in range(G * G))
    holders: dict[int, list[int]] = {}
    unknown_in = []
    for i, (x0, y0, s) in enumerate(squares):
        u = 0
        for r in range(y0, y0 + s + 1):
            for c in range(x0, x0 + s + 1):
                holders.setdefault(r * G + c, []).append(i)
                u += not known[r * G + c]
        unknown_in.append(u)
    todo = set(range(len(squares)))
    rounds = 0
    while todo:
        rounds += 1
        order = sorted(todo)
        todo, pending = set(), set(order)
        for i in order:
            pending.discard(i)
            for p in _visit(i, squares[i], G, val, known):
                for j in holders[p]:
                    unknown_in[j] -= 1
                for j in holders[p]:
                    if j != i and j not in pending and unknown_in[j] > 0:
                        todo.add(j)
    unknown = sum(1 for p in range(G * G) if owners[p] and not known[p])
    return unknown, rounds


def _visit(i: int, square, G: int, val, known) -> list[int]:
    """Make known the cells of tile i's window on which all its candidates agree; return them."""
    x0, y0, s = square
    n = s + 1
    km = [sum(known[(y0 + r) * G + x0 + c] << (n - 1 - c) for c in range(n)) for r in range(n)]
    if all(k == (1 << n) - 1 for k in km):
        return []
    kv = [
        sum((val[(y0 + r) * G + x0 + c] & known[(y0 + r) * G + x0 + c]) << (n - 1 - c) for c in range(n))
        for r in range(n)
    ]
    all1 = [(1 << n) - 1] * n  # cells that are 1 in every candidate
    all0 = [(1 << n) - 1] * n  # cells that are 0 in every candidate
    count = 0
    for sol in solutions(n, km, kv):
        count += 1
        all1 = [a & x for a, x in zip(all1, sol, strict=True)]
        all0 = [a & ~x for a, x in zip(all0, sol, strict=True)]
    if count == 0:
        raise Rejected("frontier", f"tile {i} has no solution under the known cells")
    new = []
    for r in range(n):
        agree = (all1[r] | all0[r]) & ~km[r]
        for c in range(n):
            if agree >> (n - 1 - c) & 1:
                p = (y0 + r) * G + x0 + c
                if (all1[r] >> (n - 1 - c)) & 1 != val[p]:
                    raise Rejected("frontier", f"tile {i} derived a value that is not the board's")
                known[p] = 1
                new.append(p)
    return new


# ---------------------------------------------------------------- §10 closure


def shares_seam(a, b) -> bool:
    """§14: two windows share a seam when they have at least 2 board cells in common."""
    (xa, ya, sa), (xb, yb, sb) = a, b
    ox = min(xa + sa, xb + sb) - max(xa, xb) + 1  # columns in common
    oy = min(ya + sa, yb + sb) - max(ya, yb) + 1  # rows in common
    return ox > 0 and oy > 0 and ox * oy >= 2


def check_closure(mf: dict, val, giv) -> int:
    """§10 step closure: from the definition. S_0 = {}; S_{k+1} adds every tile that is the seed tile or
    shares a seam with a tile of S_k and whose view under S_k (givens in its window plus the cells of
    S_k's windows) admits exactly one grid. Returns the waves; Rejected when some tile is never solved."""
    wave, seams = closure_waves(mf, val, giv)
    missing = [i for i in range(len(wave)) if not wave[i]]
    if missing:
        stalled = [i for i in missing if i == mf["seed_tile"] or any(wave[q] for q in seams[i])]
        raise Rejected(
            "closure", f"a player solving one tile at a time stalls: tiles {stalled[:6]} of {len(missing)} unsolved"
        )
    return max(wave)


def closure_waves(mf: dict, val, giv) -> tuple[list[int], list[list[int]]]:
    """Each tile's wave of the closure above (0: never solved) and each tile's seam neighbours."""
    G, squares = mf["G"], mf["squares"]
    k = len(squares)
    touching = [[] for _ in range(k)]
    by_cell: dict[int, list[int]] = {}
    for i, (x0, y0, s) in enumerate(squares):
        for r in (y0, y0 + s):  # windows that share any cell share a border cell
            for c in range(x0, x0 + s + 1):
                by_cell.setdefault(r * G + c, []).append(i)
        for c in (x0, x0 + s):
            for r in range(y0 + 1, y0 + s):
                by_cell.setdefault(r * G + c, []).append(i)
    for hold in by_cell.values():
        for i in hold:
            for j in hold:
                if i != j and j not in touching[i]:
                    touching[i].append(j)
    seams = [[j for j in touching[i] if shares_seam(squares[i], squares[j])] for i in range(k)]
    known = bytearray(giv)
    wave = [0] * k
    waves = 0
    todo = {mf["seed_tile"]}
    while todo:
        found = []
        for i in sorted(todo):
            x0, y0, s = squares[i]
            n = s + 1
            km = [sum(known[(y0 + r) * G + x0 + c] << (n - 1 - c) for c in range(n)) for r in range(n)]
            kv = [
                sum((val[(y0 + r) * G + x0 + c] & known[(y0 + r) * G + x0 + c]) << (n - 1 - c) for c in range(n))
                for r in range(n)
            ]
            got = 0
            for _sol in solutions(n, km, kv):
                got += 1
                if got == 2:
                    break
            if got == 0:
                raise Rejected("closure", f"tile {i} has no solution agreeing with its view")
            if got == 1:
                found.append(i)
        if not found:
            break
        waves += 1
        for i in found:
            wave[i] = waves
            x0, y0, s = squares[i]
            for r in range(y0, y0 + s + 1):
                for c in range(x0, x0 + s + 1):
                    known[r * G + c] = 1
        todo = {j for i in found for j in touching[i] if not wave[j] and any(wave[q] for q in seams[j])}
    return wave, seams


# ---------------------------------------------------------------- the whole check


def verify(manifest_text: str, library_path: str, seed: bytes | None = None) -> dict:
    """FORMAT §10 steps 1–4 (and the commitment of step 5); Rejected at the first failure."""
    mf = parse_manifest(manifest_text)
    check_packing(mf)
    check_claims(mf)
    conn = sqlite3.connect(f"file:{library_path}?mode=ro", uri=True)
    try:
        bundle = check_bundle(mf, conn)
        tiles = load_tiles(mf, conn)
        check_fresh(mf, tiles, conn)
    finally:
        conn.close()
    val, owners, giv = assemble(mf, tiles)
    unknown, rounds = propagate(mf, val, owners, giv)
    if mf["status"] == "ambiguous":
        raise Rejected("frontier", "the manifest itself says the board is ambiguous")
    if unknown == 0 and mf["status"] != "frontier":
        raise Rejected("frontier", f"the manifest claims {mf['status']!r} but propagation settles every cell")
    if unknown and mf["status"] == "frontier":
        raise Rejected("frontier", f"the manifest claims 'frontier' but propagation leaves {unknown} cells unknown")
    if unknown:  # claims 'unique': that needs a global count, which this verifier does not do
        raise Inconclusive(f"propagation leaves {unknown} cells unknown; 'unique' cannot be confirmed here")
    status = "frontier"
    waves = check_closure(mf, val, giv) if mf["play"] == "tile-by-tile" else None
    if seed is not None:
        if len(seed) != 32 or hashlib.sha256(seed).hexdigest() != mf["seed_commit"]:
            raise Rejected("seed", "sha256(seed) is not the seed_commit")
    return {
        "status": status,
        "tiles": len(mf["squares"]),
        "rounds": rounds,
        "distinct": len(tiles),
        "waves": waves,
        "bundle": bundle,
    }


def main(argv: list[str]) -> int:
    args = list(argv)
    seed = None
    if "--seed" in args:
        i = args.index("--seed")
        seed = bytes.fromhex(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        text = fh.read()
    try:
        rep = verify(text, args[1], seed)
    except Rejected as e:
        print(f"rejected: {e}")
        return 2 if e.step == "manifest" else 5
    except Inconclusive as e:
        print(f"inconclusive: {e}")
        return 1
    waves = "" if rep["waves"] is None else f", playable tile by tile in {rep['waves']} waves"
    bundle = ", from its bundle" if rep["bundle"] else ""
    print(
        f"ok: {rep['status']}: {rep['tiles']} tiles ({rep['distinct']} distinct), {rep['rounds']} rounds{waves}{bundle}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
