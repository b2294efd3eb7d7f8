"""Dependencies (`Depends`), planned once per route at registration.

A route whose handler takes no `Depends` or `BackgroundTasks` parameter and has no route,
router or app dependencies is served as it is: planning leaves it untouched. Otherwise the
handler and its dependency tree are flattened: every parameter any of them reads from the
request (path, query, header, cookie, body, `Request`) becomes one parameter of a single
solver function the engine converts and validates in one go (so one 422 lists the errors of
every dependency), and the solver calls the dependencies in order, each once per request
unless `use_cache=False`, then the handler. When some values do not validate, the engine
calls the solver's `__vireo_when_invalid__` instead: it calls, in the same order, the
dependencies whose own values (and sub-dependencies) are valid, as FastAPI does, so an
`HTTPException` one raises (a 401 from an auth dependency) answers before the 422.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any, Callable, Mapping, Sequence

from . import _vireo
from .background import BackgroundTasks
from .body_limits import effective_form_limits
from .concurrency_limits import ConcurrencyLimit, Release
from .encoders import jsonable
from .exceptions import FastAPIError, RequestValidationError
from .params import Planned, analyse, call_kind, pydantic_constraints
from .validation import embedded_body_validator


class Depends:
    """A parameter whose value is what `dependency` returns (or yields) for the request:
    `user: User = Depends(current_user)`, or `Annotated[User, Depends(current_user)]`.
    Without a callable, the parameter's annotation is called (`Annotated[Pager, Depends()]`).
    """

    def __init__(self, dependency: Callable[..., Any] | None = None, *, use_cache: bool = True,
                 scope: str | None = None, max_concurrency: int | None = None):
        if scope not in (None, "function", "request"):
            raise ValueError(f"Depends scope is 'function' or 'request', not {scope!r}")
        self.dependency = dependency
        self.use_cache = use_cache
        # A `yield` dependency's teardown: "function" right after the handler returns,
        # "request" (the default) once the response has been made (a stream's last chunk).
        self.scope = scope
        self.max_concurrency = max_concurrency
        # Shared by every route this object is used in, and by its `with_dependency` copies.
        self.limit = None if max_concurrency is None else ConcurrencyLimit(max_concurrency)

    def with_dependency(self, dependency: Callable[..., Any]) -> "Depends":
        if dependency is self.dependency:
            return self
        copy = Depends(dependency, use_cache=self.use_cache, scope=self.scope)
        copy.max_concurrency, copy.limit = self.max_concurrency, self.limit
        return copy

    def _settings(self) -> tuple[Any, ...]:
        return (type(self), self.dependency, self.use_cache, self.scope, self.limit)

    # Equal, and hashed alike, when made with the same settings, as FastAPI's are (tools key
    # dicts by them); one with its own `max_concurrency` limit is equal only to its copies.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Depends):
            return NotImplemented
        return self._settings() == other._settings()

    def __hash__(self) -> int:
        return hash(self._settings())

    def __repr__(self) -> str:
        name = getattr(self.dependency, "__qualname__", repr(self.dependency))
        cache = "" if self.use_cache else ", use_cache=False"
        return f"Depends({name}{cache})"


class Security(Depends):
    """`Depends` for a security scheme, asking for OAuth2 `scopes`: they are listed in the
    route's OpenAPI `security`, and a dependency below it that takes `SecurityScopes` gets
    them (with those asked for above it)."""

    def __init__(
        self,
        dependency: Callable[..., Any] | None = None,
        *,
        scopes: Sequence[str] | None = None,
        use_cache: bool = True,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(dependency, use_cache=use_cache, max_concurrency=max_concurrency)
        self.scopes = list(scopes or ())

    def with_dependency(self, dependency: Callable[..., Any]) -> "Depends":
        if dependency is self.dependency:
            return self
        copy = Security(dependency, scopes=self.scopes, use_cache=self.use_cache)
        copy.max_concurrency, copy.limit = self.max_concurrency, self.limit
        return copy

    def _settings(self) -> tuple[Any, ...]:
        return (*super()._settings(), tuple(self.scopes))

    def __repr__(self) -> str:
        name = getattr(self.dependency, "__qualname__", repr(self.dependency))
        return f"Security({name}, scopes={self.scopes!r})"


class SecurityScopes:
    """A parameter of this type gets the scopes every `Security(...)` on the way from the
    route to this dependency asked for, in order: `scopes`, and `scope_str` (space-separated,
    as in a `WWW-Authenticate` challenge)."""

    def __init__(self, scopes: Sequence[str] | None = None) -> None:
        self.scopes: list[str] = list(scopes or ())
        self.scope_str = " ".join(self.scopes)

    def __repr__(self) -> str:
        return f"SecurityScopes({self.scopes!r})"


def _with_scopes(scopes: list[str], depends: Depends) -> list[str]:
    """`scopes` and the new ones `depends` asks for."""
    added = [s for s in getattr(depends, "scopes", ()) if s not in scopes]
    return scopes + added if added else scopes


# How a step is called.
_SYNC, _ASYNC, _GEN, _ASYNC_GEN = range(4)
# Where an argument comes from.
_LEAF, _STEP, _BACKGROUND, _FORM, _RESPONSE, _CONSTANT = range(6)


def _kind_of(fn: Callable[..., Any]) -> int:
    while isinstance(fn, functools.partial):  # a partial is called as what it wraps
        fn = fn.func
    call = fn if inspect.isroutine(fn) or inspect.isclass(fn) else type(fn).__call__
    if inspect.isasyncgenfunction(call):
        return _ASYNC_GEN
    if inspect.isgeneratorfunction(call):
        return _GEN
    if inspect.iscoroutinefunction(call):
        return _ASYNC
    return _SYNC


class _Step:
    """One call: `fn(*positional, **keywords)`, each argument `(name, where, index)`."""

    __slots__ = ("fn", "kind", "args", "function_scope", "joins_refusals", "limit")

    def __init__(self, fn: Callable[..., Any], kind: int, args: list[tuple[Any, int, Any]],
                 function_scope: bool = False, limit: ConcurrencyLimit | None = None):
        self.fn = fn
        self.kind = kind
        self.args = args
        # A `yield` step closed as soon as the handler returns (`Depends(scope="function")`).
        self.function_scope = function_scope
        # How many calls of this step may run at once (`Depends(max_concurrency=...)`).
        self.limit = limit
        # A parameter model's reader: what it refuses joins the request's other errors in one
        # 422, as FastAPI lists them, rather than answering alone.
        self.joins_refusals = getattr(fn, "__vireo_joins_refusals__", False)


class _Refusals:
    """The errors of the parameter models a request's steps refused (made at the first), and
    the steps that cannot run for it: a refused one, or one reading a step that cannot."""

    __slots__ = ("errors", "steps")

    def __init__(self) -> None:
        self.errors: list[Any] = []
        self.steps: set[int] = set()

    @staticmethod
    def kept(refusals: "_Refusals | None", i: int, exc: RequestValidationError) -> "_Refusals":
        refusals = refusals if refusals is not None else _Refusals()
        refusals.errors.extend(exc.errors())
        refusals.steps.add(i)
        return refusals

    def blocks(self, i: int, step: _Step) -> bool:
        """Whether step `i` reads one that cannot run (and so cannot run either)."""
        if any(where == _STEP and index in self.steps for _, where, index in step.args):
            self.steps.add(i)
            return True
        return False

    def raise_all(self, failed: bytes | None) -> None:
        """Raise the refusals as one `RequestValidationError`, after the errors of the values
        the engine could not convert (`failed`, its 422 body) when there are some."""
        errors = self.errors if failed is None else json.loads(failed)["detail"] + self.errors
        # Listed as FastAPI lists them: by where they are, path to body.
        raise RequestValidationError(sorted(errors, key=_where_rank))


_WHERE = {"path": 0, "query": 1, "header": 2, "cookie": 3, "body": 4}


def _where_rank(error: dict[str, Any]) -> int:
    loc = error.get("loc") or ("",)
    return _WHERE.get(loc[0], 5)


class DependencyPlan:
    """A route's flattened plan: the engine's parameter tuples, the dependency steps in the
    order they run, and the handler's own arguments."""

    def __init__(
        self, path: str, overrides: dict[Any, Any] | None = None, websocket: bool = False,
        form_limits: Mapping[str, int] | None = None,
    ) -> None:
        self.path = path
        # A WebSocket route's plan: the socket in place of the request, no body.
        self.websocket = websocket
        # How the route's form is read (`max_fields`, `max_files`, `max_part_size`).
        self.form_limits = effective_form_limits(form_limits or {})
        self.overrides = overrides or {}
        self.leaves: list[tuple[Any, ...]] = []
        self.leaf_info: list[Planned] = []
        self._leaf_index: dict[Any, str] = {}
        self.steps: list[_Step] = []
        self._cached: dict[Any, int] = {}
        self.background = False
        # Whether something takes the `Response` whose status and fields the answer gets.
        self.sub_response = False
        self._active: list[Any] = []
        # Form fields, read together by one validator (the form leaf's).
        self.form_fields: list[Any] = []
        self.form_leaf: str | None = None
        # The scopes asked for on the way to the dependency being planned.
        self._scopes: list[list[str]] = [[]]
        # Each security scheme the route depends on, first use first, with its scopes.
        self.security: list[tuple[Any, list[str]]] = []

    def leaf(self, planned: Planned) -> str:
        """The solver's name for a value the engine converts; equal ones are shared."""
        name, source, key, kind, is_list, required, default, validator, _, checks = planned.tuple
        ident: Any
        if source == "request":
            ident = ("request",)
        elif source == "body":
            ident = ("body", id(planned.annotation), name)
        else:
            converter = None if validator is None else id(validator)
            ident = (source, key, kind, is_list, required, _hashable(default), checks, converter)
        found = self._leaf_index.get(ident)
        if found is not None:
            return found
        synthetic = f"v{len(self.leaves)}_{name}"
        self.leaves.append(
            (synthetic, source, key, kind, is_list, required, default, validator, True, checks)
        )
        self.leaf_info.append(planned)
        self._leaf_index[ident] = synthetic
        return synthetic

    def embed_bodies(self) -> None:
        """Body values of the handler and its dependencies together, as FastAPI takes them:
        several (or one marked `Body(embed=True)`) are the members of one object body."""
        bodies = [i for i, p in enumerate(self.leaf_info) if p.body is not None]
        if len(bodies) < 2 and not any(getattr(self.leaf_info[i].marker, "embed", False) for i in bodies):
            return
        for n, i in enumerate(bodies):
            key, tp, required, default = self.leaf_info[i].body  # type: ignore[misc]
            leaf = list(self.leaves[i])
            leaf[7] = embedded_body_validator(
                key, tp, required, default, reports_body=n == 0,
                constraints=pydantic_constraints(self.leaf_info[i].marker), where=key,
                choices=self.leaf_info[i].alias_choices)
            self.leaves[i] = tuple(leaf)
            self.leaf_info[i].embedded = True

    def arguments(
        self, fn: Callable[..., Any], socket_param: str | None = None
    ) -> list[tuple[Any, int, Any]]:
        """How to call `fn`: each parameter's source, its sub-dependencies planned first.
        `socket_param` names a WebSocket handler's socket parameter."""
        out: list[tuple[Any, int, Any]] = []
        for planned in analyse(self.path, fn, self.websocket, socket_param):
            name: Any = None if planned.positional_only else planned.name
            if planned.tag == "depends":
                out.append((name, _STEP, self.depend(planned.depends)))
            elif planned.tag == "background":
                self.background = True
                out.append((name, _BACKGROUND, None))
            elif planned.tag == "response":
                self.sub_response = True
                out.append((name, _RESPONSE, None))
            elif planned.tag == "form":
                out.append((name, _FORM, self.form_field(planned)))
            elif planned.tag == "scopes":
                out.append((name, _CONSTANT, SecurityScopes(self._scopes[-1])))
            else:
                out.append((name, _LEAF, self.leaf(planned)))
        return out

    def form_field(self, planned: Planned) -> tuple[str, int]:
        """Where a form field's value will be: `(form leaf, index)`."""
        if self.form_leaf is None:
            from .forms import form_validator

            self.form_leaf = f"v{len(self.leaves)}_form"
            # The validator sees fields added later too.
            validator = form_validator(self.form_fields, self.form_limits)
            self.leaves.append(
                (self.form_leaf, "form", "form", "str", False, True, None, validator, True, None)
            )
            self.leaf_info.append(planned)
        self.form_fields.append(planned.field)
        return self.form_leaf, len(self.form_fields) - 1

    def depend(self, depends: Depends) -> int:
        """The index of the step giving `depends`'s value, planned once if cached."""
        fn = depends.dependency
        assert fn is not None
        fn = self.overrides.get(fn, fn)
        scopes = _with_scopes(self._scopes[-1], depends)
        if _is_scheme(fn):
            self._note_scheme(fn, scopes)
        # A dependency that asks for scopes, is a security scheme, or below which something
        # does or takes `SecurityScopes`, is one per set of scopes, as FastAPI caches it.
        key = (fn, tuple(sorted(set(scopes)))) if self._scoped(depends, fn) else fn
        if depends.use_cache and key in self._cached:
            return self._cached[key]
        if any(fn is active for active in self._active):
            raise TypeError(f"dependency cycle through {fn!r}")
        self._active.append(fn)
        self._scopes.append(scopes)
        try:
            args = self.arguments(fn)
        finally:
            self._active.pop()
            self._scopes.pop()
        call = _sync_check(fn) or fn
        self.steps.append(
            _Step(call, _kind_of(call), args, depends.scope == "function", depends.limit))
        index = len(self.steps) - 1
        if depends.use_cache:
            self._cached[key] = index
        return index

    def _note_scheme(self, scheme: Any, scopes: list[str]) -> None:
        for noted, noted_scopes in self.security:
            if noted.scheme_name == scheme.scheme_name:
                noted_scopes.extend(s for s in scopes if s not in noted_scopes)
                return
        self.security.append((scheme, list(scopes)))

    def _scoped(self, depends: Depends, fn: Callable[..., Any]) -> bool:
        """Whether `depends` (calling `fn`) asks for scopes, is a security scheme, or has a
        dependency below that is scoped or takes `SecurityScopes`."""
        return bool(getattr(depends, "scopes", ())) or _is_scheme(fn) or self._uses_scopes(fn)

    def _uses_scopes(self, fn: Callable[..., Any]) -> bool:
        """Whether `fn` takes `SecurityScopes`, or a dependency of it is scoped."""
        if any(fn is active for active in self._active):
            return False  # a cycle, refused when it is planned
        self._active.append(fn)
        try:
            for planned in analyse(self.path, fn, self.websocket):
                if planned.tag == "scopes":
                    return True
                if planned.tag == "depends":
                    sub = planned.depends.dependency
                    if self._scoped(planned.depends, self.overrides.get(sub, sub)):
                        return True
            return False
        finally:
            self._active.pop()


