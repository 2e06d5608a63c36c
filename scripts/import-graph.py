#!/usr/bin/env python3
"""Import circles between the files of each crate of the workspace.

Reads every target of every crate under crates/ (src/lib.rs, src/main.rs,
src/bin/*.rs, tests/*.rs, examples/*.rs, benches/*.rs), follows its
`mod` declarations to map files to modules, and turns each `crate::`,
`super::`, `self::` or child-module path (in `use` lines and in code) into
edges from the file that writes it to the module file it names and, when
that module only re-exports the name (`pub use`, globs included), on to
the file that defines it. Inside a crate, name the defining module: a path
through a re-export depends on both files.

A strongly connected component of more than two files is a circle: the
script prints it, with the edges inside it, and exits 1. Two files that use
each other (a module and its tests, a parent and one child) are allowed.

Two rules on top. The crates' own arrows: each crate's [dependencies] name
only the Windlass crates LAYERS allows (arrows point inward). And, for the server: a route file (`windlass-server/src/http/
<x>.rs`) never imports another route file; what two routes share belongs in
`intake.rs`, `run/`, `guard/` or a small shared module (a route that borrows
a sibling's helpers is how the server's rooms grew circles before).

    scripts/import-graph.py                 # every crate, fail on a circle
    scripts/import-graph.py -v              # also list the two-file pairs
    scripts/import-graph.py windlass-engine # one crate
    scripts/import-graph.py --except windlass-server,windlass-store
                                            # every crate but these (reported)
"""

import argparse
import os
import re
import sys
from collections import defaultdict

MAX_FILES = 2
# The Windlass crates each crate may depend on (normal dependencies; dev
# ones are free): arrows point inward (ARCHITECTURE.md, "Layers").
INNER = {"windlass-protocol", "windlass-engine"}
LAYERS = {
    "windlass-protocol": set(),
    "windlass-auth": set(),
    "windlass-engine": {"windlass-protocol"},
    **{
        c: INNER
        for c in (
            "windlass-providers",
            "windlass-store",
            "windlass-tools",
            "windlass-governance",
            "windlass-retrieval",
        )
    },
    # The server runs the ingestion worker and vector store search from the
    # retrieval crate (a library over the engine's resource ports).
    "windlass-server": INNER | {"windlass-auth", "windlass-retrieval"},
}
# Directories whose files may not import each other: (crate, dir, allowed).
SIBLING_RULES = [("windlass-server", "src/http", {"mod.rs"})]

# --- tokens --------------------------------------------------------------

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RAW_IDENT = re.compile(r"r#([A-Za-z_][A-Za-z0-9_]*)")
NUMBER = re.compile(r"[0-9][0-9A-Za-z_.]*")
RAW_STR = re.compile(r'b?r(#*)"')


