"""The schema's named components, written once for what requests send (pydantic's
validation mode) and once for what responses give (its serialization mode), then merged as
FastAPI merges them: a model whose two schemas differ (a computed field, bytes written as
base64 only one way) is listed twice, as `Model-Input` and `Model-Output`; any other once,
by its name."""

from __future__ import annotations

from typing import Any

REF = "#/components/schemas/{model}"
# Where a response-side schema refers to another until the two sides are merged.
_OUTPUT_REF = "#/components/output-schemas/{model}"


class Components(dict):
    """Component schemas by name, for one side: `mode` is pydantic's JSON-schema mode and
    `ref` the template of a reference to one of them."""

    def __init__(self, mode: str = "validation", ref: str = REF) -> None:
        super().__init__()
        self.mode = mode
        self.ref = ref


def for_requests() -> Components:
    return Components()


def for_responses(requests: Components, separate: bool = True) -> Components:
    """The response side; unless `separate`, it lends `requests` the types it describes
    (see `answering`)."""
    outputs = Components("serialization", _OUTPUT_REF)
    outputs.requests, outputs.separate = requests, separate  # type: ignore[attr-defined]
    return outputs


def answering(tp: Any, outputs: dict[str, Any]) -> dict[str, Any]:
    """Where a type a response gives is described: the response side, or (with
    `separate_input_output_schemas=False`) the request side unless the type has computed
    fields, which only a response has, as FastAPI decides it."""
    if getattr(outputs, "separate", True) or _has_computed_fields(tp, set()):
        return outputs
    return outputs.requests  # type: ignore[attr-defined, no-any-return]


def _has_computed_fields(tp: Any, seen: set[Any]) -> bool:
    """Whether `tp`, or a model it holds, has computed fields."""
    import typing

    if isinstance(tp, type) and hasattr(tp, "model_computed_fields"):
        if tp in seen:
            return False
        seen.add(tp)
        return bool(tp.model_computed_fields) or any(
            _has_computed_fields(field.annotation, seen) for field in tp.model_fields.values())
    return any(_has_computed_fields(arg, seen) for arg in typing.get_args(tp))


def mode_of(components: dict[str, Any]) -> str:
    return getattr(components, "mode", "validation")


def ref_of(components: dict[str, Any]) -> str:
    return getattr(components, "ref", REF)


def _refs(schema: Any) -> set[str]:
    """The names of the components `schema` refers to (either side's)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if isinstance(value, str) and key == "$ref":
                found.add(value.rsplit("/", 1)[-1])
            else:
                found |= _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _refs(value)
    return found


def _rewritten(schema: Any, names: dict[str, str]) -> Any:
    """`schema` with each reference (and discriminator mapping) to a component renamed as
    `names` says, by the reference's full text."""
    if isinstance(schema, dict):
        return {key: names.get(value, value) if isinstance(value, str)
                else _rewritten(value, names) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_rewritten(value, names) for value in schema]
    return schema


def merged(inputs: Components, outputs: Components, document: dict[str, Any]
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The components of both sides as one, and `document` (the paths and webhooks) with its
    references pointing at them."""
    as_input = {_OUTPUT_REF.format(model=name): REF.format(model=name) for name in outputs}
    both = inputs.keys() & outputs.keys()
    split = {name for name in both if _rewritten(outputs[name], as_input) != inputs[name]}
    # A model referring to one that is split is split too: its two sides refer to two names.
    growing = True
    while growing:
        growing = False
        for name in both - split:
            if _refs(inputs[name]) & split:
                split.add(name)
                growing = True
    names: dict[str, str] = {}
    out: dict[str, Any] = {}
    for name in inputs:
        final = f"{name}-Input" if name in split else name
        names[REF.format(model=name)] = REF.format(model=final)
    for name in outputs:
        final = f"{name}-Output" if name in split else name
        names[_OUTPUT_REF.format(model=name)] = REF.format(model=final)
    for name, schema in inputs.items():
        out[f"{name}-Input" if name in split else name] = _rewritten(schema, names)
    for name, schema in outputs.items():
        if name in split:
            out[f"{name}-Output"] = _rewritten(schema, names)
        elif name not in inputs:
            out[name] = _rewritten(schema, names)
    return out, _rewritten(document, names)
