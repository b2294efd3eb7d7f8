"""Parameter models, as FastAPI's: `filters: Annotated[Filters, Query()]` reads each field of
the pydantic model `Filters` as a query parameter (or header, cookie, or form field with
`Form()`) and passes the model made of them. Each field becomes a parameter of a dependency
the route depends on, so it is converted, checked and listed in the schema as a parameter of
its own. `defaulting` does the same for one parameter with a `default_factory`."""

from __future__ import annotations

import copy
import inspect
import sys
import typing
from typing import Any, Callable

from .exceptions import RequestValidationError
from .validation import fresh_default

# Stands for a field the request did not give, so the model applies its own default.
# A parameter's value when the request gave none; the same object after a default's deep copy.
_UNSET: Any = type("Unset", (), {"__repr__": lambda self: "<unset>",
                                 "__copy__": lambda self: self,
                                 "__deepcopy__": lambda self, memo: self})()

# pydantic's constraint metadata (annotated_types) by class name, as `Param` keywords.
_CONSTRAINTS = {"Gt": "gt", "Ge": "ge", "Lt": "lt", "Le": "le", "MultipleOf": "multiple_of",
                "MinLen": "min_length", "MaxLen": "max_length"}


# What a form field's marker does not check, because the form model does.
_FORM_UNCHECKED = {*_CONSTRAINTS.values(), "pattern"}


def _field_options(field: Any) -> dict[str, Any]:
    """A model field's constraints and schema text as `Query(...)` keywords."""
    options: dict[str, Any] = {}
    for meta in field.metadata:
        name = _CONSTRAINTS.get(type(meta).__name__)
        if name is not None:
            options[name] = getattr(meta, name)
        elif getattr(meta, "pattern", None) is not None:
            options["pattern"] = meta.pattern
    for name in ("title", "description", "examples", "deprecated"):
        if getattr(field, name, None) is not None:
            options[name] = getattr(field, name)
    return options


# The parameter a model that forbids extra fields reads the request by.
_REQUEST = "request__"


def _one_or_all(values: list[Any]) -> Any:
    """A name's value, or its values as a list when it is repeated, as FastAPI gives them."""
    return values if len(values) > 1 else values[0]


def _grouped(pairs: Any) -> dict[str, Any]:
    """Each name's value, or its values as a list when it is repeated, in the order sent."""
    grouped: dict[str, list[Any]] = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    return {key: _one_or_all(values) for key, values in grouped.items()}


# What a request gives of each kind of parameter, by name: what a model that allows or forbids
# extra fields is given beyond its own, and what a refused model's error echoes as its input,
# as FastAPI gives them.
_EXTRAS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "query": lambda request: _grouped(request.query_params.multi_items()),
    "header": lambda request: _grouped(request.headers.items()),
    "cookie": lambda request: dict(request.cookies),
    # The form's size was checked against the route's limits when its fields were read.
    "form": lambda request: _grouped(request.form(
        max_files=sys.maxsize, max_fields=sys.maxsize, max_part_size=sys.maxsize,
    ).now().multi_items()),
}


def _unconverted(annotation: Any) -> Any:
    """What a form model's field is read as: its text (or every value of a list field) for
    the model to convert, as FastAPI hands it over; an upload as it is."""
    from .forms import _is_list, _unwrap, is_upload_type

    if is_upload_type(annotation):
        return annotation
    many, _ = _is_list(_unwrap(annotation)[0])
    return list[Any] if many else Any


