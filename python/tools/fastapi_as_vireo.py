"""An import hook for measuring FastAPI compatibility: `import fastapi` and `fastapi.X` give
`vireo` and `vireo.X`, so code written for FastAPI (its own tutorials and their tests) runs on
Vireo unchanged. `fastapi.staticfiles` and `fastapi.templating`, which FastAPI takes from
Starlette as they are, stay Starlette's. Loaded by `fastapi_tutorials.sh`'s conftest."""

import importlib
import importlib.abc
import importlib.util
import sys

FROM_STARLETTE = {"fastapi.staticfiles": "starlette.staticfiles",
                  "fastapi.templating": "starlette.templating"}


class FastAPIAsVireo(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name == "fastapi" or name.startswith("fastapi."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        target = FROM_STARLETTE.get(spec.name) or "vireo" + spec.name[len("fastapi"):]
        return importlib.import_module(target)

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, FastAPIAsVireo())
