"""Who is asking: teams and the host by their API tokens (only hashes stored, compared in
constant time), browsers by a session cookie. A token is never written anywhere but the one
line that shows it to the person it is made for."""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload

from ..errors import SegbenchError
from . import board_cache
from .models import BrowserSession, HostToken, Team, utcnow
from .tokens import matches, new_token, token_hash

NAME_CHARACTERS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def check_team_name(name: str) -> str:
    if not 1 <= len(name) <= 64 or not set(name) <= NAME_CHARACTERS:
        raise SegbenchError(f"team name {name!r}: 1 to 64 letters, digits, '-', '_' or '.'")
    return name


def add_team(session: Session, name: str) -> str:
    """A new team; returns its token (shown once: only its hash is kept)."""
    token = new_token()
    session.add(Team(name=check_team_name(name), token_hash=token_hash(token)))
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise SegbenchError(f"a team named {name!r} exists already") from None
    return token


def team_named(session: Session, name: str) -> Team:
    team = session.scalar(select(Team).where(Team.name == name))
    if team is None:
        raise SegbenchError(f"no team named {name!r}")
    return team


def close_sessions(session: Session, team: Team) -> None:
    """The team's browser sessions closed; its entries on the boards drawn again (revoked or live)."""
    session.execute(delete(BrowserSession).where(BrowserSession.team_id == team.id))
    board_cache.team_changed(session, team.id)
    session.commit()


def revoke_team(session: Session, name: str) -> None:
    team = team_named(session, name)
    team.revoked = True
    close_sessions(session, team)


def new_team_token(session: Session, name: str) -> str:
    """A new token for an existing team (a lost or leaked one): the old token stops working, its
    browser sessions are closed, a revoked team is live again; its submissions stay its own.
    Returns the token (shown once: only its hash is kept)."""
    team = team_named(session, name)
    token = new_token()
    team.token_hash, team.revoked = token_hash(token), False
    close_sessions(session, team)
    return token


def add_host_token(session: Session) -> str:
    token = new_token()
    session.add(HostToken(token_hash=token_hash(token)))
    session.commit()
    return token


def team_of(session: Session, token: str) -> Team | None:
    """The live team whose token this is, or None. The lookup is by the token's hash (an index
    on a digest reveals nothing by its timing); the match is re-checked in constant time."""
    team = session.scalar(select(Team).where(Team.token_hash == token_hash(token)))
    if team is None or team.revoked or not matches(token, team.token_hash):
        return None
    return team


def is_host(session: Session, token: str) -> bool:
    host = session.scalar(select(HostToken).where(HostToken.token_hash == token_hash(token)))
    return host is not None and matches(token, host.token_hash)


def open_session(session: Session, team: Team, hours: float) -> tuple[str, str]:
    """A browser session for `team`: (the cookie's value, the session's CSRF token)."""
    cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    session.add(BrowserSession(id_hash=token_hash(cookie), team_id=team.id, csrf=csrf,
                               expires_at=utcnow() + timedelta(hours=hours)))
    session.commit()
    return cookie, csrf


def browser_session(session: Session, cookie: str) -> BrowserSession | None:
    found = session.get(BrowserSession, token_hash(cookie), options=[joinedload(BrowserSession.team)])
    if found is None or found.expires_at < utcnow() or found.team.revoked:
        return None
    return found


def close_session(session: Session, cookie: str) -> None:
    session.execute(delete(BrowserSession).where(BrowserSession.id_hash == token_hash(cookie)))
    session.commit()