def _is_scheme(fn: Any) -> bool:
    """Whether `fn` is a security scheme (`vireo.security`'s, or an app's subclass)."""
    from .security import SecurityBase

    return isinstance(fn, SecurityBase)


def _sync_check(fn: Any) -> Callable[..., Any] | None:
    """A scheme's `check`, when its `__call__` is the base one that only awaits it."""
    from .security import SecurityBase

    if isinstance(fn, SecurityBase) and type(fn).__call__ is SecurityBase.__call__:
        return fn.check
    return None


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value), value)


def _call_args(
    step_args: list[tuple[Any, int, Any]],
    kw: dict[str, Any],
    values: list[Any],
    tasks: Any,
    sub: Any = None,
) -> tuple[list[Any], dict[str, Any]]:
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for name, where, index in step_args:
        if where == _LEAF:
            value = kw[index]
        elif where == _STEP:
            value = values[index]
        elif where == _FORM:
            value = kw[index[0]][index[1]]
        elif where == _RESPONSE:
            value = sub
        elif where == _CONSTANT:
            value = index
        else:
            value = tasks
        if name is None:
            positional.append(value)
        else:
            keywords[name] = value
    return positional, keywords


def _first(gen: Any, step: _Step) -> Any:
    try:
        return next(gen)
    except StopIteration:
        raise RuntimeError(f"the dependency {step.fn!r} did not yield") from None


