// Copyright 2026 The shoal Authors.
//
// Shard reads: Get and Search over the active memtable and a snapshot of
// the other sources, newest version first.

#include "shard/shard.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "segment/record_regions.h"
#include "shard/filter_plan.h"
#include "util/bit_set.h"
#include "util/hash.h"
#include "util/status_macros.h"

namespace shoal {
namespace {

void AddSegmentStats(const SegmentSearchStats& from, SearchStats* to) {
  ++to->segments;
  to->hops += from.hops;
  to->distance_computations += from.distance_computations;
  to->reads += from.reads;
  to->cache_hits += from.cache_hits;
  to->io_wait_ns += from.io_wait_ns;
  to->compute_ns += from.compute_ns;
  to->filter_matches += from.filter_matches;
  to->filter_skipped += from.filter_skipped;
  to->filter_scanned += from.filter_scanned;
  to->filter_walked += from.filter_walked;
  to->filter_short_walks += from.filter_short_walks;
  to->filter_label_graph_walks += from.filter_label_graph_walks;
  to->filter_label_graph_pending += from.filter_label_graph_pending;
}

// A filtered search of one segment (issue 44; docs/architecture.md
// "Filtered search"). The planner selects the matching nodes from the
// posting lists and attribute columns (CompiledFilter::Select) and counts
// them: none, and the segment is skipped (a label nobody has costs a
// binary search); few (ScanPerListEntry, shard/filter_plan.h), and they
// are scanned (Segment::ScanNodes: ranked by their codes, the closest
// reranked by their vectors); many, and the graph is walked with the filter
// inside the walk (a mapped segment navigates among the matches; a
// disk-resident one walks every node with a list longer by the share that
// match). A walk that comes back with fewer than k answers is followed by
// the scan. So the segment offers k entries whenever k of its nodes are
// admitted, all of them when fewer are.
absl::Status SearchSegmentFiltered(const Segment& segment, uint32_t dim, const float* query,
                                   const SearchOptions& options,
                                   const filter::CompiledFilter& filter,
                                   segment::AnswerFilter admit, TopK* top,
                                   SegmentSearchStats* stats) {
  static const segment::RecordRegions kNoRecords;
  SegmentSearchStats unused;
  if (stats == nullptr) stats = &unused;
  const segment::RecordRegions* regions = segment.record_regions();
  if (regions == nullptr) regions = &kNoRecords;
  const uint64_t n = segment.vector_count();
  if (n == 0 || filter.MaxMatches(*regions, n) == 0) {
    ++stats->filter_skipped;
    return absl::OkStatus();
  }
  // One label alone: a common one's nodes are the segment's own bits of it
  // (no copy), a rarer one's its posting list (scanned as it is, or made
  // into bits if walked); both counted by the list's length. Any other
  // filter: Select.
  uint32_t label;
  const bool sole_label = filter.SoleLabel(&label);
  const BitSet* label_bits = sole_label ? regions->LabelBits(label) : nullptr;
  BitSet own;
  const BitSet* selected = &own;
  std::span<const uint32_t> postings;
  uint64_t count;
  if (label_bits != nullptr && label_bits->size() == n) {
    selected = label_bits;
    count = regions->postings(label).size();
  } else if (sole_label) {
    postings = regions->postings(label);
    count = postings.size();
    selected = nullptr;
  } else {
    filter.Select(*regions, static_cast<uint32_t>(n), &own);
    count = own.Count();
  }
  stats->filter_matches += count;
  if (count == 0) {
    ++stats->filter_skipped;
    return absl::OkStatus();
  }
  const uint64_t list = std::max(options.list_size, options.k);
  bool scan = count <= ScanPerListEntry(dim, sole_label && segment.HasLabelGraphs(count)) * list;
  if (selected == nullptr && !scan) {
    own.Reset(n);
    for (const uint32_t node : postings) own.Set(node);  // Load checked: node < n
    selected = &own;
  }
  // Without `selected` a sole label's posting list is scanned: every node
  // it lists matches, so only visibility is asked.
  admit.SetRecordFilter(selected == nullptr ? nullptr : &filter, regions, selected);
  if (sole_label && selected != nullptr) admit.SetSelectedLabel(label);
  TopK mine(options.k);
  if (!scan) {
    SearchOptions walk = options;
    if (!segment.walks_filtered()) {
      // About count / n of the nodes it meets match: a list that much
      // longer, and half again, holds k matches or more nearly always.
      walk.list_size = static_cast<uint32_t>(
          std::min<uint64_t>(n, (list * n * 3 / 2 + count - 1) / count));
    }
    SHOAL_RETURN_IF_ERROR(segment.Search(query, walk, admit, &mine, stats));
    ++stats->filter_walked;
    if (mine.size() < options.k) {  // short: scan instead
      ++stats->filter_short_walks;
      mine = TopK(options.k);
      scan = true;
    }
  }
  if (scan) {
    ++stats->filter_scanned;
    SHOAL_RETURN_IF_ERROR(
        selected == nullptr
            ? segment.ScanNodeList(query, options, postings, admit, &mine, stats)
            : segment.ScanNodes(query, options, *selected, admit, &mine, stats));
  }
  for (const Neighbor& nb : mine.Take()) top->Push(nb.id, nb.distance);
  return absl::OkStatus();
}

}  // namespace

absl::Status Shard::Search(const float* query, const SearchOptions& options, TopK* top) const {
  std::unique_ptr<const filter::CompiledFilter> compiled;
  if (options.filter != nullptr) {
    SHOAL_ASSIGN_OR_RETURN(compiled, filter::CompiledFilter::Compile(
                                         *options.filter, options_.collection.attributes));
  }
  return Search(TakeView(), query, options, top, /*skip_shared=*/false, compiled.get());
}

absl::Status Shard::Get(uint64_t id, std::vector<float>* out) const {
  SourceSnapshot older;
  {
    ReaderMutexLock lock(&mu_);
    const float* v = nullptr;
    switch (active_->Get(id, &v)) {
      case MemTable::Lookup::kFound:
        out->assign(v, v + dim());
        return absl::OkStatus();
      case MemTable::Lookup::kDeleted:
        return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
      case MemTable::Lookup::kAbsent:
        break;
    }
    older = sources_.Snapshot();
  }
  SHOAL_ASSIGN_OR_RETURN(SourceSnapshot::Lookup found, older.Find(id, out));
  if (found != SourceSnapshot::Lookup::kLive) {
    return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
  }
  return absl::OkStatus();
}

absl::Status Shard::GetRecord(uint64_t id, uint32_t parts, RecordData* out) const {
  std::optional<RecordData> found;
  SHOAL_RETURN_IF_ERROR(GetRecords({&id, 1}, parts, &found));
  if (!found.has_value()) return absl::NotFoundError(absl::StrCat("id ", id, " not found"));
  *out = std::move(*found);
  return absl::OkStatus();
}

absl::Status Shard::GetRecords(std::span<const uint64_t> ids, uint32_t parts,
                               std::optional<RecordData>* out) const {
  const bool want_vector = (parts & kVectorPart) != 0;
  const bool want_extras = (parts & (kLabelsPart | kAttributesPart | kPayloadPart)) != 0;
  // Fills out[i] from a record's vector and encoded parts.
  auto fill = [&](size_t i, const float* vector, std::string_view bytes,
                  const std::string& where) -> absl::Status {
    record::ExtrasView extras;
    size_t consumed = 0;
    absl::Status s = record::Parse(bytes, &extras, &consumed);
    if (s.ok() && consumed != bytes.size()) {
      s = absl::InvalidArgumentError(absl::StrCat(bytes.size() - consumed,
                                                  " bytes follow the record's extras"));
    }
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
    RecordData& r = out[i].emplace();
    r.id = ids[i];
    if (want_vector && vector != nullptr) r.vector.assign(vector, vector + dim());
    extras.CopyTo(parts, &r);
    return absl::OkStatus();
  };
  // The active memtable first, under the lock, for all of them; the older
  // sources then, from one snapshot, for those it does not decide.
  std::vector<size_t> older_ones;
  SourceSnapshot older;
  {
    ReaderMutexLock lock(&mu_);
    for (size_t i = 0; i < ids.size(); ++i) {
      out[i].reset();
      const float* v = nullptr;
      std::string_view bytes;
      switch (active_->Get(ids[i], &v, &bytes)) {
        case MemTable::Lookup::kFound: {
          absl::Status s = fill(i, v, bytes, absl::StrCat("id ", ids[i], " in the memtable"));
          if (!s.ok()) return absl::InternalError(s.message());
          break;
        }
        case MemTable::Lookup::kDeleted:
          break;
        case MemTable::Lookup::kAbsent:
          older_ones.push_back(i);
          break;
      }
    }
    if (older_ones.empty()) return absl::OkStatus();
    older = sources_.Snapshot();
  }
  std::vector<float> vector;
  std::string bytes;  // reused: one allocation for all of them
  for (size_t i : older_ones) {
    const Segment* segment = nullptr;
    SHOAL_ASSIGN_OR_RETURN(
        SourceSnapshot::Lookup found,
        older.FindRecord(ids[i], want_vector ? &vector : nullptr, want_extras ? &bytes : nullptr,
                         parts, &segment));
    if (found != SourceSnapshot::Lookup::kLive) continue;
    absl::Status s =
        fill(i, want_vector ? vector.data() : nullptr, want_extras ? bytes : std::string_view(),
             segment != nullptr
                 ? absl::StrCat("segment ", segment->path(), ": the record of id ", ids[i])
                 : absl::StrCat("id ", ids[i], " in a frozen memtable"));
    if (!s.ok()) {
      if (segment != nullptr) return absl::DataLossError(s.message());
      return absl::InternalError(s.message());
    }
  }
  return absl::OkStatus();
}

Shard::View Shard::TakeView() const {
  ReaderMutexLock lock(&mu_);
  return View{active_, sources_.Snapshot()};
}

std::vector<Shard::ExportView> Shard::TakeExportViews(std::span<const Shard* const> shards) {
  std::vector<ExportView> views(shards.size());
  // Every lock at once, so that the views are of one moment; writers wait
  // while the active memtables' rows are noted (no vector is copied).
  for (const Shard* s : shards) s->mu_.ReaderLock();
  absl::Cleanup unlock = [&] {
    for (const Shard* s : shards) s->mu_.ReaderUnlock();
  };
  for (size_t j = 0; j < shards.size(); ++j) {
    const Shard& shard = *shards[j];
    ExportView& v = views[j];
    v.active = shard.active_;
    v.rows.reserve(shard.active_->live_count());
    v.tombstones.reserve(shard.active_->tombstone_count());
    shard.active_->ForEachRecord(
        [&](uint64_t id, const float* row, std::string_view extras) {
          v.rows.push_back({id, row, extras});
        },
        [&](uint64_t id) { v.tombstones.push_back(id); });
    v.older = shard.sources_.Snapshot();
  }
  return views;
}

bool Shard::VisibleAt(const View& view, uint64_t id, size_t i, absl::Status* status,
                      bool check_active) const {
  // An id offered by older source i is hidden when the active memtable or a
  // source newer than i holds it (as a vector or a tombstone). A lookup that
  // fails (a damaged segment) hides the id and fails the search.
  if (check_active) {
    const float* v;
    ReaderMutexLock lock(&mu_);  // the active memtable takes writes
    if (view.active->Get(id, &v) != MemTable::Lookup::kAbsent) return false;
  }
  absl::StatusOr<SourceSnapshot::Lookup> held = view.older.Find(id, i, nullptr);
  if (!held.ok() && status->ok()) *status = held.status();
  return held.ok() && *held == SourceSnapshot::Lookup::kAbsent;
}

absl::Status Shard::Search(const View& view, const float* query, const SearchOptions& options,
                           TopK* top, bool skip_shared,
                           const filter::CompiledFilter* filter) const {
  timing::Scope timing("search",
                       "collection,shard,k,list_size,sources(kind:us:hops:distances:sectors)");
  std::string sources;  // with timing: "kind:us:hops:distances:sectors;..."
  // Whether the active memtable held nothing when searched: then the older
  // sources' offers need not take the lock to look there (VisibleAt), as
  // after a bulk load or a flush with no writes since.
  bool active_empty;
  {
    ReaderMutexLock lock(&mu_);
    active_empty = view.active->empty();
    // The active memtable is the newest source: nothing hides its vectors.
    if (filter == nullptr) {
      view.active->Search(metric(), query, top);
    } else {
      view.active->SearchFiltered(metric(), query, *filter, top);
    }
  }
  if (timing::kEnabled) {
    absl::StrAppend(&sources, "memtable:", timing.Lap(), ":0:", view.active->live_count(),
                    ":0");
  }
  const SourceSnapshot& older = view.older;
  absl::Status lookup_status;
  auto visible = [&](uint64_t id, size_t i) {
    return VisibleAt(view, id, i, &lookup_status, /*check_active=*/!active_empty);
  };
  // Several segments share the work of one list: each is searched with a
  // list in proportion to its size against the largest (at least k, or L
  // when L is below k: the smaller segments are not searched harder). The
  // largest finds most of the answer; a segment a tenth its size holds about
  // a tenth of the true neighbours, which a list a tenth as long finds.
  uint64_t largest = 0;
  for (const SourceSnapshot::Source& source : older.sources()) {
    if (source.segment != nullptr) largest = std::max(largest, source.segment->vector_count());
  }
  for (size_t i = 0; i < older.sources().size(); ++i) {
    const SourceSnapshot::Source& source = older.sources()[i];
    if (source.mem != nullptr) {
      const std::function<bool(uint64_t)> hidden_not = [&](uint64_t id) {
        return visible(id, i);
      };
      if (filter == nullptr) {
        source.mem->Search(metric(), query, top, &hidden_not);
      } else {
        source.mem->SearchFiltered(metric(), query, *filter, top, &hidden_not);
      }
      if (timing::kEnabled) {
        absl::StrAppend(&sources, ";frozen:", timing.Lap(), ":0:", source.mem->live_count(),
                        ":0");
      }
    } else if (!(skip_shared && source.shared)) {
      SegmentSearchStats stats;
      SearchOptions share = options;
      if (largest > 0) {
        const double fraction = static_cast<double>(source.segment->vector_count()) /
                                static_cast<double>(largest);
        share.list_size = std::max<uint32_t>(
            std::min(options.k, options.list_size),
            static_cast<uint32_t>(std::ceil(options.list_size * fraction)));
      }
      // A shared segment searched from one shard offers that shard's
      // entries only.
      const uint32_t shard_count = options_.collection.shard_count;
      const segment::AnswerFilter admit = [&](uint64_t id, uint64_t) {
        return (!source.shared || ShardOf(id, shard_count) == options_.index) && visible(id, i);
      };
      SegmentSearchStats* want = timing::kEnabled || options.stats != nullptr ? &stats : nullptr;
      const absl::Status searched =
          filter == nullptr
              ? source.segment->Search(query, share, admit, top, want)
              : SearchSegmentFiltered(*source.segment, dim(), query, share, *filter, admit, top, want);
      if (options.stats != nullptr) AddSegmentStats(stats, options.stats);
      SHOAL_RETURN_IF_ERROR(searched);
      if (timing::kEnabled) {
        absl::StrAppend(&sources, ";segment:", timing.Lap(), ":", stats.hops, ":",
                        stats.distance_computations, ":", stats.sectors_touched);
      }
    }
    SHOAL_RETURN_IF_ERROR(lookup_status);
  }
  timing.Line(options_.collection_name, options_.index, options.k, options.list_size, sources);
  return absl::OkStatus();
}

absl::Status Shard::SearchShared(std::span<const Shard* const> shards,
                                 std::span<const View> views, const Segment* segment,
                                 const float* query, const SearchOptions& options, TopK* top,
                                 const filter::CompiledFilter* filter) {
  // Where each shard's view holds the segment (a shard whose merges took
  // its entries out of it no longer names it: they are elsewhere now).
  constexpr size_t kNone = ~size_t{0};
  std::vector<size_t> at(shards.size(), kNone);
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::vector<SourceSnapshot::Source>& sources = views[s].older.sources();
    for (size_t i = 0; i < sources.size(); ++i) {
      if (sources[i].segment.get() == segment) at[s] = i;
    }
  }
  absl::Status lookup_status;
  const uint32_t shard_count = static_cast<uint32_t>(shards.size());
  if (filter != nullptr) {
    // Short walks fall back to a scan there rather than to longer lists.
    SegmentSearchStats stats;
    const absl::Status searched = SearchSegmentFiltered(
        *segment, shards[0]->dim(), query, options, *filter,
        [&](uint64_t id, uint64_t) {
          const uint32_t s = ShardOf(id, shard_count);
          return at[s] != kNone && shards[s]->VisibleAt(views[s], id, at[s], &lookup_status);
        },
        top, options.stats != nullptr ? &stats : nullptr);
    if (options.stats != nullptr) AddSegmentStats(stats, options.stats);
    SHOAL_RETURN_IF_ERROR(searched);
    return lookup_status;
  }
  // The walk's list holds max(L, k) nodes (on codes a few more): where
  // newer versions or deletes hide some of them, it offers fewer than k.
  // One graph for several shards is all there is of their older data, so
  // the walk then goes again with a list twice as long (into a fresh top-k)
  // until k are visible or the list holds the whole segment.
  SearchOptions walk = options;
  TopK mine(options.k);
  while (true) {
    size_t offered = 0;
    SegmentSearchStats stats;
    const absl::Status searched = segment->Search(
        query, walk,
        [&](uint64_t id, uint64_t) {
          const uint32_t s = ShardOf(id, shard_count);
          const bool visible =
              at[s] != kNone && shards[s]->VisibleAt(views[s], id, at[s], &lookup_status);
          offered += visible;
          return visible;
        },
        &mine, options.stats != nullptr ? &stats : nullptr);
    if (options.stats != nullptr) AddSegmentStats(stats, options.stats);
    SHOAL_RETURN_IF_ERROR(searched);
    SHOAL_RETURN_IF_ERROR(lookup_status);
    const uint64_t list = std::max(walk.list_size, walk.k);
    if (offered >= options.k || list >= segment->vector_count()) break;
    walk.list_size = static_cast<uint32_t>(std::min<uint64_t>(2 * list, segment->vector_count()));
    mine = TopK(options.k);
  }
  for (const Neighbor& n : mine.Take()) top->Push(n.id, n.distance);
  return absl::OkStatus();
}

}  // namespace shoal
