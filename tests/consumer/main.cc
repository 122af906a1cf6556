// Opens a DB at argv[1], writes, searches, reopens: proof that an installed
// shoal links and works. Exits non-zero on any failure.
#include <cstdio>
#include <vector>

#include "shoal/shoal.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  shoal::Options options;
  options.default_collection.dim = 3;
  for (int round = 0; round < 2; ++round) {
    auto db = shoal::DB::Open(options, argv[1]);
    if (!db.ok()) {
      std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
      return 1;
    }
    if (round == 0) {
      std::vector<float> v = {1, 2, 3};
      if (!(*db)->Put(42, v).ok()) return 1;
    }
    std::vector<float> q = {1, 2, 3};
    auto hits = (*db)->Search(q);
    if (!hits.ok() || hits->empty() || (*hits)[0].id != 42) {
      std::fprintf(stderr, "search failed in round %d\n", round);
      return 1;
    }
    if (!(*db)->Close().ok()) return 1;
  }
  std::puts("consumer OK");
  return 0;
}
