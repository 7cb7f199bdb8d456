"""API tokens: random, shown once, stored as their SHA-256, compared in constant time."""

import hashlib

from segbench.server.tokens import PREFIX, matches, new_token, token_hash


def test_a_token_is_32_random_bytes_behind_its_prefix():
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(t.startswith(PREFIX) and len(t) == len(PREFIX) + 43 for t in tokens)  # base64 of 32 bytes, unpadded


def test_only_the_sha256_is_kept_and_it_matches_only_its_token():
    token = new_token()
    stored = token_hash(token)
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    assert token not in stored
    assert matches(token, stored)
    assert not matches(token[:-1], stored) and not matches(token + "x", stored) and not matches("", stored)
