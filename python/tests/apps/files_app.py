"""An app serving files from the directory given on the command line, for the socket tests
of `FileResponse`: `python files_app.py DIR 127.0.0.1:0`."""

from __future__ import annotations

import os
import sys

from vireo import App, FileResponse

app = App()
ROOT = sys.argv[1] if len(sys.argv) > 1 else "."


@app.get("/files/{name}")
def file(name: str, download: bool = False) -> FileResponse:
    return FileResponse(os.path.join(ROOT, name), filename=name if download else None)


if __name__ == "__main__":
    host, _, port = sys.argv[2].rpartition(":")
    app.run(host, int(port))
