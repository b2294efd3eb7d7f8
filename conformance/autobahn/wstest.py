"""Run Autobahn|Testsuite's `wstest` from a `pip install --target DIR` (Python 2.7).

    python2.7 conformance/autobahn/wstest.py DIR -m fuzzingclient -s spec.json

`--target` installs skip the `.pth` files of namespace packages (zope.interface);
`site.addsitedir` reads them.
"""
import site
import sys

site.addsitedir(sys.argv.pop(1))
from autobahntestsuite.wstest import run  # noqa: E402

sys.exit(run())
