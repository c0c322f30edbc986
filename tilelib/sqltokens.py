"""SQL text as SQLite's own tokenizer reads it, for comparing a file's schema with the shipped one.

Two statements are read alike by SQLite when their tokens are, so the schema proof
(``tilelib.schema``) compares token lists, not text. The rules are SQLite's ``sqlite3GetToken``
(tokenize.c), not a regular expression's idea of SQL:

- **whitespace** is the five ASCII characters space, tab, newline, form feed and carriage return,
  nothing else: a no-break space (or any other character past ASCII) is part of an identifier;
- **comments** are ``--`` to the end of the line and ``/* … */`` (or to the end of the text);
- a **bare word** (keyword or identifier) starts with an ASCII letter, ``_`` or any character past
  ASCII and goes on with those, digits and ``$``; it is folded to lower case in ASCII only, as
  SQLite folds it (``K``, the Kelvin sign, stays itself);
- a **quoted token** (``"…"``, ```…```, ``[…]``, ``'…'``) is kept exactly, quotes included: a
  quoted ``"NOT"`` is an identifier (or, where SQLite falls back, a string), never the keyword;
- numbers, blobs (``x'…'``), variables (Tcl's ``$a::b(c)`` forms included) and operators are
  kept exactly, with SQLite's longest match (``->>`` is one token, ``-> >`` two; ``==`` and ``=``
  stay distinct);
- anything SQLite calls illegal (an unterminated quote, ``!`` alone, a number run into a word) is
  kept as one token marked ``ILLEGAL``: it equals only the same illegal text; SQLite stops reading
  at a NUL, so a NUL and all after it are one such token.

Dropping only what SQLite drops and folding only what SQLite folds means two texts whose tokens
are equal are the same statement to SQLite. The converse need not hold (``"x"`` and ``x`` may mean
the same and differ here): the proof refuses rather than guesses. Where this reading and SQLite's
part, it is always towards a difference: SQLite also skips a vertical tab run on from a space and a
U+FEFF at a token's start, and splits a hex number run into a word (``0x1g``) where this calls the
whole illegal.
"""

from __future__ import annotations

from functools import lru_cache

SPACE = " \t\n\f\r"
_ISSPACE = SPACE + "\v"  # what ends a Tcl variable's "(…)" (sqlite3Isspace)
ILLEGAL = "\x00ILLEGAL:"
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_DIGITS = "0123456789"
_HEX = "0123456789abcdefABCDEF"
# Three- and two-character operators, longest first (tokenize.c's cases for - < > = ! |).
_OPERATORS = ("->>", "->", "<=", "<>", "<<", ">=", ">>", "==", "!=", "||")
_SINGLE = "()[];+*%,&~/-<>=|."


def fold(name: str) -> str:
    """A name as SQLite compares it: ASCII letters in lower case, every other character itself."""
    return name.translate(_ASCII_FOLD)


