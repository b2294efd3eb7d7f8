"""The OpenAPI 3.1 schema of an app, built from its routes' plans, and the routes serving it
(`/openapi.json`) and its Swagger UI page (`/docs`)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import http.client
import inspect
import json
import re
import types
import typing
import uuid
import warnings
from typing import Any

from .. import response_class as response_classes
from .docs import oauth2_redirect_html, redoc_html, swagger_ui_html
from .. import response_model as response_models
from .. import sse, streams
from ..params import Planned, _unwrap_optional, analyse, is_json_marker, pydantic_constraints

from . import components as sides
from .components import REF

_SCALAR_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}

VALIDATION_ERROR = {
    "properties": {
        "loc": {
            "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "type": "array",
            "title": "Location",
        },
        "msg": {"type": "string", "title": "Message"},
        "type": {"type": "string", "title": "Error Type"},
        "input": {"title": "Input"},
        "ctx": {"type": "object", "title": "Context"},
    },
    "type": "object",
    "required": ["loc", "msg", "type"],
    "title": "ValidationError",
}

HTTP_VALIDATION_ERROR = {
    "properties": {
        "detail": {
            "items": {"$ref": REF.format(model="ValidationError")},
            "type": "array",
            "title": "Detail",
        }
    },
    "type": "object",
    "title": "HTTPValidationError",
}


def _title(name: str) -> str:
    """pydantic's title for a name: `item_id` is `Item Id`, a header's `x-trace` `X-Trace`."""
    return name.replace("_", " ").title()


def _pydantic_model(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_json_schema")


def _msgspec_struct(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "__struct_fields__")


def type_schema(tp: Any, components: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of `tp`; named models are added to `components` and referenced."""
    if tp is Any or tp is inspect.Parameter.empty or tp is object:
        return {}
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        if any(getattr(meta, "discriminator", None) is not None or is_json_marker(meta)
               for meta in tp.__metadata__):
            # A discriminated union (`oneOf` and its `discriminator`) or `Json[T]` (text whose
            # `contentSchema` is T's), as pydantic writes it.
            return _adapter_schema(tp, components)
        return type_schema(typing.get_args(tp)[0], components)
    if origin is typing.Union or origin is types.UnionType:
        return {"anyOf": [type_schema(a, components) for a in typing.get_args(tp)]}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is bytes:
        return {"type": "string", "contentMediaType": "application/octet-stream"}
    if tp is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is datetime.date:
        return {"type": "string", "format": "date"}
    if tp is uuid.UUID:
        return {"type": "string", "format": "uuid"}
    if tp is decimal.Decimal:
        return {"anyOf": [{"type": "number"}, {"type": "string"}]}
    if origin in (list, set, frozenset, tuple) or tp in (list, set, frozenset, tuple):
        args = typing.get_args(tp)
        if (origin or tp) is tuple and args and args[-1] is not Ellipsis:
            # A fixed tuple: an item schema per position, as pydantic writes it.
            if args == ((),):
                return {"maxItems": 0, "type": "array"}
            return {"maxItems": len(args), "minItems": len(args),
                    "prefixItems": [type_schema(a, components) for a in args],
                    "type": "array"}
        out: dict[str, Any] = {"type": "array", "items": {}}
        if args:
            out["items"] = type_schema(args[0], components)
        if (origin or tp) in (set, frozenset):
            out["uniqueItems"] = True
        return out
    if origin is dict or tp is dict:
        args = typing.get_args(tp)
        value_schema = type_schema(args[1], components) if len(args) == 2 else {}
        # As pydantic writes it: any value is `true`.
        return {"additionalProperties": value_schema or True, "type": "object"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp], "title": tp.__name__}
    if _pydantic_model(tp):
        ref = sides.ref_of(components)
        schema = tp.model_json_schema(ref_template=ref, schema_generator=_generator(),
                                      mode=sides.mode_of(components))
        components.update(schema.pop("$defs", {}))
        components[tp.__name__] = schema
        return {"$ref": ref.format(model=tp.__name__)}
    if _msgspec_struct(tp):
        import msgspec

        (schema,), defs = msgspec.json.schema_components(
            (tp,), ref_template=sides.ref_of(components).replace("{model}", "{name}")
        )
        components.update(defs)
        return dict(schema)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_schema(tp, components)
    return _adapter_schema(tp, components)


