"""How long a catalog waits for an S3 store that does not answer, and how that wait is shared by attempts.

The request timeout a catalog sets (``s3.request.timeout`` and its aliases) is the whole wait for one
request, every attempt included: a store that accepts connections and never answers fails the request
within it, not within a multiple of it. The engine (pyarrow's S3 filesystem, for the resolver and for
pyiceberg) takes no such total, only settings per attempt, so the total is cut into them here:

- each attempt connects (TCP and TLS) within ``connect_timeout`` (the catalog's, capped to fit) and then
  fails once the store has sent nothing for ``silence`` seconds. The engine counts silence in whole
  seconds (curl's low-speed check) and never less than one, hence whole seconds here;
- the AWS SDK's standard retry strategy waits less than ``2**k`` seconds before the ``k+1``-th retry,
  which is reserved in the total;
- three attempts when each still gets two seconds of silence, else two, else one: retries serve the errors
  that come fast (throttling, a reset connection); a store that keeps silent is not worth asking again
  with too short a wait.

A store that answers slowly but steadily is not cut off: silence is measured between bytes, so a long
listing or a large read goes on as long as bytes come. Timeouts under about one and a half seconds cannot
be kept (the engine's least silence is one second): they are served with one attempt and one second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyarrow.fs as pafs

__all__ = ["S3Attempts", "s3_attempts", "is_timeout", "RETRY_STRATEGIES", "OneAttempt", "TwoAttempts", "ThreeAttempts"]

MAX_ATTEMPTS = 3
# The most the AWS SDK's standard strategy waits in all before the attempts after the first (< 2**k s each).
_BACKOFF_S = {1: 0.0, 2: 1.0, 3: 3.0}
_LEAST_SILENCE_S = 1  # curl's low-speed time is whole seconds; zero would turn it off
_LEAST_SILENCE_TO_RETRY_S = 2


@dataclass(frozen=True)
class S3Attempts:
    """What the engine is given for a request timeout: ``attempts``, and per attempt ``connect_timeout``
    and ``silence`` (seconds). ``worst``: the longest a request to a silent store can take with them."""

    attempts: int
    connect_timeout: float
    silence: float

    @property
    def worst(self) -> float:
        return self.attempts * (self.connect_timeout + self.silence) + _BACKOFF_S[self.attempts]


def s3_attempts(request_timeout: float, connect_timeout: float) -> S3Attempts:
    """The attempts and per-attempt timeouts whose worst case stays within ``request_timeout`` (seconds),
    the connection given at most ``connect_timeout`` and about a third of each attempt."""
    for attempts in range(MAX_ATTEMPTS, 0, -1):
        slot = (request_timeout - _BACKOFF_S[attempts]) / attempts
        silence = math.floor(slot - min(connect_timeout, slot / 3))
        least = _LEAST_SILENCE_TO_RETRY_S if attempts > 1 else _LEAST_SILENCE_S
        if silence >= least:
            return S3Attempts(attempts, min(connect_timeout, slot - silence), float(silence))
    # under about 1.5 s: the engine's least silence, the connection within a third of the timeout
    return S3Attempts(1, min(connect_timeout, request_timeout / 3), float(_LEAST_SILENCE_S))


def is_timeout(message: str) -> bool:
    """Whether an engine's error says a request timed out (curl's code 28: no connection, or silence)."""
    return "curlCode: 28" in message or "Timeout was reached" in message


_UNREACHABLE = ("NETWORK_CONNECTION", "curlCode: 6,", "curlCode: 7,", "Couldn't connect to server", "Could not resolve host",
                "Connection refused")


def is_unreachable(message: str) -> bool:
    """Whether an engine's error says the store could not be reached at all (timed out, refused, not resolved),
    as opposed to a store that answered and refused: the first is worth a retry later, the second is not."""
    return is_timeout(message) or any(sign in message for sign in _UNREACHABLE)


class _Attempts(pafs.AwsStandardS3RetryStrategy):
    """pyiceberg makes its retry strategy from a class path with no arguments (``s3.retry-strategy-impl``):
    one class per number of attempts."""

    attempts = MAX_ATTEMPTS

    def __init__(self) -> None:
        super().__init__(max_attempts=self.attempts)


class OneAttempt(_Attempts):
    attempts = 1


class TwoAttempts(_Attempts):
    attempts = 2


class ThreeAttempts(_Attempts):
    attempts = 3


RETRY_STRATEGIES = {cls.attempts: f"{__name__}.{cls.__name__}" for cls in (OneAttempt, TwoAttempts, ThreeAttempts)}
