"""A file input a browser leaves empty (a part with `filename=""` and no bytes) and an empty
multipart body give no value, as in FastAPI: a required file is a 422 `missing`, an optional
one its default. Checked against FastAPI."""

from typing import Optional

import pytest

fastapi = pytest.importorskip("fastapi")

from fastapi.testclient import TestClient as FastAPIClient  # noqa: E402

import vireo  # noqa: E402
from vireo.testclient import TestClient  # noqa: E402

EMPTY_INPUTS = (
    b"--b\r\n"
    b'Content-Disposition: form-data; name="file"; filename=""\r\n'
    b"Content-Type: application/octet-stream\r\n\r\n"
    b"\r\n--b\r\n"
    b'Content-Disposition: form-data; name="note"\r\n\r\n'
    b"hi\r\n--b--\r\n"
)


def build(mod):
    app = mod.FastAPI()

    @app.post("/required")
    def required(file: mod.UploadFile, note: str = mod.Form("")):
        return {"name": file.filename}

    @app.post("/optional")
    def optional(file: Optional[mod.UploadFile] = mod.File(None), note: str = mod.Form("")):
        return {"file": None if file is None else file.filename, "note": note}

    return app


@pytest.mark.parametrize("path", ["/required", "/optional"])
@pytest.mark.parametrize("body", [b"", EMPTY_INPUTS])
def test_an_empty_file_input_is_no_file_as_in_fastapi(path, body):
    headers = {"content-type": "multipart/form-data; boundary=b"}
    mine = TestClient(build(vireo)).post(path, content=body, headers=headers)
    other = FastAPIClient(build(fastapi)).post(path, content=body, headers=headers)
    assert mine.status_code == other.status_code
    if mine.status_code == 200:
        assert mine.json() == other.json()
    else:
        assert [(e["type"], e["loc"]) for e in mine.json()["detail"]] == [
            (e["type"], e["loc"]) for e in other.json()["detail"]]