def _generator() -> Any:
    """pydantic's schema generator, writing `bytes` as FastAPI does: a string of
    `application/octet-stream` (base64 when the model's config encodes bytes so)."""
    global _GENERATOR
    if _GENERATOR is None:
        from pydantic.json_schema import GenerateJsonSchema

        class Generator(GenerateJsonSchema):
            def bytes_schema(self, schema: Any) -> Any:
                out = {"type": "string", "contentMediaType": "application/octet-stream"}
                mode = (self._config.ser_json_bytes if self.mode == "serialization"
                        else self._config.val_json_bytes)
                if mode == "base64":
                    out["contentEncoding"] = "base64"
                self.update_with_validations(out, schema, self.ValidationsMapping.bytes)
                return out

        _GENERATOR = Generator
    return _GENERATOR


_GENERATOR: Any = None


def _adapter_schema(tp: Any, components: dict[str, Any]) -> dict[str, Any]:
    """The schema pydantic gives any other type it knows (`time`, `timedelta`, `IPv4Address`,
    `Literal[...]`...); `{}` (any value) without pydantic or for a type it does not know."""
    try:
        import pydantic
    except ImportError:
        return {}
    try:
        schema = pydantic.TypeAdapter(tp).json_schema(ref_template=sides.ref_of(components),
                                                     schema_generator=_generator(),
                                                     mode=sides.mode_of(components))
    except (pydantic.PydanticSchemaGenerationError, pydantic.errors.PydanticInvalidForJsonSchema):
        return {}
    components.update(schema.pop("$defs", {}))
    return schema


def _dataclass_schema(cls: Any, components: dict[str, Any]) -> dict[str, Any]:
    name = cls.__name__
    if name not in components:
        components[name] = {}  # a placeholder while its fields are walked (recursion)
        hints = typing.get_type_hints(cls)
        properties: dict[str, Any] = {}
        required = []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            prop = type_schema(hints.get(field.name, Any), components)
            prop = {**prop, "title": _title(field.name)}
            if field.default is not dataclasses.MISSING:
                if _json_ready(field.default):
                    prop["default"] = field.default
            elif field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            properties[field.name] = prop
        schema: dict[str, Any] = {"properties": properties, "type": "object", "title": name}
        if required:
            schema["required"] = required
        components[name] = schema
    return {"$ref": sides.ref_of(components).format(model=name)}


def _json_ready(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


_SCHEMA_KEYWORDS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
    "pattern": "pattern",
}


def _parameter(planned: Planned, components: dict[str, Any]) -> dict[str, Any] | None:
    """A path, query, header or cookie parameter's object; `None` if left out of the schema."""
    _, source, key, kind, is_list, required, default, converter, _, _ = planned.tuple
    if isinstance(key, tuple):  # read by any of several names: the schema names the first
        key = key[0]
    marker = planned.marker
    if hasattr(marker, "schema_required"):  # a field of a parameter model
        required, default = marker.schema_required, marker.schema_default
    if marker is not None and not getattr(marker, "include_in_schema", True):
        return None
    constraints = pydantic_constraints(marker) or {}
    if planned.annotation is inspect.Parameter.empty and not constraints:
        # Unannotated: read as text, described as any value, as FastAPI does.
        schema, default_json = {}, default
    elif converter is None:
        schema, default_json = _native_schema(kind, is_list, constraints), default
        if is_list and not typing.get_args(_unwrap_optional(planned.annotation)[0]):
            schema["items"] = {}  # a bare `list`: of any value, as FastAPI describes it
    else:
        inner = _unwrap_optional(planned.annotation)[0]
        schema, default_json = _converted_schema(inner, constraints, default, components)
    if _optional(planned.annotation):
        choices = schema["anyOf"] if set(schema) == {"anyOf"} else [schema]
        schema = {"anyOf": [*choices, {"type": "null"}]}
    # A bare reference stands alone, as pydantic writes one.
    if set(schema) != {"$ref"}:
        schema["title"] = getattr(marker, "title", None) or _title(key)
    out: dict[str, Any] = {"name": key, "in": source, "required": bool(required), "schema": schema}
    description = getattr(marker, "description", None)
    if description:
        schema["description"] = out["description"] = description
    if getattr(marker, "deprecated", None):
        schema["deprecated"] = out["deprecated"] = True
    examples = getattr(marker, "examples", None)
    if examples is not None:
        schema["examples"] = examples
    extra = getattr(marker, "json_schema_extra", None)
    if isinstance(extra, dict):
        schema.update(extra)
    if getattr(marker, "example", None) is not None:
        out["example"] = marker.example
    if getattr(marker, "openapi_examples", None):
        out["examples"] = marker.openapi_examples
    if not required and default_json is not None and _json_ready(default_json):
        schema["default"] = default_json
    return out


