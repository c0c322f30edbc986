"""``tilelib.sqltokens`` held to its promise and to SQLite's own reading, by generated SQL.

The schema proof (``tilelib.schema``) calls two statements the same when their tokens are. That is
sound only if the tokenizer drops nothing SQLite reads and folds nothing SQLite keeps. So, for
SQL generated from every kind of token (words, numbers, strings, quoted names, blobs, variables,
operators):

- ASCII whitespace and comments put between tokens never change the tokens, and the tokens of
  text joined by single spaces are the tokens generated (the boundaries are where they were put);
- any character past ASCII in place of a space always changes them (SQLite reads it as a letter);
- a quoted token never equals the bare word it spells;
- SQLite agrees: ``sqlite3.complete_statement`` finds a statement's end exactly where the tokens
  end in a ``;`` outside a comment or quote; a column made from two texts with equal tokens reads
  the same in ``pragma_table_xinfo`` and behaves the same on the same inserts; a bare name is one
  token, kept by SQLite exactly as written and matched in ASCII case only; a variable is one token,
  the whole text SQLite binds (Tcl's ``$a::b(c)`` forms too); nothing after a NUL is read.
"""

from __future__ import annotations

import sqlite3

from hypothesis import assume, given
from hypothesis import strategies as st

from tilelib.sqltokens import ILLEGAL, SPACE, fold, tokens

# Characters past ASCII that other systems call spaces or fold to ASCII letters (SQLite does neither).
TRICKY = "\u00a0\u1680\u2000\u2003\u200a\u200b\u2028\u202f\u205f\u3000\ufeff\u0085\u212a\u017f\u0130\u0131\uff41"
_PAST_ASCII = st.sampled_from(TRICKY) | st.characters(min_codepoint=0x80, exclude_categories=("Cs",))
_ID_START = st.sampled_from("abckxyzABCKXYZ_") | _PAST_ASCII
_ID_REST = _ID_START | st.sampled_from("0123456789$")
WORDS = st.builds(lambda a, b: a + "".join(b), _ID_START, st.lists(_ID_REST, max_size=6))
ASCII_WORDS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_$]{0,6}", fullmatch=True)
NUMBERS = st.from_regex(
    r"(?:[0-9]{1,4}(?:\.[0-9]{0,3})?(?:[eE][+-]?[0-9]{1,2})?|\.[0-9]{1,3}|0x[0-9a-fA-F]{1,4})", fullmatch=True
)
_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=8)
STRINGS = _TEXT.map(lambda t: "'" + t.replace("'", "''") + "'")
QUOTED = (
    _TEXT.map(lambda t: '"' + t.replace('"', '""') + '"')
    | _TEXT.map(lambda t: "`" + t.replace("`", "``") + "`")
    | _TEXT.filter(lambda t: "]" not in t).map(lambda t: f"[{t}]")
)
BLOBS = st.from_regex(r"[xX]'(?:[0-9a-fA-F]{2}){0,4}'", fullmatch=True)
VARIABLES = st.from_regex(r"(?:\?[0-9]{0,3}|[:@$][A-Za-z_][A-Za-z0-9_]{0,4})", fullmatch=True)
OPERATORS = st.sampled_from(["->>", "->", "<=", "<>", "<<", ">=", ">>", "==", "!=", "||", *"()[];+*%,&~/-<>=|."])
OPERATORS = OPERATORS.filter(lambda op: op not in "[]")  # a lone bracket opens a quoted name
TOKENS = WORDS | NUMBERS | STRINGS | QUOTED | BLOBS | VARIABLES | OPERATORS

_LINE = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\n\x00"), max_size=6)
_BLOCK = _TEXT.filter(lambda t: "*/" not in t and not t.endswith("*"))
LAYOUT = st.lists(
    st.text(st.sampled_from(SPACE), min_size=1, max_size=3)
    | _BLOCK.map(lambda t: f"/*{t}*/")
    | _LINE.map(lambda t: f"--{t}\n"),
    max_size=3,
).map(lambda parts: " " + "".join(parts))  # starts with a space: "-" then "--" would be a comment