def _given_response(result: Any) -> Any:
    """`result` if the handler gave a response of its own (a Starlette one as Vireo's), else
    `None`."""
    from .responses import Response, from_starlette, starlette_response_class

    if isinstance(result, Response) or type(result).__name__ == "RenderedResponse":
        return result
    starlette = starlette_response_class()
    if starlette is not None and isinstance(result, starlette):
        return from_starlette(result)
    return None


def _as_response(result: Any, status_code: int, str_as_json: bool = False) -> Any:
    """The response the engine would make of `result`, made now (so teardown runs after it);
    a `str` as JSON when the app sends it so."""
    from .responses import Response

    given = _given_response(result)
    if given is not None:
        return given
    body, media_type = _vireo.render_body(result, jsonable, str_as_json)
    return Response(body, status_code, media_type=media_type)


def _sub_response() -> Any:
    """The `Response` a handler or dependency takes to set the answer's status and fields."""
    from .responses import Response

    sub = Response()
    sub.status_code = None  # type: ignore[assignment]
    return sub


def _merged(result: Any, status_code: int, sub: Any, str_as_json: bool = False) -> Any:
    """`result` as a response with what was set on `sub`, as FastAPI merges them: a
    `Response` the handler returned itself is sent as it is (but for the stream of a handler
    that yields, which is made for it, see `vireo.streams`)."""
    given = _given_response(result)
    if given is not None and not getattr(result, "takes_sub_response", False):
        return given
    response = given if given is not None else _as_response(result, status_code, str_as_json)
    if sub.status_code is not None:
        response.status_code = sub.status_code
    response.headers.update(sub.headers)
    if sub.raw_headers:
        response.raw_headers = [*(response.raw_headers or []), *sub.raw_headers]
    return response