def _constrained(schema: dict[str, Any], constraints: dict[str, Any] | None) -> dict[str, Any]:
    """A body or form value's schema with its constraints (`Body(gt=0)`), as pydantic
    writes them."""
    if not constraints or "$ref" in schema:
        return schema
    lengths = ("minItems", "maxItems") if schema.get("type") == "array" else (
        "minLength", "maxLength")
    for name, value in constraints.items():
        if name in _SCHEMA_KEYWORDS:
            schema[_SCHEMA_KEYWORDS[name]] = value
        elif name in ("min_length", "max_length"):
            schema[lengths[name == "max_length"]] = value
    return schema


def _native_schema(kind: str, is_list: bool, constraints: dict[str, Any]) -> dict[str, Any]:
    """The schema of a value the engine converts itself, with its constraints."""
    schema: dict[str, Any] = {"type": _SCALAR_TYPES[kind]}
    for name, value in constraints.items():
        if name in _SCHEMA_KEYWORDS:
            schema[_SCHEMA_KEYWORDS[name]] = value
        elif not is_list:
            schema["minLength" if name == "min_length" else "maxLength"] = value
    if is_list:
        schema = {"type": "array", "items": schema}
        for name in ("min_length", "max_length"):
            if name in constraints:
                schema["minItems" if name == "min_length" else "maxItems"] = constraints[name]
    return schema


def _converted_schema(
    tp: Any, constraints: dict[str, Any], default: Any, components: dict[str, Any]
) -> tuple[dict[str, Any], Any]:
    """The schema pydantic gives a type it converts (an Enum, UUID, date...), as FastAPI
    shows it (an enum by reference to a component), and the default as JSON (none without
    pydantic)."""
    try:
        import pydantic
    except ImportError:  # enums only, converted without pydantic
        return type_schema(tp, components), None
    target = typing.Annotated[tp, pydantic.Field(**constraints)] if constraints else tp
    # Inside a list, so that an enum is a component referred to, as FastAPI shows one.
    whole = pydantic.TypeAdapter(list[target]).json_schema(ref_template=REF)  # type: ignore[valid-type]
    components.update(whole.get("$defs", {}))
    if default is None:
        return whole["items"], None
    return whole["items"], pydantic.TypeAdapter(tp).dump_python(default, mode="json")


def _optional(tp: Any) -> bool:
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    origin = typing.get_origin(tp)
    return (origin is typing.Union or origin is types.UnionType) and type(None) in typing.get_args(
        tp
    )


def route_leaves(
    app: Any, route: Any
) -> tuple[list[Planned], list[Any], list[tuple[Any, list[str]]]]:
    """What the route reads from the request: its handler's and its dependencies' values,
    its form fields, and the security schemes it depends on with their scopes."""
    dependencies = (app.dependencies if app is not None else []) + route.dependencies
    planned = analyse(route.path, route.handler)
    if not dependencies and all(p.tag == "leaf" for p in planned):
        return planned, [], []
    from ..dependencies import solver

    _, _, _, plan = solver(
        route.handler, dependencies, route.path, route.status_code, route.blocking
    )
    return [p for p in plan.leaf_info if p.tag == "leaf"], plan.form_fields, plan.security


# An uploaded file in a form's schema, as OpenAPI 3.1 (and FastAPI) describe one.
_FILE_SCHEMA = {"type": "string", "contentMediaType": "application/octet-stream"}


