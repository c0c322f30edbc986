"""remote.url: the accepted remote URL forms (s3, file, read-only https), their normal form, and everything that must
be refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from remote.url import RemoteURL, parse_remote
from tilelib.errors import BadInput


@pytest.mark.parametrize(
    "url,expected",
    [
        ("s3://my-bucket", RemoteURL("s3", bucket="my-bucket")),
        ("s3://my-bucket/", RemoteURL("s3", bucket="my-bucket")),
        ("s3://my.bucket.1/tiles/lib/", RemoteURL("s3", bucket="my.bucket.1", prefix="tiles/lib")),
        ("s3://abc//a///b", RemoteURL("s3", bucket="abc", prefix="a/b")),
        ("  s3://abc/p  ", RemoteURL("s3", bucket="abc", prefix="p")),
        ("file:///srv/tiles", RemoteURL("file", path="/srv/tiles")),
        ("file:///srv/tiles/", RemoteURL("file", path="/srv/tiles")),
        ("file://localhost/srv/x", RemoteURL("file", path="/srv/x")),
        ("file:///srv/with%20space", RemoteURL("file", path="/srv/with space")),
        # issue 11: a public, read-only remote over https (http only on loopback)
        ("https://pub-1a2b.r2.dev/tiles/lib/", RemoteURL("https", base="https://pub-1a2b.r2.dev/tiles/lib")),
        ("https://bucket.s3.amazonaws.com/p", RemoteURL("https", base="https://bucket.s3.amazonaws.com/p")),
        ("https://example.org", RemoteURL("https", base="https://example.org")),
        ("http://127.0.0.1:8123//mirror/", RemoteURL("http", base="http://127.0.0.1:8123/mirror")),
        ("http://[::1]:9/x", RemoteURL("http", base="http://[::1]:9/x")),
    ],
)
def test_accepts(url, expected):
    assert parse_remote(url) == expected


def test_keys_and_str():
    u = parse_remote("s3://abc/p/q")
    assert u.key("HEAD.json") == "p/q/HEAD.json" and str(u) == "s3://abc/p/q"
    assert parse_remote("s3://abc").key("HEAD.json") == "HEAD.json"
    assert str(parse_remote("file:///srv/t/")) == "file:///srv/t"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        None,
        "http://x/y",
        "http://10.0.0.1/p",
        "https://",
        "https://user:pw@host/p",
        "https://host/a/../b",
        "https://host:notaport/p",
        "https://host/p?x=1",
        "/srv/tiles",
        "tiles.sqlite",
        "s3://",
        "s3:///p",
        "s3://ab",
        "s3://Upper",
        "s3://-bucket",
        "s3://bucket-",
        "s3://a..b",
        "s3://bucket_x",
        "s3://" + "b" * 64,
        "s3://bucket/../x",
        "s3://bucket/./x",
        "s3://bucket/a b",
        "s3://bucket/p?versionId=1",
        "s3://bucket/p#frag",
        "file://host/srv",
        "file:relative/dir",
        "file:///",
        "file:///srv/../etc",
        "gs://bucket/p",
    ],
)
def test_refuses(url):
    with pytest.raises(BadInput):
        parse_remote(url)


@given(
    st.from_regex(r"[a-z0-9][a-z0-9-]{1,20}[a-z0-9]", fullmatch=True),
    st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True).filter(lambda p: p not in (".", "..")), max_size=4),
)
def test_normal_form_is_a_fixed_point(bucket, parts):
    u = parse_remote(f"s3://{bucket}/" + "/".join(parts) + "/")
    assert u.bucket == bucket and u.prefix == "/".join(parts)
    assert parse_remote(str(u)) == u