def _attach(response: Any, tasks: BackgroundTasks | None) -> Any:
    if tasks is not None and tasks.tasks and getattr(response, "background", 1) is None:
        response.background = tasks
    return response


def _enter_sync(steps: list[_Step], kw: dict[str, Any], values: list[Any], tasks: Any,
                sub: Any, exits: list[Any], skip: frozenset[int] = frozenset(),
                now: list[Any] | None = None, failed: bytes | None = None) -> None:
    """Call each step but those in `skip`, in order, into `values`; a generator step's
    generator joins `exits` (`now` for a function-scoped one, when given). What parameter
    models refuse is raised at the end, in one error with the engine's (`failed`)."""
    refusals: _Refusals | None = None
    for i, step in enumerate(steps):
        if i in skip:
            continue
        if refusals is not None and refusals.blocks(i, step):
            continue
        args, kwargs = _call_args(step.args, kw, values, tasks, sub)
        semaphore = None
        if step.limit is not None:
            semaphore = step.limit.on_threads()
            semaphore.acquire()
        try:
            if step.kind == _GEN:
                gen = step.fn(*args, **kwargs)
                values[i] = _first(gen, step)
                (now if step.function_scope and now is not None else exits).append(gen)
            elif step.joins_refusals:
                try:
                    values[i] = step.fn(*args, **kwargs)
                except RequestValidationError as exc:
                    refusals = _Refusals.kept(refusals, i, exc)
            else:
                values[i] = step.fn(*args, **kwargs)
        except BaseException:
            if semaphore is not None:
                semaphore.release()
            raise
        if semaphore is not None:
            _hold_or_release(step, semaphore, exits, now)
    if refusals is not None:
        refusals.raise_all(failed)