def _form_body(fields: list[Any], name: str, components: dict[str, Any]) -> dict[str, Any]:
    """The request body of a route's form fields: a component named as FastAPI names it
    (`Body_` and the operation id), or the form model's own when its fields are all."""
    from ..forms import UploadFile, _unwrap

    def is_file(item: Any) -> bool:
        return isinstance(item, type) and issubclass(item, UploadFile) or item is bytes

    named = {field.media_type for field in fields}
    if any(is_file(field.item) for field in fields) or "multipart/form-data" in named:
        media = "multipart/form-data"
    else:
        media = named.pop() if len(named) == 1 else "application/x-www-form-urlencoded"
    models = {field.model for field in fields}
    if len(models) == 1 and None not in models:
        model_schema = type_schema(models.pop(), components)
        return {"content": {media: {"schema": model_schema}}, "required": True}
    if len(fields) == 1 and fields[0].union is not None and not fields[0].union.optional:
        # One union of models is the body itself, as FastAPI describes it.
        schema = fields[0].union.schema(_title(fields[0].key), components)
        return {"content": {media: {"schema": schema}}, "required": True}
    # Form models beside other fields (or unions of them) are each one of `allOf`.
    all_of: list[dict[str, Any]] = []
    listed = set()
    required_models = False
    for field in fields:
        if field.union is not None:
            all_of.append(field.union.schema(_title(field.key), components))
            required_models |= not field.union.optional
        elif field.model is not None and field.model not in listed:
            listed.add(field.model)
            all_of.append(type_schema(field.model, components))
            required_models = True
    properties: dict[str, Any] = {}
    required = []
    for field in fields:
        if field.model is not None or field.union is not None:
            continue
        if is_file(field.item):
            schema: dict[str, Any] = dict(_FILE_SCHEMA)
        else:
            schema = type_schema(field.item, components)
        if field.whole is not None:  # `tuple[int, int]` or `set[str]`, given field by field
            schema = type_schema(field.whole, components)
        elif field.many:
            schema = {"items": schema, "type": "array"}
        if field.description:
            schema["description"] = field.description
        schema = _constrained(schema, field.constraints)
        if _unwrap(field.annotation)[1]:
            schema = {"anyOf": [schema, {"type": "null"}]}
        schema.update(field.schema_extra)
        schema["title"] = _title(field.key)
        if field.required:
            required.append(field.key)
        elif field.default is not None and _json_ready(field.default):
            schema["default"] = field.default
        properties[field.key] = schema
    component: dict[str, Any] = {"allOf": all_of} if all_of else {}
    if properties or not all_of:
        component["properties"] = properties
    component["type"] = "object"
    if required:
        component["required"] = required
    component["title"] = name
    components[name] = component
    out: dict[str, Any] = {"content": {media: {"schema": {"$ref": REF.format(model=name)}}}}
    if required or required_models:
        out["required"] = True
    return out


def _describe_member(schema: dict[str, Any], marker: Any) -> None:
    """A body member's description, `deprecated`, examples and `json_schema_extra` from its
    marker, as pydantic writes them on a model's field."""
    if getattr(marker, "description", None):
        schema["description"] = marker.description
    if getattr(marker, "deprecated", None):
        schema["deprecated"] = True
    if getattr(marker, "examples", None) is not None:
        schema["examples"] = marker.examples
    extra = getattr(marker, "json_schema_extra", None)
    if isinstance(extra, dict):
        schema.update(extra)


def _object_body(members: list[Planned], name: str, components: dict[str, Any]) -> dict[str, Any]:
    """The request body of several JSON body values: an object with one member each, as a
    component named as FastAPI names it (`Body_` and the operation id)."""
    properties: dict[str, Any] = {}
    required = []
    for member in members:
        key, _, is_required, default = member.body  # type: ignore[misc]
        schema = _constrained(type_schema(member.annotation, components),
                              pydantic_constraints(member.marker))
        if "$ref" not in schema:
            schema["title"] = getattr(member.marker, "title", None) or _title(key)
            _describe_member(schema, member.marker)
        if not is_required and default is not None and _json_ready(default):
            schema["default"] = default
        properties[key] = schema
        if is_required:
            required.append(key)
    component: dict[str, Any] = {"properties": properties, "type": "object"}
    if required:
        component["required"] = required
    component["title"] = name
    components[name] = component
    # The members' media type when they all name one (`Body(media_type=...)`), as FastAPI.
    named = {getattr(member.marker, "media_type", "application/json") for member in members}
    media = named.pop() if len(named) == 1 else "application/json"
    out: dict[str, Any] = {"content": {media: {"schema": {"$ref": REF.format(model=name)}}}}
    if required:
        out["required"] = True
    return out


