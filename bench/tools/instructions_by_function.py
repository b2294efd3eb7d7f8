#!/usr/bin/env python3
"""Instructions per request by function, from a callgrind dump.

    bench/tools/instructions_by_function.py DUMP REQUESTS [--top N] [--lines NAME ...]
        [--event EVENT]

DUMP is a dump kept by `KEEP_DUMP=FILE bench/tools/instructions_per_request.sh ...`, REQUESTS
the request count that script printed. Prints each function's own instructions (inlined code
included, callees not) per request, and with `--lines` the source lines costing most inside
every function whose name contains NAME. `--event` counts another of the dump's events instead
of instructions (`Ir`): with `valgrind --tool=callgrind --branch-sim=yes --cache-sim=yes`,
`Bim` (indirect branches mispredicted), `Bcm` (conditional ones) or `I1mr` (first-level
instruction cache misses), as valgrind's simple models of them count.

Written because `callgrind_annotate` (valgrind 3.19) charges everything to `clone` in these
dumps: each thread's call from `clone` began before the counters were zeroed and is recorded
with `calls=0`, which it misreads.
"""

import argparse
import collections
import re
import sys

NAME_REF = re.compile(r"\((\d+)\)(?:\s+(.*))?")
CALLED_FILE_KEYS = {"cfi", "cfl"}
CALLED_FUNCTION_KEYS = {"cfn"}
OBJECT_KEYS = {"ob", "cob"}


def read_dump(path, event="Ir"):
    """(self cost by function, self cost by (function, file, line)) of `event`, from a dump
    whose positions are lines."""
    tables = {"file": {}, "function": {}, "object": {}}

    def resolve(table, value):
        # Names are compressed: `(id) name` the first time, `(id)` after.
        match = NAME_REF.match(value)
        if not match:
            return value
        key, name = match.groups()
        if name:
            tables[table][key] = name
        return tables[table].get(key, "?")

    by_function = collections.Counter()
    by_line = collections.Counter()
    function, source, current_file = "?", "?", "?"
    line = 0
    skip_call_cost = False
    column = 1
    with open(path, errors="replace") as dump:
        for text in dump:
            text = text.rstrip("\n")
            if not text:
                continue
            first = text[0]
            if first.isdigit() or first in "+-*":
                fields = text.split()
                position = fields[0]
                if position == "*":
                    pass
                elif position[0] in "+-":
                    line += int(position)
                else:
                    line = int(position)
                if skip_call_cost:
                    # The line after `calls=` is the callee's inclusive cost, not this
                    # function's own; its position still counts for the next lines'.
                    skip_call_cost = False
                    continue
                cost = int(fields[column]) if len(fields) > column else 0
                by_function[function] += cost
                by_line[(function, source, line)] += cost
                continue
            if text.startswith("events:"):
                names = text.split()[1:]
                if event not in names:
                    sys.exit(f"the dump has no event {event}; it has {' '.join(names)}")
                column = 1 + names.index(event)
                continue
            key, _, value = text.partition("=")
            if key == "fn":
                function = resolve("function", value)
                source = current_file
            elif key == "fl":
                current_file = resolve("file", value)
                source = current_file
            elif key in ("fi", "fe"):
                source = resolve("file", value)
            elif key == "calls":
                skip_call_cost = True
            elif key in CALLED_FILE_KEYS:
                resolve("file", value)
            elif key in CALLED_FUNCTION_KEYS:
                resolve("function", value)
            elif key in OBJECT_KEYS:
                resolve("object", value)
    return by_function, by_line


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("requests", type=int)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--lines", nargs="*", default=[], metavar="NAME")
    parser.add_argument("--event", default="Ir")
    args = parser.parse_args()
    if args.requests <= 0:
        sys.exit("REQUESTS must be a positive count")
    by_function, by_line = read_dump(args.dump, args.event)
    per = args.requests
    print(f"{sum(by_function.values()) / per:9.1f}  in all, per request")
    for function, cost in by_function.most_common(args.top):
        print(f"{cost / per:9.1f}  {function}")
    for wanted in args.lines:
        rows = [(key, cost) for key, cost in by_line.items() if wanted in key[0]]
        rows.sort(key=lambda row: -row[1])
        print(f"\n{sum(cost for _, cost in rows) / per:9.1f}  in functions named *{wanted}*")
        for (function, source, line), cost in rows[: args.top]:
            print(f"{cost / per:9.1f}  {source.rsplit('/', 1)[-1]}:{line}  ({function})")


if __name__ == "__main__":
    main()
