// Copyright 2026 The shoal Authors.

#include "peers/peers.h"

#include <cmath>

#include "fmt/core.h"

namespace shoal_bench {

std::vector<PeerFactory> AvailablePeers(size_t num_vectors, shoal::Metric metric,
                                        std::vector<std::string>* notes) {
  std::vector<PeerFactory> peers;
#ifdef SHOAL_BENCH_HAVE_HNSWLIB
  for (const uint32_t m : {16u, 32u}) {
    peers.push_back({fmt::format("hnswlib M={}", m),
                     [=] { return NewHnswlibIndex(m, 200, metric); }});
  }
#else
  notes->push_back("hnswlib: skipped, hnswlib/hnswlib.h not found at build time "
                   "(apt-get install libhnswlib-dev, then re-run cmake)");
#endif
#ifdef SHOAL_BENCH_HAVE_FAISS
  const uint32_t nlist =
      std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(4 * std::sqrt(num_vectors))));
  peers.push_back({"faiss HNSWFlat M=32", [=] { return NewFaissHnswIndex(32, 0, metric); }});
  peers.push_back({fmt::format("faiss IVFFlat nlist={}", nlist),
                   [=] { return NewFaissIvfFlatIndex(nlist, metric); }});
#else
  notes->push_back("faiss: skipped, not found at build time "
                   "(apt-get install libfaiss-dev, then re-run cmake)");
#endif
  (void)num_vectors;
  (void)metric;
  return peers;
}

std::vector<PeerFactory> FilterOnlyPeers(shoal::Metric metric) {
  std::vector<PeerFactory> peers;
#ifdef SHOAL_BENCH_HAVE_FAISS
  peers.push_back({"faiss Flat", [=] { return NewFaissFlatIndex(metric); }});
#endif
  peers.push_back({"exact scan (matching ids known)", [=] { return NewExactScanIndex(metric); }});
  return peers;
}

std::vector<float> PeerVectors(std::span<const float> rows, uint32_t dim,
                               shoal::Metric metric) {
  std::vector<float> out(rows.begin(), rows.end());
  if (metric != shoal::Metric::kCosine) return out;
  for (size_t off = 0; off < out.size(); off += dim) {
    double norm = 0;
    for (uint32_t d = 0; d < dim; ++d) norm += double{out[off + d]} * out[off + d];
    const float inv = norm > 0 ? static_cast<float>(1 / std::sqrt(norm)) : 0.f;
    for (uint32_t d = 0; d < dim; ++d) out[off + d] *= inv;
  }
  return out;
}

}  // namespace shoal_bench