def _operation_id(app: Any, route: Any, method: str) -> str:
    """The route's `operation_id`, else what its (or its router's, or the app's)
    `generate_unique_id_function` makes of it, else FastAPI's default for `method`."""
    if route.operation_id:
        return str(route.operation_id)
    generate = route.generate_unique_id_function or getattr(
        app, "generate_unique_id_function", None)
    if generate is not None:
        return str(generate(route))
    name = route.name  # the handler's, unless the route is given another, as in FastAPI
    path = re.sub(r":\w+}", "}", route.path)  # `{p:path}` as `{p}`, as FastAPI writes it
    return re.sub(r"\W", "_", f"{name}{path}") + "_" + method.lower()


def _operation(
    app: Any, route: Any, method: str, components: dict[str, Any], schemes: dict[str, Any],
    outputs: dict[str, Any], callback: bool = False, operation_ids: set[str] | None = None,
) -> dict[str, Any]:
    """The operation object of `route`'s `method`: what it reads described into
    `components`, what it answers into `outputs`. A `callback` route (a request the API
    makes) is described by itself: the app's dependencies, answers and operation ids are
    not its. Callbacks' operation ids join `operation_ids`, where one used twice is warned of,
    as in FastAPI."""
    handler = route.handler
    doc = inspect.getdoc(handler) if inspect.isroutine(handler) else None
    op: dict[str, Any] = {}
    if route.tags:
        # An `Enum` tag by its value, as FastAPI lists it.
        op["tags"] = [tag.value if isinstance(tag, enum.Enum) else tag for tag in route.tags]
    op["summary"] = route.summary or _title(route.name)
    # What follows a form feed is for the code's readers only, as in FastAPI.
    description = (route.description or doc or "").split("\f")[0].strip()
    if description:
        op["description"] = description
    op["operationId"] = _operation_id(None if callback else app, route, method)
    if route.deprecated:
        op["deprecated"] = True
    leaves, form_fields, security = route_leaves(None if callback else app, route)
    if security:
        op["security"] = [{scheme.scheme_name: scopes} for scheme, scopes in security]
        schemes.update((scheme.scheme_name, dict(scheme.model)) for scheme, _ in security)
    parameters = []
    body: dict[str, Any] | None = None
    if form_fields:
        body = _form_body(form_fields, "Body_" + op["operationId"], components)
    members = [p for p in leaves if p.embedded]
    if members and body is None:
        body = _object_body(members, "Body_" + op["operationId"], components)
    for planned in leaves:
        source = planned.tuple[1]
        if source in ("path", "query", "header", "cookie"):
            parameter = _parameter(planned, components)
            if parameter is not None:
                parameters.append(parameter)
        elif source == "body" and body is None:
            inner = planned.body[1]  # the type as validated, with its metadata
            required = planned.tuple[5]
            schema = _constrained(type_schema(inner, components),
                                  pydantic_constraints(planned.marker))
            # A bare reference stands alone, as pydantic writes one.
            if set(schema) != {"$ref"}:
                schema["title"] = getattr(planned.marker, "title", None) or _title(
                    planned.body[0])
            if getattr(planned.marker, "examples", None) is not None:
                schema["examples"] = planned.marker.examples
            media: dict[str, Any] = {"schema": schema}
            examples = getattr(planned.marker, "openapi_examples", None)
            if examples:
                media["examples"] = examples
            media_type = getattr(planned.marker, "media_type", "application/json")
            body = {"content": {media_type: media}}
            if required:
                body["required"] = True
    if parameters:
        # FastAPI's order: path, query, header, then cookie parameters.
        where = ("path", "query", "header", "cookie")
        op["parameters"] = sorted(parameters, key=lambda p: where.index(p["in"]))
    if body is not None:
        op["requestBody"] = body
    model = response_models.resolve(handler, route.response_model)
    cls = response_classes.resolve(
        route.response_class, response_classes.DEFAULT if callback else app.default_response_class)
    json_class = cls is None or any(c.__name__ == "JSONResponse" for c in inspect.getmro(cls))
    media_type = "application/json" if cls is None else getattr(cls, "media_type", None)
    status = route.status_code
    if status == 200 and cls is not None:
        status = response_classes.default_status(cls)
    success: dict[str, Any] = {"description": route.response_description}
    if streams.is_streaming(handler):
        content = _stream_content(handler, cls, outputs)
        if content:
            success["content"] = content
    elif status not in (204, 304) and media_type:
        if json_class:
            schema = type_schema(model, sides.answering(model, outputs)) \
                if model is not None else {}
            if model is not None and "$ref" not in schema:
                # As FastAPI titles a response schema that is not a model's.
                schema["title"] = f"Response_{op['operationId']}".title().replace(
                    "_", " ")
        else:
            schema = {"type": "string"}
        success["content"] = {media_type: {"schema": schema}}
    responses: dict[str, Any] = {str(status): success}
    for code, extra in {**({} if callback else app.responses), **route.responses}.items():
        _add_response(responses, code, extra, media_type, outputs, op["operationId"])
    # Parameters left out of the schema still make the route answer 422, as FastAPI says.
    reads = any(p.tuple[1] in ("path", "query", "header", "cookie") for p in leaves)
    if reads or body is not None:
        responses["422"] = {
            "description": "Validation Error",
            "content": {
                "application/json": {"schema": {"$ref": REF.format(model="HTTPValidationError")}}
            },
        }
        components.setdefault("HTTPValidationError", HTTP_VALIDATION_ERROR)
        components.setdefault("ValidationError", VALIDATION_ERROR)
    op["responses"] = responses
    callbacks = route.callbacks if callback else getattr(app, "callbacks", []) + route.callbacks
    if callbacks:
        op["callbacks"] = {}
        for called in callbacks:
            item = op["callbacks"].setdefault(called.name, {}).setdefault(called.path, {})
            for called_method in called.methods:
                item[called_method.lower()] = _operation(
                    app, called, called_method, components, schemes, outputs, callback=True,
                    operation_ids=operation_ids)
                if operation_ids is not None:
                    _note_operation_id(item[called_method.lower()]["operationId"], called,
                                       operation_ids)
    if route.openapi_extra:
        _merge(op, route.openapi_extra)
    return op


