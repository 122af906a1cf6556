// Copyright 2026 The shoal Authors.
//
// --phases builds: shoal's build rate against each peer's, measured so that
// the machine's drift cannot decide it. One build of each takes seconds,
// and on a shared VM the same build moves by 20% from one minute to the
// next (docs/performance-history.md, "Cheaper prunes"), so a single pair of builds,
// as the compare phase times them, says little about a ratio near 1.5.
// Here each round builds shoal (BulkLoad into a fresh database) and the
// peer from scratch, one right after the other, the order swapped every
// round; the ratio is the median of the rounds' ratios.

#include <memory>
#include <string>
#include <vector>

#include "common/bench_util.h"
#include "common/json_writer.h"
#include "common/progress.h"
#include "comprehensive/phases.h"
#include "comprehensive/shoal_index.h"
#include "fmt/core.h"
#include "peers/peers.h"

namespace shoal_bench {
namespace {

// Builds `index` from scratch; its build seconds.
double TimeBuild(AnnIndex& index, const Dataset& data, uint32_t threads) {
  BuildFigures figures;
  CheckOk(index.Build(data, threads, &figures), index.Name() + " build");
  return figures.seconds;
}

}  // namespace

void BuildRoundsPhase(const Config& c, const Dataset& data, Report& report) {
  std::vector<std::string> notes;
  const std::vector<PeerFactory> peers = AvailablePeers(data.size(), c.metric, &notes);
  // The compare phase reports the peers left out; alone, this phase does.
  if (!c.compare) {
    for (const std::string& note : notes) StatusLine("[builds] " + note);
  }
  size_t wanted = 0;
  for (const PeerFactory& peer : peers) wanted += c.WantPeer(peer.name) ? 1 : 0;
  if (wanted == 0) StatusLine("[builds] no peer to build against (see --peers)");
  for (const PeerFactory& peer : peers) {
    if (!c.WantPeer(peer.name)) continue;
    BuildRounds rounds;
    rounds.peer = peer.name;
    rounds.vectors = data.size();
    for (uint32_t round = 0; round < c.build_rounds; ++round) {
      double shoal_s = 0, peer_s = 0;
      auto build_shoal = [&] {
        ShoalIndex shoal(ShoalIndex::Load::kBulkLoad, c.search_dir + "/build-rounds",
                         c.DbOptions(shoal::FsyncPolicy::kNever), c.search);
        shoal_s = TimeBuild(shoal, data, c.run.threads);
      };
      auto build_peer = [&] {
        std::unique_ptr<AnnIndex> index = peer.make();
        peer_s = TimeBuild(*index, data, c.run.threads);
      };
      if (round % 2 == 0) {
        build_shoal();
        build_peer();
      } else {
        build_peer();
        build_shoal();
      }
      rounds.shoal_seconds.push_back(shoal_s);
      rounds.peer_seconds.push_back(peer_s);
      rounds.ratios.push_back(peer_s / shoal_s);
      StatusLine(fmt::format("[builds] round {}/{}: shoal {:.3f} s, {} {:.3f} s, ratio {:.3f}",
                             round + 1, c.build_rounds, shoal_s, peer.name, peer_s,
                             rounds.ratios.back()));
    }
    report.build_rounds.push_back(std::move(rounds));
  }
}

void PrintBuildRounds(const Report& r) {
  for (const BuildRounds& b : r.build_rounds) {
    fmt::print("Builds in turns, shoal (BulkLoad) against {} ({} vectors, {} rounds, the "
               "order swapped every round): build rate ratio median {:.3f}, rounds",
               b.peer, b.vectors, b.ratios.size(), b.MedianRatio());
    for (double ratio : b.ratios) fmt::print(" {:.3f}", ratio);
    fmt::print("\n  shoal s:");
    for (double s : b.shoal_seconds) fmt::print(" {:.3f}", s);
    fmt::print("\n  {} s:", b.peer);
    for (double s : b.peer_seconds) fmt::print(" {:.3f}", s);
    fmt::print("\n\n");
  }
}

void BuildRoundsToJson(const Report& r, JsonWriter& w) {
  if (r.build_rounds.empty()) return;
  w.Key("build_rounds");
  w.BeginArray();
  for (const BuildRounds& b : r.build_rounds) {
    w.BeginObject();
    w.Field("peer", b.peer);
    w.Field("vectors", b.vectors);
    w.Field("median_ratio", b.MedianRatio());
    w.Field("ratios", b.ratios);
    w.Field("shoal_seconds", b.shoal_seconds);
    w.Field("peer_seconds", b.peer_seconds);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace shoal_bench