async def _enter_async(steps: list[_Step], kw: dict[str, Any], values: list[Any], tasks: Any,
                       sub: Any, exits: list[Any], skip: frozenset[int] = frozenset(),
                       now: list[Any] | None = None, failed: bytes | None = None) -> None:
    """`_enter_sync`, for a plan with `async` steps."""
    refusals: _Refusals | None = None
    for i, step in enumerate(steps):
        if i in skip:
            continue
        if refusals is not None and refusals.blocks(i, step):
            continue
        args, kwargs = _call_args(step.args, kw, values, tasks, sub)
        kind = step.kind
        semaphore = None
        if step.limit is not None:
            semaphore = step.limit.on_loop()
            await semaphore.acquire()
        try:
            if step.joins_refusals:
                try:
                    values[i] = step.fn(*args, **kwargs)
                except RequestValidationError as exc:
                    refusals = _Refusals.kept(refusals, i, exc)
            elif kind == _SYNC:
                values[i] = step.fn(*args, **kwargs)
            elif kind == _ASYNC:
                values[i] = await step.fn(*args, **kwargs)
            elif kind == _GEN:
                gen = step.fn(*args, **kwargs)
                values[i] = _first(gen, step)
                (now if step.function_scope and now is not None else exits).append(gen)
            else:
                agen = step.fn(*args, **kwargs)
                try:
                    values[i] = await agen.__anext__()
                except StopAsyncIteration:
                    raise RuntimeError(f"the dependency {step.fn!r} did not yield") from None
                (now if step.function_scope and now is not None else exits).append(agen)
        except BaseException:
            if semaphore is not None:
                semaphore.release()
            raise
        if semaphore is not None:
            _hold_or_release(step, semaphore, exits, now)
    if refusals is not None:
        refusals.raise_all(failed)


