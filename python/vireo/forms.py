"""Form fields and uploaded files: `Form()` and `File()` parameters read from an
`application/x-www-form-urlencoded` or `multipart/form-data` body. Multipart bodies are split
in native code (the `multer` crate); every field of a route is read in one pass, and every
error is listed in one 422 with the route's other errors."""

from __future__ import annotations

import io
import types
import typing
import urllib.parse
from typing import Any, BinaryIO, Callable, Mapping

from . import _vireo
from .exceptions import HTTPException, RequestValidationError
from .params import Param, is_json_marker
from .validation import _MISSING, _coerce, fresh_default

class Form(Param):
    """A form field: `name: str = Form()`; `list[str]` takes every value of the name.
    `media_type` is the body's in the schema (either form encoding is read whatever it
    says): `multipart/form-data` if one field says so, else the one all fields say, else
    `application/x-www-form-urlencoded`, as FastAPI describes it."""

    source = "form"
    default_media_type = "application/x-www-form-urlencoded"

    def __init__(self, default: Any = ..., *, media_type: str | None = None,
                 **options: Any) -> None:
        super().__init__(default, **options)
        self.media_type = media_type or self.default_media_type


class File(Form):
    """An uploaded file of a `multipart/form-data` body: `upload: UploadFile = File()`, or
    `data: bytes = File()` for its content."""

    source = "file"
    default_media_type = "multipart/form-data"


class UploadFile:
    """A file a client uploaded: `filename`, `content_type`, `headers`, `size`, and its
    content in `file` (a binary file object) or through `await read()`."""

    def __init__(
        self,
        file: BinaryIO,
        *,
        size: int | None = None,
        filename: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.file = file
        self.size = size
        self.filename = filename
        self.headers = dict(headers or {})

    @property
    def content_type(self) -> str | None:
        return self.headers.get("content-type")

    # A field of a pydantic model (a form model's, say) may be an UploadFile: it takes one
    # as it is, and the schema describes a file, as FastAPI's does.
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.is_instance_schema(cls)

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "string", "format": "binary"}

    async def read(self, size: int = -1) -> bytes:
        return self.file.read(size)

    async def seek(self, offset: int) -> None:
        self.file.seek(offset)

    async def write(self, data: bytes) -> None:
        self.file.write(data)

    async def close(self) -> None:
        self.file.close()

    def __repr__(self) -> str:
        return f"UploadFile(filename={self.filename!r}, size={self.size!r})"


def _is_list(tp: Any) -> tuple[bool, Any]:
    origin = typing.get_origin(tp)
    if origin in (list, typing.List) or tp is list:
        args = typing.get_args(tp)
        return True, args[0] if args else Any
    return False, tp


def _unwrap(tp: Any) -> tuple[Any, bool]:
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return tp, False


def _json_text(tp: Any) -> Any:
    """`Annotated[T, Json]` of a `pydantic.Json[T]` annotation (optional or not), else None."""
    if typing.get_origin(tp) is not typing.Annotated:
        return None
    args = typing.get_args(tp)
    markers = [m for m in args[1:] if is_json_marker(m)]
    if not markers:
        return None
    inner, _ = _unwrap(args[0])
    return typing.Annotated[(inner, *markers)]


def is_upload_type(tp: Any) -> bool:
    """`UploadFile`, `Optional[UploadFile]` or `list[UploadFile]`: a file parameter."""
    tp, _ = _unwrap(tp)
    _, item = _is_list(tp)
    item, _ = _unwrap(item)
    return isinstance(item, type) and issubclass(item, UploadFile)