# The event object of a Server-Sent Events stream, as FastAPI describes it.
_SSE_EVENT = {"data": {"type": "string"}, "event": {"type": "string"},
              "id": {"type": "string"}, "retry": {"type": "integer", "minimum": 0}}


def _stream_content(handler: Any, cls: Any, components: dict[str, Any]) -> dict[str, Any]:
    """A streaming route's success content: the schema of each item (JSON Lines) or event
    (Server-Sent Events), as FastAPI writes it; a raw stream's is text of its class's media
    type, if it has one."""
    how = streams.mode(cls)
    if how == "raw":
        media_type = getattr(cls, "media_type", None)
        return {media_type: {"schema": {"type": "string"}}} if media_type else {}
    item = streams.item_type(handler)
    if item is sse.ServerSentEvent:
        item = None
    item_schema = type_schema(item, sides.answering(item, components)) \
        if item is not None else {}
    if how == "jsonl":
        return {"application/jsonl": {"itemSchema": item_schema}}
    properties = {name: dict(schema) for name, schema in _SSE_EVENT.items()}
    event: dict[str, Any] = {"type": "object", "properties": properties}
    if item is not None:
        properties["data"].update(contentMediaType="application/json",
                                  contentSchema=item_schema)
        event["required"] = ["data"]
    return {"text/event-stream": {"itemSchema": event}}


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    """`extra` merged into `into` as FastAPI merges `openapi_extra` and `responses`: objects
    member by member, lists one after the other, anything else replaced."""
    for key, value in extra.items():
        if isinstance(into.get(key), dict) and isinstance(value, dict):
            _merge(into[key], value)
        elif isinstance(into.get(key), list) and isinstance(value, list):
            into[key] = into[key] + value
        else:
            into[key] = value


