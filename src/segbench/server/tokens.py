"""API tokens: 32 random bytes shown once, stored only as their SHA-256, compared in constant time.

A token is high-entropy, so one unsalted SHA-256 is enough (nothing to brute-force a dictionary
against); the digest is what the database holds and what a lookup compares."""

from __future__ import annotations

import hashlib
import hmac
import secrets

PREFIX = "sbt_"  # lets a leaked token be recognised by scanners; not a secret


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def matches(token: str, stored_hash: str) -> bool:
    """Whether `token` is the one whose hash is `stored_hash`, in time independent of where they differ."""
    return hmac.compare_digest(token_hash(token), stored_hash)
