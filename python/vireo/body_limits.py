"""The request size limits an app, a router, an inclusion or a route sets, as FastAPI takes
them: `max_body_size` (bytes of body; the innermost that sets one wins) and `form_limits`
(how `Form()` and `File()` parameters are read; each key from the innermost that sets it)."""

from __future__ import annotations

from typing import Any, Mapping

# What `form_limits` takes, and what a key none of its levels sets is: Starlette's defaults.
FORM_LIMIT_DEFAULTS = {"max_fields": 1000, "max_files": 1000, "max_part_size": 1024 * 1024}


def check_max_body_size(value: Any) -> int | None:
    """`value` if it is a byte count or `None`; otherwise a `ValueError` at registration."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < 0):
        raise ValueError(
            f"max_body_size must be a non-negative integer or None, not {value!r}")
    return value


def check_form_limits(limits: Mapping[str, Any] | None) -> dict[str, int]:
    """A copy of `limits` (`{"max_fields": 5, ...}`) if every key is known and every value a
    count; otherwise a `ValueError` naming the key."""
    if limits is None:
        return {}
    if not isinstance(limits, Mapping):
        raise ValueError(f"form_limits must be a dict such as {{'max_fields': 100}}, "
                         f"not {limits!r}")
    checked: dict[str, int] = {}
    for key, value in limits.items():
        if key not in FORM_LIMIT_DEFAULTS:
            known = ", ".join(FORM_LIMIT_DEFAULTS)
            raise ValueError(f"form_limits has no setting {key!r} (it takes {known})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(
                f"form_limits[{key!r}] must be a non-negative integer, not {value!r}")
        checked[key] = value
    return checked


def first_set(*limits: int | None) -> int | None:
    """The first of `limits` that is set: the innermost level's."""
    for limit in limits:
        if limit is not None:
            return limit
    return None


def effective_form_limits(*levels: Mapping[str, int]) -> dict[str, int]:
    """Every form limit, each from the innermost of `levels` (given outermost first) that
    sets it, else the default."""
    merged = dict(FORM_LIMIT_DEFAULTS)
    for level in levels:
        merged.update(level)
    return merged