def _hold_or_release(step: _Step, semaphore: Any, exits: list[Any],
                     now: list[Any] | None) -> None:
    """After a limited step's call: a `yield` step keeps its place until its teardown (the
    release goes into the exit list just before its generator, so it comes out just after
    it); any other gives it back."""
    if step.kind in (_GEN, _ASYNC_GEN):
        target = now if step.function_scope and now is not None else exits
        target.insert(len(target) - 1, Release(semaphore))
    else:
        semaphore.release()


def _streamed(response: Any) -> bool:
    """Whether `response` streams a body of the app's (not a file): the teardown of `yield`
    dependencies then waits for its last chunk, so the stream can still use what they
    yielded (a database session)."""
    from .responses import FileResponse, StreamingResponse

    return isinstance(response, StreamingResponse) and not isinstance(response, FileResponse)


def _closing_sync(chunks: Any, exits: list[Any]) -> Any:
    """`chunks`, then the teardown of `exits` (with the exception if the stream failed, or
    was left by the client)."""
    if hasattr(chunks, "__anext__") or hasattr(chunks, "__aiter__"):

        async def closing_async() -> Any:
            try:
                async for chunk in chunks:
                    yield chunk
            except BaseException as exc:
                _finish_sync(exits, exc)
                raise
            _finish_sync(exits, None)

        return closing_async()

    def closing() -> Any:
        try:
            yield from chunks
        except BaseException as exc:
            _finish_sync(exits, exc)
            raise
        _finish_sync(exits, None)

    return closing()


async def _closing_async(chunks: Any, exits: list[Any]) -> Any:
    """`_closing_sync`, with `async` teardown (a sync iterator is then pulled on the loop)."""
    try:
        if hasattr(chunks, "__anext__") or hasattr(chunks, "__aiter__"):
            async for chunk in chunks:
                yield chunk
        else:
            for chunk in chunks:
                yield chunk
    except BaseException as exc:
        await _finish_async(exits, exc)
        raise
    await _finish_async(exits, None)


def _skipped(steps: list[_Step], invalid: tuple[str, ...]) -> frozenset[int]:
    """The steps that cannot run when the values named `invalid` did not validate: those
    reading one, or reading a step that cannot run (as FastAPI skips a dependency whose own
    parameters have errors)."""
    bad = set(invalid)
    skipped: set[int] = set()
    for i, step in enumerate(steps):
        for _, where, index in step.args:
            if ((where == _LEAF and index in bad) or (where == _FORM and index[0] in bad)
                    or (where == _STEP and index in skipped)):
                skipped.add(i)
                break
    return frozenset(skipped)


