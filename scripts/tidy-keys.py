#!/usr/bin/env python3
"""Prints one line "KEY FILE" per source for scripts/check-tidy.sh's result cache.

KEY is a SHA-256 over everything a clang-tidy result depends on: the clang-tidy version, the
repository's .clang-tidy, the extra arguments, the source's compile command (with the checkout's
absolute path taken out, so another clone of the same tree gets the same key), and the content of
the source and of every file it includes, the system headers too, as the build's dependency
record lists them (`ninja -t deps`), or, for a source not built yet (scripts/test.sh starts
clang-tidy before the build), as the compiler lists them (`-M`). The list is sorted, so both give
the same key. A change anywhere in what the compiler reads, comments and NOLINT markers included,
gives a new key.
Usage: scripts/tidy-keys.py BUILD_DIR EXTRA_ARGS FILE...
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys


def ninja_deps(build, obj):
    """The inputs of OBJ as the build's dependency record lists them; [] when it has none."""
    deps = subprocess.run(["ninja", "-C", build, "-t", "deps", obj], capture_output=True,
                          text=True).stdout.splitlines()
    if not deps or "(VALID)" not in deps[0]:
        return []  # not built, or stale
    return [d.strip() for d in deps[1:] if d.startswith("    ")]


def compiler_deps(entry, args):
    """The inputs of ENTRY's compile as the compiler lists them (-M); [] if it fails."""
    cmd, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            cmd.append(a)
    out = subprocess.run(cmd + ["-M"], cwd=entry["directory"], capture_output=True, text=True)
    if out.returncode != 0:
        return []
    rule = out.stdout.replace("\\\n", " ")
    return [os.path.join(entry["directory"], p) for p in rule.split(":", 1)[-1].split()]


def main():
    build, extra, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.getcwd()
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = {os.path.relpath(e["file"], root): e for e in json.load(f)}
    version = subprocess.run(["clang-tidy", "--version"], capture_output=True, text=True).stdout
    with open(".clang-tidy", "rb") as f:
        config = f.read()
    base = hashlib.sha256(version.encode() + b"\0" + config + b"\0" + extra.encode())
    contents = {}  # path -> digest, shared by the sources that include it

    def digest(path):
        if path not in contents:
            try:
                with open(path, "rb") as f:
                    contents[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                contents[path] = "missing"
        return contents[path]

    for src in files:
        e = entries.get(src)
        if e is None:
            print(f"none {src}")  # not compiled: never cached
            continue
        args = shlex.split(e["command"])
        obj = args[args.index("-o") + 1] if "-o" in args else ""
        paths = ninja_deps(build, obj) or compiler_deps(e, args)
        if not paths:
            print(f"none {src}")  # neither record nor compiler could list its inputs
            continue
        h = base.copy()
        h.update(src.encode() + b"\0" + e["command"].replace(root, "").encode() + b"\0")
        for full in sorted(set(os.path.normpath(os.path.join(build, p)) for p in paths)):
            name = os.path.relpath(full, root) if full.startswith(root + "/") else full
            h.update(name.encode() + b"\0" + digest(full).encode())
        print(f"{h.hexdigest()} {src}")


if __name__ == "__main__":
    main()
