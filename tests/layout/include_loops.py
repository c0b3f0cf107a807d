#!/usr/bin/env python3
"""include_loops.py [-v] DIR... -- the files of a module must not depend on
each other in a loop through their headers (docs/architecture.md, "File
roles"). A.c depends on B.c when A.c includes, directly or through other
headers of its module, a header that declares a function B.c defines.
Prints each loop (the files of one strongly connected component) and exits
1 if any module has one; with -v also every file's dependencies.

A header that declares the functions of two files makes each depend on the
other; types-only headers (<module>_int.h) make nobody depend on anybody.
"""
import os
import re
import sys

FN_DEF = re.compile(r'^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*?\)\s*\{', re.M)
PROTO = re.compile(
    r'^[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*?\)\s*(?:__attribute__\S*)?\s*;',
    re.M)


def graph(d):
    """{file.c: set of file.c it depends on} for module directory d."""
    mod = os.path.basename(d.rstrip('/'))
    files = sorted(f for f in os.listdir(d) if f.endswith(('.c', '.h')))
    src = {f: open(os.path.join(d, f), errors='replace').read()
           for f in files}
    defs = {}
    for f in files:
        if f.endswith('.c'):
            for m in FN_DEF.finditer(src[f]):
                defs.setdefault(m.group(1), set()).add(f)
    decl = {f: {m.group(1) for m in PROTO.finditer(src[f])}
            for f in files if f.endswith('.h')}
    inc = re.compile(r'#include "%s/([\w.]+)"' % re.escape(mod))

    def headers_of(f, seen):
        for h in inc.findall(src[f]):
            if h in src and h not in seen:
                seen.add(h)
                headers_of(h, seen)
        return seen

    edges = {}
    for f in files:
        if f.endswith('.c'):
            edges[f] = {g for h in headers_of(f, set())
                        for name in decl.get(h, ())
                        for g in defs.get(name, ()) if g != f}
    return edges


def loops(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def main(argv):
    verbose = '-v' in argv
    dirs = [a for a in argv if a != '-v']
    if not dirs:
        sys.exit(__doc__)
    bad = 0
    for d in dirs:
        edges = graph(d)
        if verbose:
            for f in sorted(edges):
                print('%-24s -> %s' % (f, ' '.join(sorted(edges[f])) or '-'))
        comps = loops(edges)
        print('%s: %d loop(s)' % (d, len(comps)))
        for c in comps:
            print('   ' + ' '.join(c))
        bad += len(comps)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