def _id_start(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "_" or c >= "\x80"


def _id_char(c: str) -> bool:
    return _id_start(c) or c in _DIGITS or c == "$"


def _scan_id(sql: str, i: int) -> int:
    while i < len(sql) and _id_char(sql[i]):
        i += 1
    return i


def _quoted(sql: str, i: int, close: str, doubled: bool) -> int:
    """The end of a quoted token opened at ``i`` (past its closing quote), or -1 if unterminated."""
    j = i + 1
    while j < len(sql):
        if sql[j] == close:
            if doubled and j + 1 < len(sql) and sql[j + 1] == close:
                j += 2
                continue
            return j + 1
        j += 1
    return -1


def _variable(sql: str, i: int) -> tuple[int, bool]:
    """The end of the named variable whose ``$ @ : #`` is at ``i``, and whether SQLite takes it
    (a name follows): tokenize.c's TK_VARIABLE, with Tcl's ``a::b`` and ``a(…)`` forms."""
    n, j, named = len(sql), i + 1, False
    while j < n:
        c = sql[j]
        if _id_char(c):
            named, j = True, j + 1
        elif c == "(" and named:
            k = j + 1
            while k < n and sql[k] not in _ISSPACE and sql[k] != ")":
                k += 1
            return (k + 1, True) if k < n and sql[k] == ")" else (k, False)
        elif c == ":" and sql.startswith("::", j):
            j += 2
        else:
            break
    return j, named


def _number(sql: str, i: int) -> int:
    """The end of the numeric literal at ``i`` (a digit, or a '.' before one)."""
    n = len(sql)
    if sql[i] == "0" and i + 2 < n and sql[i + 1] in "xX" and sql[i + 2] in _HEX:
        j = i + 2
        while j < n and sql[j] in _HEX:
            j += 1
        return j
    j = i
    while j < n and sql[j] in _DIGITS:
        j += 1
    if j < n and sql[j] == ".":
        j += 1
        while j < n and sql[j] in _DIGITS:
            j += 1
    if j < n and sql[j] in "eE":
        k = j + 1
        if k < n and sql[k] in "+-":
            k += 1
        if k < n and sql[k] in _DIGITS:
            j = k
            while j < n and sql[j] in _DIGITS:
                j += 1
    return j


def _token(sql: str, i: int) -> tuple[int, str | None]:
    """The token starting at ``i``: its end and its normalised text (None for space or a comment)."""
    n, c = len(sql), sql[i]
    if c in SPACE:
        j = i
        while j < n and sql[j] in SPACE:
            j += 1
        return j, None
    if sql.startswith("--", i):
        j = sql.find("\n", i)
        return (n if j < 0 else j), None
    if sql.startswith("/*", i):
        j = sql.find("*/", i + 2)
        return (n if j < 0 else j + 2), None
    if c in "'\"`":
        j = _quoted(sql, i, c, doubled=True)
        return (n, ILLEGAL + sql[i:]) if j < 0 else (j, sql[i:j])
    if c == "[":
        j = _quoted(sql, i, "]", doubled=False)
        return (n, ILLEGAL + sql[i:]) if j < 0 else (j, sql[i:j])
    if c in "xX" and i + 1 < n and sql[i + 1] == "'":
        j = _quoted(sql, i + 1, "'", doubled=False)
        return (n, ILLEGAL + sql[i:]) if j < 0 else (j, sql[i:j])
    if c in _DIGITS or (c == "." and i + 1 < n and sql[i + 1] in _DIGITS):
        j = _number(sql, i)
        if j < n and _id_char(sql[j]):  # "1e" or "12abc": SQLite's TK_ILLEGAL, the word swallowed
            k = _scan_id(sql, j)
            return k, ILLEGAL + sql[i:k]
        return j, sql[i:j]
    if _id_start(c):
        j = _scan_id(sql, i)
        return j, fold(sql[i:j])
    if c == "?":
        j = i + 1
        while j < n and sql[j] in _DIGITS:
            j += 1
        return j, sql[i:j]
    if c in "$@:#":
        j, named = _variable(sql, i)
        return j, sql[i:j] if named else ILLEGAL + sql[i:j]
    for op in _OPERATORS:
        if sql.startswith(op, i):
            return i + len(op), op
    if c in _SINGLE:
        return i + 1, c
    return i + 1, ILLEGAL + c


@lru_cache(maxsize=4096)
def tokens(sql: str) -> tuple[str, ...]:
    """The tokens of ``sql`` as SQLite reads them (module docstring), whitespace and comments
    dropped, bare words folded to lower case in ASCII, everything else verbatim."""
    out: list[str] = []
    text, nul, rest = sql.partition("\x00")  # SQLite stops reading a statement's text at a NUL
    i = 0
    while i < len(text):
        i, tok = _token(text, i)
        if tok is not None:
            out.append(tok)
    if nul:
        out.append(ILLEGAL + nul + rest)
    return tuple(out)


__all__ = ["ILLEGAL", "SPACE", "fold", "tokens"]