def expected(tok: str) -> str:
    """A generated token as the tokenizer must give it: a bare word folded in ASCII, else verbatim."""
    first = tok[0]
    bare = first.isascii() and (first.isalpha() or first == "_") or not first.isascii()
    blob = first in "xX" and tok[1:2] == "'"
    return fold(tok) if bare and not blob else tok


@given(st.lists(TOKENS, min_size=1, max_size=12))
def test_tokens_are_where_they_were_put(toks):
    assert tokens(" ".join(toks)) == tuple(expected(t) for t in toks)


@given(st.lists(st.tuples(TOKENS, LAYOUT), min_size=1, max_size=12))
def test_ascii_whitespace_and_comments_between_tokens_change_nothing(pairs):
    plain = " ".join(t for t, _ in pairs)
    laid_out = "".join(t + sep for t, sep in pairs)
    assert tokens(laid_out) == tokens(plain)


@given(
    st.lists(TOKENS, min_size=2, max_size=10),
    st.data(),
    _PAST_ASCII,
)
def test_a_character_past_ascii_in_place_of_a_space_always_changes_them(toks, data, char):
    at = data.draw(st.integers(0, len(toks) - 2))
    changed = " ".join(toks[: at + 1]) + char + " ".join(toks[at + 1 :])
    assert tokens(changed) != tokens(" ".join(toks))


@given(WORDS, st.sampled_from(['"', "`", "[", "'"]))
def test_a_quoted_token_never_equals_the_bare_word(word, quote):
    quoted = f"[{word}]" if quote == "[" else quote + word.replace(quote, quote * 2) + quote
    assert tokens(quoted) != tokens(word)
    assert tokens(f"a {quoted} b") != tokens(f"a {word} b")


# ---------------------------------------------------------------- against SQLite itself

_PIECES = st.sampled_from(["a", "b", "y", "z", "x", "1", ".", " ", "\n", "\t", ";", "'", '"', "`", "[", "]"])
_PIECES = _PIECES | st.sampled_from(["-", "--", "/", "*", "/*", "*/", "(", ")", ",", "\u00e9", "\u00a0", "!"])


@given(st.lists(_PIECES, max_size=30))
def test_sqlite_ends_a_statement_where_the_tokens_end_in_a_semicolon(pieces):
    """``complete_statement`` (SQLite's own scanner of quotes and comments) says a text is a
    complete statement exactly when its last token is ``;`` and it does not end inside a block
    comment. The pieces spell no keyword, so no CREATE TRIGGER's BEGIN … END is in play."""
    text = "".join(pieces)
    toks = tokens(text)
    in_block_comment = tokens(text + "\nq") == toks  # a newline would have ended a line comment
    assert sqlite3.complete_statement(text) == (toks[-1:] == (";",) and not in_block_comment)


_TYPE_WORDS = st.sampled_from(["INTEGER", "TEXT", "BLOB", "REAL", "NUMERIC", "VARCHAR", "BIG", "INT", "FLOATING"])
_CONSTRAINTS = st.sampled_from(
    [
        ["NOT", "NULL"],
        ["DEFAULT", "5"],
        ["DEFAULT", "'x'"],
        ["DEFAULT", "(", "1", "+", "1", ")"],
        ["PRIMARY", "KEY"],
        ["UNIQUE"],
        ["COLLATE", "NOCASE"],
        ["COLLATE", "RTRIM"],
        ["CHECK", "(", "c", "<>", "'bad'", ")"],
        ["NOT", "NULL", "ON", "CONFLICT", "IGNORE"],
    ]
)