class FormField:
    """A planned form field: where it is (`key`), its type, its default, and the form model
    it is a field of (`Annotated[Model, Form()]`), if any."""

    __slots__ = ("key", "annotation", "item", "many", "required", "default", "model",
                 "constraints", "check", "description", "schema_extra", "union", "media_type",
                 "whole", "alternates")

    def __init__(self, key: str, annotation: Any, required: bool, default: Any,
                 model: Any = None, constraints: dict[str, Any] | None = None,
                 where: str = "", description: str | None = None,
                 schema_extra: dict[str, Any] | None = None) -> None:
        self.key = key
        self.annotation = annotation
        inner, _ = _unwrap(annotation)
        json_text = _json_text(annotation)
        if json_text is not None:  # `Json[T]`: one text value, parsed as JSON into T
            self.many, self.item = False, json_text
        else:
            self.many, item = _is_list(inner)
            self.item, _ = _unwrap(item)
        # `tuple[int, int]`, `set[str]`: every value of the key, validated whole by pydantic.
        self.whole = inner if json_text is None and (typing.get_origin(inner) or inner) in (
            tuple, set, frozenset) else None
        if self.whole is not None:
            self.many = True
        self.required = required
        self.default = default
        self.model = model
        # With constraints (`Form(min_length=3)`), the value is validated by pydantic.
        self.constraints = constraints or {}
        self.description = description  # for the schema, with `schema_extra`
        self.schema_extra = schema_extra or {}
        self.check = _constrained_check(self, constraints or {}, where) \
            if constraints or json_text is not None or self.whole is not None else None
        # A union of form models (`vireo.form_unions.FormUnion`) reads the whole form.
        self.union: Any = None
        # The body's media type this field's marker names, for the schema.
        self.media_type = Form.default_media_type
        # Other names it may come by, tried in order after `key` (pydantic's `AliasChoices`).
        self.alternates: tuple[str, ...] = ()


def _constrained_check(field: FormField, constraints: dict[str, Any],
                       where: str) -> Callable[[Any, list[Any], list[dict[str, Any]]], Any]:
    """`check(text_or_texts, loc, errors)` of a form field with constraints, as FastAPI
    validates one: by pydantic, from the text, the constraints on the whole value."""
    if is_upload_type(field.annotation):
        raise TypeError(f"{where}: constraints ({', '.join(constraints)}) do not apply to a "
                        "file")
    try:
        import pydantic
    except ImportError:
        what = f"constraints ({', '.join(constraints)}) on a form value need" if constraints \
            else f"a form value of {field.whole!r} needs"
        raise TypeError(f"{where}: {what} pydantic (pip install pydantic)") from None
    whole = field.whole if field.whole is not None else \
        list[field.item] if field.many else field.item  # type: ignore[name-defined]
    adapter = pydantic.TypeAdapter(typing.Annotated[whole, pydantic.Field(**constraints)])

    def check(value: Any, loc: list[Any], errors: list[dict[str, Any]]) -> Any:
        try:
            return adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            errors.extend({**e, "loc": [*loc, *e["loc"]]} for e in exc.errors(include_url=False))
            return _MISSING

    return check


def _convert(value: Any, field: FormField, loc: list[Any], errors: list[dict[str, Any]]) -> Any:
    item = field.item
    if isinstance(item, type) and issubclass(item, UploadFile):
        if isinstance(value, UploadFile):
            return value
        errors.append(
            {
                "type": "value_error",
                "loc": loc,
                "msg": f"Value error, Expected UploadFile, received: {type(value)}",
                "input": value,
            }
        )
        return _MISSING
    if item is bytes:
        if isinstance(value, UploadFile):
            return value.file.getvalue()  # type: ignore[attr-defined]
        return value.encode()
    if isinstance(value, UploadFile):
        errors.append(
            {
                "type": "string_type",
                "loc": loc,
                "msg": "Input should be a valid string",
                "input": None,
            }
        )
        return _MISSING
    return _coerce(value, item, loc, errors)


def _read(body: bytes, content_type: str | None,
          limits: Mapping[str, int]) -> dict[str, list[Any]]:
    """The body's fields, by name, each value a `str` or an `UploadFile`, read under
    `limits` (`max_fields`, `max_files`, `max_part_size`)."""
    values: dict[str, list[Any]] = {}
    for name, value in fields_of(body, content_type, limits["max_fields"], limits["max_files"],
                                 limits["max_part_size"]):
        values.setdefault(name, []).append(value)
    return values


