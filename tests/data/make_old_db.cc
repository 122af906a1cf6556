// Writes a database with shoal as it was before issue 43 (b8ea50b): a bulk
// loaded segment, a flushed segment with a tombstone, and writes only in
// the logs. Vector of id i: {i, i + 0.5, -i, 1}.
#include <cstdio>
#include <vector>
#include "shoal/db.h"
std::vector<float> V(uint64_t i) { float f = static_cast<float>(i); return {f, f + 0.5f, -f, 1.0f}; }
int main(int argc, char** argv) {
  shoal::Options o;
  o.default_collection.dim = 4;
  o.default_collection.shard_count = 2;
  o.compaction.automatic = false;
  auto db = shoal::DB::Open(o, argv[1]);
  if (!db.ok()) return 1;
  std::vector<uint64_t> ids; std::vector<float> rows;
  for (uint64_t i = 0; i < 40; ++i) { ids.push_back(i); auto v = V(i); rows.insert(rows.end(), v.begin(), v.end()); }
  if (!(*db)->BulkLoad(ids, rows).ok()) return 2;
  for (uint64_t i = 40; i < 70; ++i) if (!(*db)->Put(i, V(i)).ok()) return 3;
  if (!(*db)->Delete(5).ok()) return 4;
  if (!(*db)->Flush().ok()) return 5;
  for (uint64_t i = 70; i < 90; ++i) if (!(*db)->Put(i, V(i)).ok()) return 6;
  if (!(*db)->Delete(41).ok()) return 7;
  // Closed with the last writes in the logs only.
  if (!(*db)->Close().ok()) return 8;
  std::puts("ok");
  return 0;
}