def _finish_sync(exits: list[Any] | None, exc: BaseException | None) -> BaseException | None:
    """Close generator dependencies, last first; `exc` is thrown into each until one catches
    it without raising it again (those closed after it see none, as an exit stack's do).
    Returns the exception still pending."""
    while exits:
        gen = exits.pop()
        if type(gen) is Release:
            gen.release()
            continue
        try:
            if exc is None:
                next(gen)
            else:
                gen.throw(exc)
        except StopIteration:
            exc = None
            continue
        except BaseException as raised:
            if raised is exc:
                continue
            _close_sync(exits, raised)
            raise
        else:
            raise RuntimeError(f"the dependency {gen.__qualname__} yields more than once")
    return exc


def _close_sync(exits: list[Any], exc: BaseException) -> None:
    try:
        _finish_sync(exits, exc)
    except BaseException:  # noqa: BLE001 - the first error is the one raised
        pass


async def _finish_async(exits: list[Any] | None,
                        exc: BaseException | None) -> BaseException | None:
    """`_finish_sync`, awaiting async generators."""
    while exits:
        gen = exits.pop()
        if type(gen) is Release:
            gen.release()
            continue
        is_async = hasattr(gen, "__anext__")
        try:
            if is_async:
                if exc is None:
                    await gen.__anext__()
                else:
                    await gen.athrow(exc)
            elif exc is None:
                next(gen)
            else:
                gen.throw(exc)
        except (StopIteration, StopAsyncIteration):
            exc = None
            continue
        except BaseException as raised:
            if raised is exc:
                continue
            try:
                await _finish_async(exits, raised)
            except BaseException:  # noqa: BLE001 - the first error is the one raised
                pass
            raise
        else:
            raise RuntimeError(f"the dependency {gen.__qualname__} yields more than once")
    return exc


def _check_not_swallowed(exc: BaseException, pending: BaseException | None) -> None:
    """After the handler (or a dependency) raised `exc` and the `yield` dependencies were
    closed: if one caught it without raising it again, there is no response to send, which is
    FastAPI's `FastAPIError` (a 500), raised from `exc` so the log shows it."""
    if pending is None and isinstance(exc, Exception):
        raise FastAPIError(
            "no response was made: the app is raising an exception and a dependency with "
            f"yield caught it without raising it again ({type(exc).__name__}: {exc}); "
            "raise it again in the dependency's except block (or raise an HTTPException)"
        ) from exc