def column_reading(definition: str) -> object:
    """What SQLite makes of ``CREATE TABLE t (<definition>)``: its column as pragma_table_xinfo
    reports it (name folded, the declared type's and default's tokens), its indexes, and what a
    few inserts and a lookup do — or the error that refused the table."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE TABLE t ({definition})")
    except sqlite3.Error as err:
        return ("refused", type(err).__name__)
    (name, type_, notnull, dflt, pk, hidden), *_ = conn.execute(
        "SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo('t')"
    ).fetchall()
    facts: list[object] = [fold(name), tokens(type_), notnull, tokens(dflt or ""), pk, hidden]
    facts.append(conn.execute("SELECT count(*) FROM pragma_index_list('t')").fetchone())
    for value in ("07", None, "A", "a ", "a", "bad", 2.5):
        try:
            conn.execute("INSERT INTO t VALUES (?)", (value,))
            facts.append("ok")
        except sqlite3.Error as err:
            facts.append(type(err).__name__)
    facts.append(conn.execute("SELECT typeof(c), quote(c) FROM t ORDER BY rowid").fetchall())
    facts.append(conn.execute("SELECT count(*) FROM t WHERE c = 'a'").fetchone())
    return tuple(facts)


@given(
    st.lists(_TYPE_WORDS, max_size=3),
    st.lists(_CONSTRAINTS, max_size=3),
    st.data(),
)
def test_equal_tokens_make_the_same_column_to_sqlite(type_words, constraints, data):
    """Two column definitions with equal tokens (one laid out and cased at random) are one column
    to SQLite: the same pragma reading, the same inserts kept or refused, the same lookups."""
    toks = ["c", *type_words, *(t for c in constraints for t in c)]
    plain = " ".join(toks)
    cased = [
        "".join(ch.swapcase() if data.draw(st.booleans()) else ch for ch in t) if t[0].isalpha() else t for t in toks
    ]
    laid_out = "".join(t + data.draw(LAYOUT) for t in cased)
    assert tokens(laid_out) == tokens(plain)
    assert column_reading(laid_out) == column_reading(plain)


_ASCII_SWAP = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)


@given(WORDS)
def test_a_bare_name_is_one_token_kept_as_written_and_matched_in_ascii_case_only(word):
    """SQLite takes a bare name exactly as written (letters past ASCII, digits, ``$``) and finds it
    again under another spelling exactly when ``fold`` makes the two equal: ASCII case only, so not
    under Unicode's upper or lower case, nor with the Kelvin sign for ``k``."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE TABLE t ({word})")
    except sqlite3.Error:
        assume(False)  # a keyword SQLite will not take as a name
    assert conn.execute("SELECT name FROM pragma_table_info('t')").fetchone() == (word,)
    assert tokens(word) == (fold(word),) and not tokens(word)[0].startswith(ILLEGAL)
    for other in (word.translate(_ASCII_SWAP), word.upper(), word.lower(), word.replace("k", "\u212a")):
        if tokens(other) != (fold(other),):
            continue  # Unicode's case mapping made it something other than one bare word
        try:
            conn.execute(f"SELECT {other} FROM t")
            found = True
        except sqlite3.OperationalError as err:
            assume("no such column" in str(err))  # not a keyword's syntax error
            found = False
        assert found == (fold(other) == fold(word)), (word, other)


TCL_VARIABLES = st.from_regex(
    r"[$:@#][A-Za-z_][A-Za-z0-9_]{0,3}(?:::[A-Za-z0-9_]{1,3}){0,2}(?:\([!-(*-~]{0,4}\))?", fullmatch=True
)


@given(TCL_VARIABLES)
def test_a_variable_is_the_one_token_sqlite_binds(variable):
    """SQLite binds a named parameter by the whole text of its token (Tcl's ``$a::b(c)`` included):
    the tokenizer keeps that same text as one token, unfolded (``(C)`` and ``(c)`` differ)."""
    conn = sqlite3.connect(":memory:")
    assert conn.execute(f"SELECT {variable}", {variable[1:]: 7}).fetchone() == (7,)
    assert tokens(f"SELECT {variable}") == ("select", variable)


def test_sqlite_reads_no_further_than_a_nul():
    """What follows a NUL is one illegal token, so a statement followed by a NUL is not itself."""
    assert tokens("CREATE TABLE t (a)\x00 garbage") == ("create", "table", "t", "(", "a", ")", ILLEGAL + "\x00 garbage")
    assert tokens("SELECT 'a\x00b'") == ("select", ILLEGAL + "'a", ILLEGAL + "\x00b'")