def tokens(src):
    """Rust tokens without comments: (kind, text); kind is ident, str,
    punct or other. `::` is one punct."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := RAW_STR.match(src, i)) and (c in "rb"):
            end = '"' + m.group(1)
            j = src.find(end, m.end())
            j = n if j < 0 else j
            out.append(("str", src[m.end() : j]))
            i = j + len(end)
        elif c == '"' or (c == "b" and src.startswith('b"', i)):
            j = i + (2 if c == "b" else 1)
            start = j
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(("str", src[start:j]))
            i = j + 1
        elif c == "'" or (c == "b" and src.startswith("b'", i)):
            j = i + (2 if c == "b" else 1)
            if j < n and src[j] == "\\":
                k = src.find("'", j + 2)
                i = n if k < 0 else k + 1
            elif j + 1 < n and src[j + 1] == "'":
                i = j + 2
            else:  # a lifetime or label
                m = IDENT.match(src, j)
                i = m.end() if m else j
            out.append(("other", "'"))
        elif m := RAW_IDENT.match(src, i):
            out.append(("ident", m.group(1)))
            i = m.end()
        elif m := IDENT.match(src, i):
            out.append(("ident", m.group(0)))
            i = m.end()
        elif m := NUMBER.match(src, i):
            out.append(("other", m.group(0)))
            i = m.end()
        elif src.startswith("::", i):
            out.append(("punct", "::"))
            i += 2
        else:
            out.append(("punct", c))
            i += 1
    return out


# --- module tree ---------------------------------------------------------

ITEM_KEYWORDS = {"struct", "enum", "fn", "trait", "type", "const", "static", "union"}
KEYWORDS = ITEM_KEYWORDS | {
    "pub", "crate", "super", "self", "Self", "use", "mod", "impl", "where",
    "unsafe", "async", "extern", "let", "mut", "ref", "as", "in", "for",
}


class Module:
    def __init__(self, path, file, mod_rs_dir, inline_dir):
        self.path = path  # tuple of names from the crate root
        self.file = file
        self.mod_rs_dir = mod_rs_dir  # where `mod x;` looks for x.rs
        self.inline_dir = inline_dir
        self.children = {}  # name -> module path
        self.items = set()  # names defined here
        self.reexports = {}  # visible name -> (anchor path, segments)
        self.globs = []  # (anchor path, segments) of `pub use ...::*`
        self.aliases = {}  # name -> (anchor path, segments) of any `use`
        self.refs = []  # (anchor path, segments, text) as written


class Crate:
    def __init__(self, root):
        self.modules = {}
        # A crate root's modules sit beside it (also for a bin or test `x.rs`).
        self.load(root, (), os.path.dirname(root))

    def load(self, file, path, child_dir):
        """Reads `file` as module `path`; its `mod x;` look in child_dir."""
        try:
            with open(file, encoding="utf-8") as f:
                toks = tokens(f.read())
        except OSError:
            return
        self.modules[path] = Module(path, file, child_dir, child_dir)
        self.scan(toks, file, path, child_dir)

    def scan(self, toks, file, root_path, mod_dir):
        """One pass over a file: modules (inline ones get their own scope),
        items, uses and paths."""
        stack = [(root_path, 0, mod_dir)]  # (module, brace depth, dir)
        depth, i, n = 0, 0, len(toks)
        attr_path = None
        while i < n:
            kind, text = toks[i]
            mod_path, mod_depth, cur_dir = stack[-1]
            module = self.modules[mod_path]
            if text == "{":
                depth += 1
            elif text == "}":
                depth -= 1
                if len(stack) > 1 and depth < stack[-1][1]:
                    stack.pop()
            elif text == "#" and i + 1 < n and toks[i + 1][1] == "[":
                j, attr = close(toks, i + 1, "[", "]")
                if len(attr) >= 3 and attr[0][1] == "path" and attr[2][0] == "str":
                    attr_path = attr[2][1]
                i = j
                continue
            elif kind == "ident" and text == "mod" and i + 2 < n:
                name, nxt = toks[i + 1][1], toks[i + 2][1]
                child = mod_path + (name,)
                module.children[name] = child
                module.items.add(name)
                if nxt == ";":
                    self.load_child(module, name, child, attr_path, cur_dir)
                    i += 3
                elif nxt == "{":
                    depth += 1
                    sub = os.path.join(cur_dir, attr_path or name)
                    self.modules[child] = Module(child, file, sub, sub)
                    stack.append((child, depth, sub))
                    i += 3
                attr_path = None
                continue
            elif kind == "ident" and text == "use":
                j = i + 1
                trees = []
                j = use_tree(toks, j, [], trees)
                vis = visibility(toks, i)
                for segs, leaf in trees:
                    anchored = self.anchor(module, segs)
                    if anchored is None:
                        continue
                    ref = (anchored[0], anchored[1], "::".join(segs))
                    module.refs.append(ref)
                    if leaf == "*":
                        if vis:
                            module.globs.append(anchored)
                    else:
                        name = leaf if leaf != "self" else segs[-1]
                        module.aliases[name] = anchored
                        if vis:
                            module.reexports[name] = anchored
                i = j
                continue
            elif kind == "ident" and text in ITEM_KEYWORDS and depth == mod_depth:
                j = i + 1
                while j < n and toks[j][1] in KEYWORDS:
                    j += 1
                if j < n and toks[j][0] == "ident" and toks[j - 1][1] in ITEM_KEYWORDS:
                    module.items.add(toks[j][1])
            elif kind == "ident" and text == "macro_rules" and i + 2 < n:
                module.items.add(toks[i + 2][1])
            elif kind == "ident" and i + 1 < n and toks[i + 1][1] == "::":
                if i == 0 or toks[i - 1][1] != "::":
                    segs, j = path_at(toks, i)
                    anchored = self.anchor(module, segs, in_code=True)
                    if anchored is not None:
                        module.refs.append((anchored[0], anchored[1], "::".join(segs)))
                    i = j
                    continue
            i += 1

    def load_child(self, parent, name, child, attr_path, cur_dir):
        if attr_path:
            # Outside inline blocks `#[path]` is relative to the file's
            # directory; a file loaded so owns its directory.
            inline = cur_dir != parent.mod_rs_dir
            base = cur_dir if inline else os.path.dirname(parent.file)
            file = os.path.normpath(os.path.join(base, attr_path))
            self.load(file, child, os.path.dirname(file))
            return
        for candidate in (
            os.path.join(cur_dir, name + ".rs"),
            os.path.join(cur_dir, name, "mod.rs"),
        ):
            if os.path.exists(candidate):
                self.load(candidate, child, os.path.join(cur_dir, name))
                return

    def anchor(self, module, segs, in_code=False):
        """(module path, remaining segments) a path starts from, or None
        for paths outside the crate (std, dependencies, locals)."""
        if not segs:
            return None
        first = segs[0]
        if first == "crate":
            return (), segs[1:]
        if first in ("super", "self"):
            base, rest = module.path, list(segs)
            while rest and rest[0] in ("super", "self"):
                if rest.pop(0) == "super":
                    base = base[:-1]
            return base, rest
        if first in module.children:
            return module.path, list(segs)
        if in_code and first in module.aliases:
            base, rest = module.aliases[first]
            return base, list(rest) + list(segs[1:])
        return None

    def resolve(self, base, segs, seen=None):
        """The files a path from module `base` depends on: the module it
        names and, when that module only re-exports the name, the file
        that defines it."""
        seen = seen if seen is not None else set()
        key = (base, tuple(segs))
        if key in seen or base not in self.modules:
            return set()
        seen.add(key)
        mod = self.modules[base]
        segs = list(segs)
        while segs and segs[0] in mod.children and mod.children[segs[0]] in self.modules:
            mod = self.modules[mod.children[segs[0]]]
            segs.pop(0)
        found = {mod.file}
        if not segs or segs[0] in mod.items:
            return found
        name = segs[0]
        if name in mod.reexports:
            b, s = mod.reexports[name]
            return found | self.resolve(b, list(s) + segs[1:], seen)
        for b, s in mod.globs:
            target = self.resolve_module(b, s)
            if target and (name in target.items or name in target.reexports):
                return found | self.resolve(target.path, segs, seen)
        return found

    def resolve_module(self, base, segs):
        mod = self.modules.get(base)
        for s in segs:
            if mod is None or s not in mod.children:
                return None
            mod = self.modules.get(mod.children[s])
        return mod

    def edges(self):
        out = defaultdict(dict)  # file -> {file: example path}
        for mod in self.modules.values():
            for base, segs, text in mod.refs:
                for target in self.resolve(base, segs):
                    if target != mod.file:
                        out[mod.file].setdefault(target, text)
        return out


def close(toks, i, open_, close_):
    """Index after the bracket group starting at i, and its inner tokens."""
    depth, j = 0, i
    while j < len(toks):
        if toks[j][1] == open_:
            depth += 1
        elif toks[j][1] == close_:
            depth -= 1
            if depth == 0:
                return j + 1, toks[i + 1 : j]
        j += 1
    return j, toks[i + 1 :]


def visibility(toks, i):
    """Whether the `use` at i is a re-export (`pub` in any form)."""
    j = i - 1
    if j >= 0 and toks[j][1] == ")":
        while j >= 0 and toks[j][1] != "(":
            j -= 1
        j -= 1
    return j >= 0 and toks[j][1] == "pub"


def use_tree(toks, i, prefix, out):
    """Parses a use tree at i into out as (segments, leaf); returns the
    index after it (after the `;` at the top level)."""
    segs = list(prefix)
    n = len(toks)
    if i < n and toks[i][1] == "::":  # `::std::...`: another crate
        segs.append("::")
        i += 1
    while i < n:
        kind, text = toks[i]
        if text == "{":
            i += 1
            while i < n and toks[i][1] != "}":
                i = use_tree(toks, i, segs, out)
                if i < n and toks[i][1] == ",":
                    i += 1
            i += 1
            break
        if text == "*":
            out.append((segs, "*"))
            i += 1
            break
        if kind == "ident":
            segs = segs + [text]
            i += 1
            if i < n and toks[i][1] == "::":
                i += 1
                continue
            leaf = text
            if i + 1 < n and toks[i][1] == "as":
                i += 2
                leaf = toks[i - 1][1]
            if segs[-1] == "self":
                segs = segs[:-1]
                leaf = "self" if leaf == "self" else leaf
            out.append((segs, leaf))
            break
        break
    if not prefix and i < n and toks[i][1] == ";":
        i += 1
    return i


def path_at(toks, i):
    segs, n = [toks[i][1]], len(toks)
    i += 1
    while i + 1 < n and toks[i][1] == "::" and toks[i + 1][0] == "ident":
        segs.append(toks[i + 1][1])
        i += 2
    return segs, i


# --- components ----------------------------------------------------------


def components(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def targets(crate_dir):
    roots = []
    for rel in ("src/lib.rs", "src/main.rs"):
        p = os.path.join(crate_dir, rel)
        if os.path.exists(p):
            roots.append(p)
    for sub in ("src/bin", "tests", "examples", "benches"):
        d = os.path.join(crate_dir, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if name.endswith(".rs"):
                roots.append(p)
            elif os.path.exists(os.path.join(p, "main.rs")):
                roots.append(os.path.join(p, "main.rs"))
    return roots


def check(workspace, crate_names, verbose, excepted):
    failed = False
    crates_dir = os.path.join(workspace, "crates")
    names = crate_names or sorted(os.listdir(crates_dir))
    for name in names:
        crate_dir = os.path.join(crates_dir, name)
        if os.path.exists(os.path.join(crate_dir, "Cargo.toml")):
            failed |= outward_arrows(name, crate_dir)
        if name in excepted:
            print(f"{name}: not checked (--except)")
            continue
        crate_dir = os.path.join(crates_dir, name)
        if not os.path.exists(os.path.join(crate_dir, "Cargo.toml")):
            continue
        files, worst = 0, 1
        for root in targets(crate_dir):
            crate = Crate(root)
            edges = crate.edges()
            nodes = {m.file for m in crate.modules.values()}
            files += len(nodes) if root.endswith(("lib.rs", "main.rs")) else 0
            for comp in components(nodes, edges):
                worst = max(worst, len(comp))
                if len(comp) > MAX_FILES or (verbose and len(comp) > 1):
                    failed |= len(comp) > MAX_FILES
                    report(workspace, root, comp, edges)
            failed |= sibling_imports(workspace, name, crate_dir, edges)
        status = "ok" if worst <= MAX_FILES else "CIRCLE"
        print(f"{name}: largest circle {worst} file(s) [{status}]")
    return failed


def crate_deps(crate_dir):
    """The windlass-* crates in [dependencies] (not dev or build ones)."""
    deps, section = set(), None
    with open(os.path.join(crate_dir, "Cargo.toml")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "dependencies":
                m = re.match(r"(windlass[a-z-]*)\s*=", line)
                if m:
                    deps.add(m.group(1))
    return deps


def outward_arrows(name, crate_dir):
    """Reports dependencies LAYERS does not allow; true when there is one."""
    if name not in LAYERS:
        return False
    extra = crate_deps(crate_dir) - LAYERS[name]
    for dep in sorted(extra):
        print(f"  {name} depends on {dep}: an arrow outward (ARCHITECTURE.md)")
    return bool(extra)


def sibling_imports(workspace, name, crate_dir, edges):
    """Reports imports between files of a directory that SIBLING_RULES keeps
    apart; true when there is one."""
    found = False
    for crate, sub, allowed in SIBLING_RULES:
        if crate != name:
            continue
        d = os.path.join(crate_dir, sub)
        inside = lambda p: os.path.dirname(p) == d and os.path.basename(p) not in allowed  # noqa: E731
        for f, outs in sorted(edges.items()):
            for t, via in sorted(outs.items()):
                if f != t and inside(f) and inside(t):
                    found = True
                    rel = os.path.relpath(f, workspace)
                    print(f"  {rel} imports sibling route {os.path.basename(t)} ({via})")
    return found


def report(workspace, root, comp, edges):
    rel = lambda p: os.path.relpath(p, workspace)  # noqa: E731
    print(f"  {rel(root)}: circle of {len(comp)} files")
    members = set(comp)
    for f in comp:
        print(f"    {rel(f)}")
        for t, via in sorted(edges.get(f, {}).items()):
            if t in members:
                print(f"      -> {rel(t)}  ({via})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("crates", nargs="*", help="crate directory names (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="also show two-file pairs")
    ap.add_argument(
        "--except",
        dest="excepted",
        default="",
        help="comma-separated crates not to check (known circles not broken yet)",
    )
    args = ap.parse_args()
    workspace = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    excepted = {c for c in args.excepted.split(",") if c}
    sys.exit(1 if check(workspace, args.crates, args.verbose, excepted) else 0)


if __name__ == "__main__":
    main()