def solver(
    handler: Callable[..., Any],
    dependencies: Sequence[Depends],
    path: str,
    status_code: int,
    blocking: bool,
    overrides: dict[Any, Any] | None = None,
    *,
    websocket: bool = False,
    socket_param: str | None = None,
    form_limits: Mapping[str, int] | None = None,
    str_as_json: bool = False,
) -> tuple[Callable[..., Any], list[tuple[Any, ...]], str, DependencyPlan]:
    """The function the engine calls for this route instead of `handler`, its parameter
    plan, and how it runs. `overrides` replaces dependencies (`app.dependency_overrides`);
    the route's form is read under `form_limits` (see `vireo.body_limits`), and a `str` the
    handler returns is sent as JSON when `str_as_json`. For a WebSocket route (`websocket`, the handler's socket parameter `socket_param`), the
    handler's result is not made a response; `yield` dependencies close when it returns."""
    plan = DependencyPlan(path, overrides, websocket, form_limits)
    for dependency in dependencies:
        plan.depend(dependency)  # run for their effect; their values are not passed on
    handler_args = plan.arguments(handler, socket_param)
    plan.embed_bodies()
    steps = plan.steps
    handler_kind = call_kind(handler, blocking)
    any_async = handler_kind == "async" or any(s.kind in (_ASYNC, _ASYNC_GEN) for s in steps)
    # A limited step waits for its turn on the loop, unless the route runs on the blocking pool.
    if not blocking and any(s.limit is not None for s in steps):
        any_async = True
    any_exit = any(s.kind in (_GEN, _ASYNC_GEN) for s in steps)
    # Function-scoped `yield` steps get a list of their own, only where there are some.
    function_scoped = any(s.function_scope for s in steps)
    with_tasks = plan.background
    with_sub = plan.sub_response
    if any_async and blocking:
        raise TypeError(
            f"{handler!r}: blocking=True needs `def` dependencies; an `async def` must not block"
        )

    if not any_async:

        def solve(**kw: Any) -> Any:
            values: list[Any] = [None] * len(steps)
            tasks = BackgroundTasks() if with_tasks else None
            sub = _sub_response() if with_sub else None
            exits: list[Any] = []
            now: list[Any] | None = [] if function_scoped else None
            try:
                _enter_sync(steps, kw, values, tasks, sub, exits, now=now)
                args, kwargs = _call_args(handler_args, kw, values, tasks, sub)
                result = handler(*args, **kwargs)
                if now:
                    _finish_sync(now, None)
                if sub is not None:
                    result = _merged(result, status_code, sub, str_as_json)
                if any_exit or (tasks is not None and tasks.tasks):
                    result = _attach(_as_response(result, status_code, str_as_json), tasks)
            except BaseException as exc:
                _check_not_swallowed(exc, _finish_sync(exits, _finish_sync(now, exc)))
                raise
            if exits and _streamed(result):
                result.body_iterator = _closing_sync(result.body_iterator, exits)
                return result
            _finish_sync(exits, None)
            return result

        def when_invalid(failed: bytes, invalid: tuple[str, ...], **kw: Any) -> Any:
            exits: list[Any] = []
            try:
                _enter_sync(steps, kw, [None] * len(steps),
                            BackgroundTasks() if with_tasks else None,
                            _sub_response() if with_sub else None, exits,
                            _skipped(steps, invalid), failed=failed)
                raise _vireo.ValidationFailed(failed)
            except BaseException as exc:
                _finish_sync(exits, exc)
                raise

        if steps and not websocket:
            solve.__vireo_when_invalid__ = when_invalid  # type: ignore[attr-defined]
        return solve, plan.leaves, "blocking" if blocking else "sync", plan

    handler_is_async = handler_kind == "async"

    async def solve_async(**kw: Any) -> Any:
        tasks = BackgroundTasks() if with_tasks else None
        sub = _sub_response() if with_sub else None
        exits: list[Any] = []
        now: list[Any] | None = [] if function_scoped else None
        try:
            values: list[Any] = [None] * len(steps)
            await _enter_async(steps, kw, values, tasks, sub, exits, now=now)
            args, kwargs = _call_args(handler_args, kw, values, tasks, sub)
            result = handler(*args, **kwargs)
            if handler_is_async:
                result = await result
            if now:
                await _finish_async(now, None)
            if sub is not None:
                result = _merged(result, status_code, sub, str_as_json)
            if not websocket and (any_exit or (tasks is not None and tasks.tasks)):
                result = _attach(_as_response(result, status_code, str_as_json), tasks)
        except BaseException as exc:
            pending = await _finish_async(exits, await _finish_async(now, exc))
            if websocket:
                # A session has no response to miss: one a dependency caught just ends.
                if pending is None:
                    return None
                raise
            _check_not_swallowed(exc, pending)
            raise
        if exits and not websocket and _streamed(result):
            if any(hasattr(gen, "__anext__") for gen in exits):
                result.body_iterator = _closing_async(result.body_iterator, exits)
            else:
                result.body_iterator = _closing_sync(result.body_iterator, exits)
            return result
        await _finish_async(exits, None)
        return result

    async def when_invalid_async(failed: bytes, invalid: tuple[str, ...], **kw: Any) -> Any:
        exits: list[Any] = []
        try:
            await _enter_async(steps, kw, [None] * len(steps),
                               BackgroundTasks() if with_tasks else None,
                               _sub_response() if with_sub else None, exits,
                               _skipped(steps, invalid), failed=failed)
            raise _vireo.ValidationFailed(failed)
        except BaseException as exc:
            await _finish_async(exits, exc)
            raise

    if steps and not websocket:
        solve_async.__vireo_when_invalid__ = when_invalid_async  # type: ignore[attr-defined]
    return solve_async, plan.leaves, "async", plan

