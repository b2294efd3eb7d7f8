"""Form models that are a union of models, as FastAPI's: `contact: Annotated[Person | Company,
Form(discriminator="kind")]` reads the whole form as the model its `kind` field names (or,
without a discriminator, as the first model that accepts it) and passes that model. With
`| None` and a default, it is the default when the form has none of the models' fields."""

from __future__ import annotations

import functools
import typing
import types
from typing import Any


def union_models(tp: Any) -> list[type]:
    """The pydantic models of `tp` when it is a union of two or more of them (and None)."""
    from .validation import _pydantic_model

    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return []
    models = []
    for arg in typing.get_args(tp):
        if arg is type(None):
            continue
        if typing.get_origin(arg) is typing.Annotated:
            arg = typing.get_args(arg)[0]
        if not _pydantic_model(arg):
            return []
        models.append(arg)
    return models if len(models) > 1 else []


def _is_empty_file(value: Any) -> bool:
    from .forms import UploadFile

    return isinstance(value, UploadFile) and not value.filename and not value.size


def _as_model_reads(value: Any, *, model: Any) -> Any:
    """The form (each name's value, or its values as a list when repeated) as `model` reads
    it: a list field gets every value, any other field the last; an empty text or file input
    is no value; the names that are not fields are left as they are."""
    if not isinstance(value, dict):
        return value
    from .forms import _is_list, _unwrap

    out: dict[str, Any] = {}
    names = set()
    for name, field in model.model_fields.items():
        key = field.alias or name
        names.add(key)
        if key not in value:
            continue
        given = value[key] if isinstance(value[key], list) else [value[key]]
        if _is_list(_unwrap(field.annotation)[0])[0]:
            given = [item for item in given if not _is_empty_file(item)]
            if given:
                out[key] = given
        elif given and given[-1] != "" and not _is_empty_file(given[-1]):
            out[key] = given[-1]
    out.update((key, item) for key, item in value.items() if key not in names)
    return out


class FormUnion:
    """How one union-of-models form parameter is read and described."""

    __slots__ = ("annotation", "models", "optional", "adapter", "names", "takes_extras")

    def __init__(self, tp: Any, discriminator: str | None, where: str) -> None:
        try:
            import pydantic
        except ImportError:
            raise TypeError(f"{where}: a union of form models needs pydantic "
                            "(pip install pydantic)") from None
        self.models = union_models(tp)
        self.optional = type(None) in typing.get_args(tp)
        branches = []
        for choice in typing.get_args(tp):
            if choice is type(None):
                continue
            model = typing.get_args(choice)[0] if typing.get_origin(choice) is typing.Annotated \
                else choice
            # Each model reads the form its own way (a repeated name is a list for a list
            # field, its last value otherwise); errors are located by the model's name.
            read = pydantic.BeforeValidator(functools.partial(_as_model_reads, model=model))
            branches.append(typing.Annotated[choice, read, pydantic.Tag(model.__name__)])
        union: Any = typing.Union[tuple(branches)]
        if discriminator is not None:
            union = typing.Annotated[union, pydantic.Field(discriminator=discriminator)]
        self.annotation = union
        try:
            self.adapter = pydantic.TypeAdapter(union)
        except pydantic.PydanticUserError as exc:
            raise TypeError(f"{where}: {exc.message}") from None
        self.names = {field.alias or name for model in self.models
                      for name, field in model.model_fields.items()}
        self.takes_extras = any(model.model_config.get("extra") in ("allow", "forbid")
                                for model in self.models)

    def given(self, found: dict[str, list[Any]]) -> bool:
        """Whether the form gives this parameter: some field of a model, or anything for a
        model that takes extra fields."""
        return bool(self.names.intersection(found) or (self.takes_extras and found))

    def read(self, found: dict[str, list[Any]], errors: list[dict[str, Any]]) -> Any:
        """The model the form `found` (each name's values) is, or `None` with its errors
        added to `errors`, located in the body."""
        import pydantic

        form = {key: values[0] if len(values) == 1 else values for key, values in found.items()}
        try:
            return self.adapter.validate_python(form)
        except pydantic.ValidationError as exc:
            errors.extend({**e, "loc": ["body", *e["loc"]]} for e in exc.errors(include_url=False))
            return None

    def schema(self, title: str, components: dict[str, Any]) -> dict[str, Any]:
        """Its place in the form's schema: one of the models, or (when it may be absent) none
        of their fields at all."""
        from .openapi.components import ref_of
        from .openapi.schema import _generator

        schema = self.adapter.json_schema(ref_template=ref_of(components),
                                          schema_generator=_generator())
        components.update(schema.pop("$defs", {}))
        if not self.optional:
            return {**schema, "title": title}
        absent = {"not": {"anyOf": [{"required": [name]} for name in sorted(self.names)]}}
        return {"anyOf": [absent, {"anyOf": [schema], "title": title}]}

