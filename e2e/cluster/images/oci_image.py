#!/usr/bin/env python3
"""Writes a one-layer OCI image archive (an OCI image layout in a tar) from a root directory.

The local real nodes (e2e/cluster/node-up.sh) import these archives into containerd with
`ctr images import`; nothing comes from an image registry. The layer is reproducible: entries are
sorted, owned by root and dated at the epoch, so the same root gives the same digest.

Usage: oci_image.py --root DIR --name REF --out FILE [--entrypoint JSON] [--cmd JSON]
                    [--env K=V ...] [--user UID] [--workdir DIR]
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def _layer(root):
    """Returns the gzip-compressed tar of ROOT and the digest of its uncompressed form."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        paths = []
        for top, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(dirs + files):
                paths.append(os.path.join(top, name))
        for path in sorted(paths):
            info = tar.gettarinfo(path, arcname=os.path.relpath(path, root))
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 0
            if info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    data = raw.getvalue()
    compressed = gzip.compress(data, compresslevel=6, mtime=0)
    return compressed, "sha256:" + hashlib.sha256(data).hexdigest()


def _blob(tar, data):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"digest": "sha256:" + digest, "size": len(data)}


def build(args):
    if not os.path.isdir(args.root):
        sys.exit(f"oci_image.py: no directory {args.root}")
    layer, diff_id = _layer(args.root)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": args.env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "e2e/cluster/images/oci_image.py"}],
    }
    for key, value in (("Entrypoint", args.entrypoint), ("Cmd", args.cmd)):
        if value:
            config["config"][key] = json.loads(value)
    if args.user:
        config["config"]["User"] = args.user
    if args.workdir:
        config["config"]["WorkingDir"] = args.workdir
    with tarfile.open(args.out, mode="w") as tar:
        layer_desc = _blob(tar, layer)
        config_desc = _blob(tar, json.dumps(config, sort_keys=True).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": dict(config_desc, mediaType="application/vnd.oci.image.config.v1+json"),
            "layers": [dict(layer_desc, mediaType="application/vnd.oci.image.layer.v1.tar+gzip")],
        }
        manifest_desc = _blob(tar, json.dumps(manifest, sort_keys=True).encode())
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [dict(manifest_desc,
                               mediaType="application/vnd.oci.image.manifest.v1+json",
                               annotations={"org.opencontainers.image.ref.name": args.name,
                                            "io.containerd.image.name": args.name})],
        }
        for name, doc in (("oci-layout", {"imageLayoutVersion": "1.0.0"}), ("index.json", index)):
            data = json.dumps(doc, sort_keys=True).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    print(manifest_desc["digest"])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True)
    p.add_argument("--name", required=True, help="image reference, e.g. draco.local/pause:1")
    p.add_argument("--out", required=True)
    p.add_argument("--entrypoint", help='JSON list, e.g. ["/pause"]')
    p.add_argument("--cmd", help="JSON list")
    p.add_argument("--env", action="append", help="K=V (repeatable; replaces the default PATH)")
    p.add_argument("--user")
    p.add_argument("--workdir")
    build(p.parse_args())


if __name__ == "__main__":
    main()
