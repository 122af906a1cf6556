# Copyright 2026 The shoal Authors.
"""The peers of the head-to-head, by name (module, class), in table order.

Importing this package imports no library: each adapter imports its own in
load(), inside the child process that runs it."""

import importlib

# name -> (module, class). shoal first: the ratios are against it.
PEERS = {
    "shoal": ("peers.shoal_peer", "ShoalPeer"),
    "hnswlib": ("peers.hnswlib_peer", "HnswlibPeer"),
    "usearch": ("peers.usearch_peer", "UsearchPeer"),
    "faiss-HNSW32": ("peers.faiss_peer", "FaissHnswPeer"),
    "faiss-IVF": ("peers.faiss_peer", "FaissIvfPeer"),
    "scann": ("peers.scann_peer", "ScannPeer"),
    "svs-LVQ4x8": ("peers.svs_peer", "SvsPeer"),
    "ngt-ANNG": ("peers.ngt_peer", "NgtPeer"),
    "vsag-HGraph": ("peers.vsag_peer", "VsagPeer"),
    "voyager": ("peers.voyager_peer", "VoyagerPeer"),
    "diskann-mem": ("peers.diskann_peer", "DiskannPeer"),
}
OPTIONAL = {"voyager", "diskann-mem"}   # not named by issue 45; run unless --peers excludes them


def peer_class(name):
    module, cls = PEERS[name]
    return getattr(importlib.import_module(module), cls)