# The descriptions FastAPI gives a range of statuses in `responses`.
_STATUS_RANGES = {"1XX": "Information", "2XX": "Success", "3XX": "Redirection",
                  "4XX": "Client Error", "5XX": "Server Error", "DEFAULT": "Default Response"}


def _add_response(responses: dict[str, Any], code: Any, extra: dict[str, Any],
                  media_type: str | None, components: dict[str, Any],
                  operation_id: str) -> None:
    """A route's `responses` entry into its operation, as FastAPI puts it: a `model` becomes
    the schema of the route's media type (titled after the status and operation unless it
    is a model's own), the rest (description, headers, content) is merged over what is
    there, and a status with no description gets its reason phrase."""
    key = str(code).upper()
    extra = dict(extra)
    model = extra.pop("model", None)
    if model is not None:
        content = extra.setdefault("content", {})
        content.setdefault(media_type or "application/json", {}).setdefault("schema", {})
        schema = type_schema(model, sides.answering(model, components))
        if "$ref" not in schema:
            schema["title"] = f"Response_{code}_{operation_id}".title().replace("_", " ")
        _merge(content[media_type or "application/json"]["schema"], schema)
    key = "default" if key == "DEFAULT" else key
    entry = responses.setdefault(key, {})
    phrase = _STATUS_RANGES.get(key.upper())
    if phrase is None and key.isdigit():
        phrase = http.client.responses.get(int(key))
    description = extra.get("description") or entry.get("description") or phrase
    _merge(entry, extra)
    entry["description"] = description or "Additional Response"


def schema_info(title: str, version: str, summary: str | None = None,
                description: str | None = None, terms_of_service: str | None = None,
                contact: dict[str, Any] | None = None,
                license_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema's `info` object: the fields given, in FastAPI's order."""
    info: dict[str, Any] = {"title": title, "version": version}
    for key, value in (("summary", summary), ("description", description),
                       ("termsOfService", terms_of_service), ("contact", contact),
                       ("license", license_info)):
        if value:
            info[key] = value
    return info


def build_schema(app: Any, routes: list[Any] | None = None, *,
                 info: dict[str, Any] | None = None, servers: list[Any] | None = None,
                 tags: list[Any] | None = None, openapi_version: str = "3.1.0",
                 webhooks: list[Any] | None = None,
                 separate_input_output_schemas: bool | None = None) -> dict[str, Any]:
    """The app's OpenAPI 3.1 document as a dict: of `routes` and `webhooks` (the app's by
    default), with `info`, `servers` and `tags` (the app's by default)."""
    components = sides.for_requests()
    if separate_input_output_schemas is None:
        separate_input_output_schemas = getattr(app, "separate_input_output_schemas", True)
    outputs = sides.for_responses(components, separate_input_output_schemas)
    schemes: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    operation_ids: set[str] = set()
    for route in app._routes if routes is None else routes:
        if not route.include_in_schema:
            continue
        item = paths.setdefault(route.path.replace(":path}", "}"), {})
        for method in route.methods:
            if method.lower() in item:
                continue  # an earlier route answers it (see `App._warn_if_shadowed`)
            operation = _operation(app, route, method, components, schemes, outputs,
                                   operation_ids=operation_ids)
            _note_operation_id(operation["operationId"], route, operation_ids)
            item[method.lower()] = operation
    # Webhooks: requests the API makes to URLs its users register, described as callbacks.
    hooks: dict[str, Any] = {}
    for route in app.webhooks._routes if webhooks is None else webhooks:
        if route.include_in_schema:
            item = hooks.setdefault(route.path, {})
            for method in route.methods:
                operation = _operation(app, route, method, components, schemes, outputs,
                                       callback=True, operation_ids=operation_ids)
                _note_operation_id(operation["operationId"], route, operation_ids)
                item[method.lower()] = operation
    merged, document = sides.merged(components, outputs, {"paths": paths, "webhooks": hooks})
    paths, hooks = document["paths"], document["webhooks"]
    info_given = info  # `get_openapi` gives its own, and its own `externalDocs`
    if info is None:
        info = schema_info(app.title, app.version, app.summary, app.description,
                           app.terms_of_service, app.contact, app.license_info)
    schema: dict[str, Any] = {"openapi": openapi_version, "info": info}
    if servers is None:
        servers = list(app.servers or ())
        if app.root_path and app.root_path_in_servers and app.root_path not in [
                server.get("url") for server in servers]:
            servers.insert(0, {"url": app.root_path})
    if servers:
        schema["servers"] = servers
    schema["paths"] = paths
    if hooks:
        schema["webhooks"] = hooks
    if merged or schemes:
        schema["components"] = {}
        if merged:
            schema["components"]["schemas"] = dict(sorted(merged.items()))
        if schemes:
            schema["components"]["securitySchemes"] = schemes
    tags = app.openapi_tags if tags is None else tags
    if tags:
        schema["tags"] = tags
    external_docs = getattr(app, "openapi_external_docs", None)
    if external_docs and info_given is None:
        schema["externalDocs"] = external_docs
    _drop_null_defaults(schema)
    return schema


def _note_operation_id(operation_id: str, route: Any, seen: set[str]) -> None:
    """Warn of an operation id another operation has (client generators need them unique),
    with FastAPI's message."""
    if operation_id in seen:
        name = getattr(route.handler, "__name__", "<unnamed_endpoint>")
        message = f"Duplicate Operation ID {operation_id} for function {name}"
        file_name = getattr(route.handler, "__globals__", {}).get("__file__")
        if file_name:
            message += f" at {file_name}"
        warnings.warn(message, stacklevel=2)
    seen.add(operation_id)


# The keywords whose values are schemas, or mappings or lists of them.
_SUBSCHEMA = ("items", "additionalProperties", "not", "contains", "propertyNames")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "schemas")
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


