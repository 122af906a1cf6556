// Copyright 2026 The shoal Authors.
//
// The libraries shoal is compared with (--compare), each as an AnnIndex:
//   hnswlib (header-only, Debian libhnswlib-dev): HNSW with M = 16 and 32,
//     efConstruction 200, built by addPoint from `threads` threads; knob ef.
//   faiss (Debian libfaiss-dev): IndexHNSWFlat M = 32, efConstruction 40
//     (faiss's default), knob efSearch; IndexIVFFlat with nlist = 4 sqrt(n),
//     k-means shortened (peer_faiss.cc), knob nprobe. Both
//     run on OpenMP with omp_set_num_threads(threads) (1 for single-thread
//     searches).
// --phases filter adds two exact filtered searches, no knob
// (FilterOnlyPeers): faiss IndexFlat with an IDSelectorBitmap, and the exact
// scan of the matching rows (an oracle handed the list of them).
// A peer whose library CMake did not find is left out, with a note saying so.
// For kCosine the peers get normalized vectors and inner product.

#ifndef SHOAL_BENCH_PEERS_PEERS_H_
#define SHOAL_BENCH_PEERS_PEERS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peers/ann_index.h"
#include "shoal/options.h"

namespace shoal_bench {

struct PeerFactory {
  std::string name;
  std::function<std::unique_ptr<AnnIndex>()> make;
};

// The peers compiled in, in the order they run, for a base set of
// `num_vectors` rows; `notes` gets one line per peer left out, and why.
std::vector<PeerFactory> AvailablePeers(size_t num_vectors, shoal::Metric metric,
                                        std::vector<std::string>* notes);

// The exact filtered searches --phases filter runs after AvailablePeers':
// "faiss Flat" when faiss was found (AvailablePeers notes it when not), then
// "exact scan (matching ids known)".
std::vector<PeerFactory> FilterOnlyPeers(shoal::Metric metric);

// In peer_hnswlib.cc / peer_faiss.cc, built only when the library was found.
std::unique_ptr<AnnIndex> NewHnswlibIndex(uint32_t m, uint32_t ef_construction,
                                          shoal::Metric metric);
// ef_construction 0: faiss's default (40).
std::unique_ptr<AnnIndex> NewFaissHnswIndex(uint32_t m, uint32_t ef_construction,
                                            shoal::Metric metric);
std::unique_ptr<AnnIndex> NewFaissIvfFlatIndex(uint32_t nlist, shoal::Metric metric);
// IndexFlat: exhaustive; a filtered search checks the selector on all rows.
std::unique_ptr<AnnIndex> NewFaissFlatIndex(shoal::Metric metric);
// Brute force over the base rows (exact_scan_index.cc): a filtered search
// scans the matching rows only (RowFilter::rows), with the bench's kernels
// (brute_force.h, ExactScan). No knob; always compiled in.
std::unique_ptr<AnnIndex> NewExactScanIndex(shoal::Metric metric);

// Copies `rows` (n x dim) and, for kCosine, normalizes every row: what a
// peer that only knows L2 and inner product is given.
std::vector<float> PeerVectors(std::span<const float> rows, uint32_t dim, shoal::Metric metric);

}  // namespace shoal_bench

#endif  // SHOAL_BENCH_PEERS_PEERS_H_