def parameter_model(model: type, marker: Any, where: str,
                    absent: Any = None, required_group: bool = False) -> Callable[..., Any]:
    """A dependency whose parameters are `model`'s fields, each read as `marker` reads (its
    class: `Query`, `Header`, `Cookie`, `Form`), and whose value is the model made of them. A
    value the model refuses is a 422 located at the field, as FastAPI reports it. Unless
    `absent` is `params._NO_DEFAULT`, it is the value when the request gives no field at all
    (an optional model's default). A `required_group` (`Model | None` with no default) that
    the request gives no field of is one missing value, located at its source, as FastAPI
    reports it."""
    from .params import _NO_DEFAULT, alias_choices

    optional = absent is not _NO_DEFAULT
    source = type(marker)
    parameters = []
    keys: dict[str, str] = {}
    # The other names of fields read by `AliasChoices`.
    also: set[str] = set()
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        if not name.isidentifier():
            raise TypeError(f"{where}: field {name!r} of {model.__name__} is not a Python name")
        # Every field may be absent here: the model says what is missing, as in FastAPI.
        options = _field_options(field)
        if source.source == "form":
            # The model checks a form field's constraints; the schema is the model's own.
            options = {k: v for k, v in options.items() if k not in _FORM_UNCHECKED}
        # The name the field is sent by: its `validation_alias` over its `alias`, as pydantic
        # validates the model by it.
        wire = field.validation_alias if isinstance(field.validation_alias, str) else field.alias
        choices = alias_choices(field.validation_alias, where)
        if choices is not None:  # read by each name in turn; the first names it
            wire = choices[0]
            also.update(choices[1:])
        if wire is None and "title" not in options:
            # Titled by the field's name, as pydantic titles it (a header's name has hyphens).
            options["title"] = name.replace("_", " ").title()
        if source.source == "header":
            # `Header(convert_underscores=False)` on the model reads each field by its name.
            options["convert_underscores"] = getattr(marker, "convert_underscores", True)
        if source.source in ("form", "file"):
            options["media_type"] = marker.media_type
        if choices is not None:
            param = source(_UNSET, validation_alias=field.validation_alias, **options)
        else:
            param = source(_UNSET, alias=wire, **options)
        param.form_model = model
        # What the schema shows: the field's own default and whether it is required (none
        # is when the model itself may be absent).
        param.schema_required = field.is_required() and not optional
        plain_default = field.default_factory is None and not field.is_required()
        param.schema_default = field.default if plain_default else None
        annotation = field.annotation
        if source.source == "form":
            annotation = _unconverted(annotation)
        parameters.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=param, annotation=annotation))
        keys[name] = wire or name
    # A form's fields are located in the body, as FastAPI reports them.
    location = "body" if source.source == "form" else source.source

    config = model.model_config  # type: ignore[attr-defined]
    # A model that allows or forbids extra fields is given them; any other ignores them, so
    # they are read only to echo in a refusal's input.
    takes_extras = config.get("extra") in ("allow", "forbid")
    extras = _EXTRAS[source.source]
    # The request (or a WebSocket route's socket), for what it gives beyond the fields.
    from .connection import HTTPConnection

    parameters.append(inspect.Parameter(
        _REQUEST, inspect.Parameter.KEYWORD_ONLY, annotation=HTTPConnection))

    # The names the fields are read by (a header field's with hyphens, as it is sent).
    converted = source.source == "header" and getattr(marker, "convert_underscores", True)
    known = {key.lower() if source.source == "header" else key
             for key in (*keys.values(), *also)}
    if converted:
        known |= {key.replace("_", "-") for key in known}
    # A refused header is located by the name it is sent as, as FastAPI reports it.
    sent_as = {name: name.replace("_", "-") for name in keys
               if converted and keys[name] == name and config.get("loc_by_alias", True)}

    def refusal(exc: Any) -> RequestValidationError:
        errors = []
        for error in exc.errors(include_url=False):
            loc = [location, *error["loc"]]
            if len(loc) > 1 and loc[1] in sent_as:
                loc[1] = sent_as[loc[1]]
            error["loc"] = loc
            errors.append(error)
        return RequestValidationError(errors)

    def validate(values: dict[str, Any], extra: Callable[[], dict[str, Any]]) -> Any:
        import pydantic

        given = {keys[name]: value for name, value in values.items() if value is not _UNSET}
        own = bool(given)
        if not own and optional and source.source == "form":
            # An input left empty is no value, but the form has the model, as in FastAPI.
            own = any(key in known for key in extra())
        if takes_extras:
            given.update((k, v) for k, v in extra().items() if k not in known)
        if optional and not own and not (takes_extras and given):
            return fresh_default(absent)
        if required_group and not own and not (takes_extras and given):
            raise RequestValidationError([{"type": "missing", "loc": [location],
                                           "msg": "Field required", "input": None}])
        try:
            return model.model_validate(given)  # type: ignore[attr-defined]
        except pydantic.ValidationError as exc:
            if takes_extras:
                raise refusal(exc) from None
            refused = exc
        # The refusal echoes all the request gave, extras too, as FastAPI's does.
        given.update((k, v) for k, v in extra().items() if k not in known)
        try:
            model.model_validate(given)  # type: ignore[attr-defined]
        except pydantic.ValidationError as exc:
            refused = exc
        raise refusal(refused) from None

    def read(**values: Any) -> Any:
        request = values.pop(_REQUEST)
        return validate(values, lambda: extras(request))

    read.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    read.__annotations__ = {p.name: p.annotation for p in parameters}
    read.__qualname__ = read.__name__ = f"{model.__name__}_parameters"
    read.__vireo_joins_refusals__ = True  # type: ignore[attr-defined]
    return read


def defaulting(name: str, annotation: Any, marker: Any, default: Any = _UNSET,
               where: str = "", validators: tuple[Any, ...] = ()) -> Callable[..., Any]:
    """A dependency reading the parameter `name` as `marker` reads it, whose value is what the
    request gave or, when it gave nothing, a fresh `marker.default_factory()` or a copy of
    `default`, as FastAPI (and pydantic) make a default; with `validate_default`, that
    default is validated as a given value would be (by `validators` too, the pydantic
    metadata beside the marker), its errors a 422."""
    factory = marker.default_factory
    reading = copy.copy(marker)
    reading.default, reading.default_factory, reading.validate_default = _UNSET, None, False
    reading.schema_required, reading.schema_default = False, None
    # The `Field` beside the marker, already taken in, gives the reading no default again.
    reading.given = marker.given | {"default_factory", "validate_default"}
    checked = typing.Annotated[(annotation, *validators)] if validators else annotation
    check = _default_check(name, checked, marker, where) if marker.validate_default else None

    def read(**values: Any) -> Any:
        value = values[name]
        if value is not _UNSET:
            return value
        value = factory() if factory is not None else copy.deepcopy(default)
        return value if check is None else check(value)

    read.__signature__ = inspect.Signature([inspect.Parameter(  # type: ignore[attr-defined]
        name, inspect.Parameter.KEYWORD_ONLY, default=reading, annotation=checked)])
    read.__annotations__ = {name: checked}
    read.__qualname__ = read.__name__ = f"{name}_default"
    return read


def _default_check(name: str, annotation: Any, marker: Any, where: str) -> Callable[[Any], Any]:
    """`check(default) -> value`, validating a default by `annotation` with `marker`'s
    constraints, its errors located where the value would have been."""
    from .validation import _adapter, _adapter_check

    options = {**marker.constraints, **marker.field_options}
    adapter = _adapter(annotation, options, where)
    if adapter is None:
        raise TypeError(f"{where}: validate_default needs pydantic (pip install pydantic)")
    source = "body" if marker.source in ("form", "file") else marker.source
    key = marker.alias or name
    if marker.source == "header" and marker.alias is None \
            and getattr(marker, "convert_underscores", True):
        key = name.replace("_", "-")
    return _adapter_check(adapter, [source, key])