def _drop_null_defaults(node: Any, in_schema: bool = False) -> None:
    """Take `"default": null` out of every schema in the document, as FastAPI serves it (it
    leaves out unset values: a `None` default reads as no default)."""
    if isinstance(node, list):
        for item in node:
            _drop_null_defaults(item, in_schema)
        return
    if not isinstance(node, dict):
        return
    if in_schema and "default" in node and node["default"] is None:
        del node["default"]
    for key, value in node.items():
        if key == "schema" or (in_schema and key in _SUBSCHEMA) or (
                in_schema and key in _SUBSCHEMA_LISTS):
            _drop_null_defaults(value, True)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _drop_null_defaults(sub, True)
        elif not in_schema:
            _drop_null_defaults(value, False)


def schema_routes(app: Any) -> list[Any]:
    """The routes serving the schema (`app.openapi_url`) and the docs pages (`app.docs_url`
    with its OAuth2 redirect page, `app.redoc_url`); none when those are `None`. None is
    listed in the schema."""
    from ..api_route import APIRoute
    from ..responses import HTMLResponse, JSONResponse

    routes = []
    taken = {route.path for route in app._routes}
    openapi_url = app.openapi_url
    if openapi_url and openapi_url not in taken:

        def openapi() -> Any:
            return JSONResponse(app.openapi())

        routes.append(APIRoute(openapi_url, openapi, include_in_schema=False,
                             response_class=None))
        if app.docs_url and app.docs_url not in taken:
            redirect_url = app.swagger_ui_oauth2_redirect_url

            def docs() -> Any:
                return HTMLResponse(swagger_ui_html(
                    f"{app.title} - Swagger UI", app.root_path + openapi_url,
                    app.swagger_ui_parameters, init_oauth=app.swagger_ui_init_oauth,
                    oauth2_redirect_url=redirect_url and app.root_path + redirect_url))

            routes.append(APIRoute(app.docs_url, docs,
                                  include_in_schema=False, response_class=None))
            if redirect_url and redirect_url not in taken:

                def oauth2_redirect() -> Any:
                    return HTMLResponse(oauth2_redirect_html())

                routes.append(APIRoute(redirect_url, oauth2_redirect,
                                     include_in_schema=False, response_class=None))
        if app.redoc_url and app.redoc_url not in taken:

            def redoc() -> Any:
                return HTMLResponse(redoc_html(f"{app.title} - ReDoc",
                                               app.root_path + openapi_url))

            routes.append(APIRoute(app.redoc_url, redoc,
                                  include_in_schema=False, response_class=None))
    return routes