def fields_of(body: bytes, content_type: str | None, max_fields: int, max_files: int,
              max_part_size: int | None) -> list[tuple[str, Any]]:
    """The body's fields in order, as `(name, value)`, each value a `str` or an `UploadFile`
    (for a `multipart/form-data` or `application/x-www-form-urlencoded` body; none for any
    other). A body past the limits, or one that cannot be read, is an `HTTPException` (400,
    with Starlette's messages for the limits)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    fields: list[tuple[str, Any]] = []
    if media == "multipart/form-data" and body:  # an empty body has no fields
        try:
            # One part more than the limits allow, so the first part past them is named.
            parts = _vireo.parse_multipart(body, content_type, max_fields + max_files + 1)
        except _vireo.MultipartError as exc:
            status, message = exc.args
            raise HTTPException(status, message) from None
        files = 0
        for name, filename, _ctype, headers, data in parts:
            files += filename is not None
            if files > max_files:
                raise HTTPException(
                    400, f"Too many files. Maximum number of files is {max_files}.")
            if len(fields) + 1 - files > max_fields:
                raise HTTPException(
                    400, f"Too many fields. Maximum number of fields is {max_fields}.")
            if filename is None:
                if max_part_size is not None and len(data) > max_part_size:
                    raise HTTPException(
                        400, f"Part exceeded maximum size of {int(max_part_size / 1024)}KB.")
                value: Any = data.decode("utf-8", "replace")
            else:
                value = UploadFile(
                    io.BytesIO(data), size=len(data), filename=filename, headers=dict(headers)
                )
            fields.append((name, value))
    elif media == "application/x-www-form-urlencoded" and body:
        # The body is within its limit already, so it is split whole and then counted.
        fields = urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        if len(fields) > max_fields:
            raise HTTPException(
                400, f"Too many fields. Maximum number of fields is {max_fields}.")
        # A field's size is its name's and value's bytes as sent, as Starlette counts it.
        if max_part_size is not None and any(
                len(field) - (b"=" in field) > max_part_size for field in body.split(b"&")):
            raise HTTPException(
                400, f"Field exceeded maximum size of {int(max_part_size / 1024)}KB.")
    return fields


class FormData(Mapping[str, Any]):
    """A form's fields, as Starlette's `FormData`: `form["name"]` is a field's last value,
    `getlist("name")` every value in order, `multi_items()` every `(name, value)`; a file is
    an `UploadFile`. `await form.close()` closes the files."""

    def __init__(self, fields: list[tuple[str, Any]]) -> None:
        self._fields = fields
        self._last = dict(fields)

    def __getitem__(self, name: str) -> Any:
        return self._last[name]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._last)

    def __len__(self) -> int:
        return len(self._last)

    def getlist(self, name: str) -> list[Any]:
        return [value for key, value in self._fields if key == name]

    def multi_items(self) -> list[tuple[str, Any]]:
        return list(self._fields)

    async def close(self) -> None:
        for _, value in self._fields:
            if isinstance(value, UploadFile):
                await value.close()

    def __repr__(self) -> str:
        return f"FormData({self._fields!r})"


def form_validator(fields: list[FormField], limits: Mapping[str, int]
                   ) -> Callable[[bytes, str | None], list[Any]]:
    """`validate(body, content_type) -> [value of each field]`, raising
    `RequestValidationError` with every field's error, or `HTTPException` (400) for a body
    that cannot be read or is past `limits` (see `vireo.body_limits`)."""

    def validate(body: bytes, content_type: str | None) -> list[Any]:
        found = _read(body, content_type, limits)
        errors: list[dict[str, Any]] = []
        out = []
        for field in fields:
            if field.union is not None:
                if field.required or field.union.given(found):
                    out.append(field.union.read(found, errors))
                else:
                    out.append(fresh_default(field.default))
                continue
            # A file input left empty (a part with an empty filename and no bytes, as a
            # browser sends it) is no value, as in FastAPI.
            key = field.key if not field.alternates else next(
                (k for k in (field.key, *field.alternates) if k in found), field.key)
            given = [value for value in found.get(key, ())
                     if not (isinstance(value, UploadFile) and not value.filename
                             and not value.size)]
            if given and not field.many and given[-1] == "":
                # An input left empty is no value (the default, or a missing required one),
                # as FastAPI reads an HTML form.
                given = []
            loc = ["body", key]
            if not given:
                if field.required:
                    errors.append(
                        {"type": "missing", "loc": loc, "msg": "Field required", "input": None}
                    )
                out.append(fresh_default(field.default))
            elif field.check is not None:
                out.append(field.check(given if field.many else given[-1], loc, errors))
            elif field.many:
                out.append([_convert(v, field, [*loc, i], errors) for i, v in enumerate(given)])
            else:
                out.append(_convert(given[-1], field, loc, errors))
        if errors:
            raise RequestValidationError(errors)
        return out

    return validate
