// Copyright 2026 The shoal Authors.

#include "testutil/fault_injection_fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace shoal::test {
namespace {

constexpr size_t kNoTear = static_cast<size_t>(-1);

// "/a/b/../c/" -> "/a/c": one spelling per path, so that logs and nodes match.
std::string Norm(const std::string& path) {
  std::string p = std::filesystem::path(path).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p.empty() ? "." : p;
}

std::string Parent(const std::string& normalized) {
  std::string parent = std::filesystem::path(normalized).parent_path().string();
  return parent.empty() ? "." : parent;
}

// True when `path` is `dir` or below it.
bool IsUnder(const std::string& path, const std::string& dir) {
  return path == dir ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          (dir == "/" || path[dir.size()] == '/'));
}

}  // namespace

const char* FsOpName(FsOp op) {
  switch (op) {
    case FsOp::kOpen: return "open";
    case FsOp::kWrite: return "write";
    case FsOp::kClose: return "close";
    case FsOp::kSync: return "sync";
    case FsOp::kRename: return "rename";
    case FsOp::kRead: return "read";
    case FsOp::kMmap: return "mmap";
    case FsOp::kRemove: return "remove";
    case FsOp::kTruncate: return "truncate";
    case FsOp::kLock: return "lock";
    case FsOp::kMkdir: return "mkdir";
    case FsOp::kReserve: return "reserve";
    case FsOp::kPread: return "pread";
    case FsOp::kAny: return "any";
  }
  return "?";
}

// ---- Handles ----

class FaultInjectionFileSystem::FaultMappedFile final : public MappedFile {
 public:
  // `direct`: `base` is from OpenDirect, whose bytes reach the file only
  // when synced.
  FaultMappedFile(FaultInjectionFileSystem* fs, std::shared_ptr<Node> node,
                  std::string path, std::unique_ptr<MappedFile> base, bool direct)
      : fs_(fs), node_(std::move(node)), path_(std::move(path)), base_(std::move(base)),
        direct_(direct) {
    fs_->open_handles_.fetch_add(1);
  }
  ~FaultMappedFile() override {
    base_.reset();
    fs_->open_handles_.fetch_sub(1);
  }
  char* data() override { return base_->data(); }
  size_t capacity() const override { return base_->capacity(); }
  absl::Status Sync() override {
    if (closed_) return ClosedFileError(path_);
    absl::Status s = fs_->Check(FsOp::kSync, path_);
    if (!s.ok()) return s;
    return fs_->SyncNode(node_);
  }
  absl::Status SyncPrefix(size_t end) override {
    if (closed_) return ClosedFileError(path_);
    absl::Status s = fs_->Check(FsOp::kSync, path_);
    if (!s.ok()) return s;
    // A mapped file's stores are in the real file already; SyncNode reads
    // them back. A direct one's get there now.
    if (direct_) {
      s = base_->SyncPrefix(end);
      if (!s.ok()) return s;
    }
    return fs_->SyncNode(node_);
  }
  absl::Status Reserve(size_t end) override {
    absl::Status s = fs_->Check(FsOp::kReserve, path_);
    if (!s.ok()) return s;
    return base_->Reserve(end);
  }
  void Populate(size_t offset, size_t length) override { base_->Populate(offset, length); }
  void PopulateDirty(size_t offset, size_t length) override {
    base_->PopulateDirty(offset, length);
  }
  // A kWrite: fails, or (TearNthWrite) stores a prefix of the pieces and
  // fails.
  absl::Status Write(size_t offset, std::span<const std::string_view> pieces) override {
    if (closed_) return ClosedFileError(path_);
    size_t keep = kNoTear;
    absl::Status s = fs_->Check(FsOp::kWrite, path_, &keep);
    if (keep != kNoTear) {
      std::vector<std::string_view> prefix;
      for (std::string_view piece : pieces) {
        if (keep == 0) break;
        prefix.push_back(piece.substr(0, std::min(keep, piece.size())));
        keep -= prefix.back().size();
      }
      (void)base_->Write(offset, prefix);
      return s;
    }
    if (!s.ok()) return s;
    return base_->Write(offset, pieces);
  }
  // The base file's view, or where it keeps none (a file on a disk), a
  // read-only mapping of the real file all the same: the tests then cover
  // the callers' use of views on any file system.
  std::shared_ptr<const char> KeepReadable() override {
    if (closed_ || direct_) return nullptr;
    if (std::shared_ptr<const char> view = base_->KeepReadable()) return view;
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    std::shared_ptr<const char> view = MapReadOnlyShared(fd, base_->capacity());
    close(fd);  // the mapping keeps the file
    return view;
  }
  absl::Status CloseAndTruncate(size_t length) override {
    if (closed_) return ClosedFileError(path_);
    closed_ = true;  // also when it fails (the MappedFile contract)
    absl::Status s = fs_->Check(FsOp::kTruncate, path_);
    if (!s.ok()) {
      // Unmap and close, but leave the length as it is: the call failed.
      absl::StatusOr<uint64_t> size = fs_->base_->FileSize(path_);
      (void)base_->CloseAndTruncate(size.ok() ? *size : base_->capacity());
      return s;
    }
    return base_->CloseAndTruncate(length);
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::shared_ptr<Node> node_;
  const std::string path_;
  std::unique_ptr<MappedFile> base_;
  const bool direct_;
  bool closed_ = false;  // CloseAndTruncate was called (callers serialize it with syncs)
};

class FaultInjectionFileSystem::FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionFileSystem* fs, std::shared_ptr<Node> node,
                    std::string path, std::unique_ptr<WritableFile> base)
      : fs_(fs), node_(std::move(node)), path_(std::move(path)), base_(std::move(base)) {
    fs_->open_handles_.fetch_add(1);
  }
  ~FaultWritableFile() override {
    base_.reset();
    fs_->open_handles_.fetch_sub(1);
  }
  absl::Status Append(std::string_view data) override {
    size_t keep = kNoTear;
    absl::Status s = fs_->Check(FsOp::kWrite, path_, &keep);
    if (keep != kNoTear) {
      (void)base_->Append(data.substr(0, std::min(keep, data.size())));
      return s;
    }
    if (!s.ok()) return s;
    return base_->Append(data);
  }
  absl::Status Sync() override {
    absl::Status s = fs_->Check(FsOp::kSync, path_);
    if (!s.ok()) return s;
    return fs_->SyncNode(node_);
  }
  absl::Status Close() override {
    absl::Status s = fs_->Check(FsOp::kClose, path_);
    absl::Status c = base_->Close();  // the descriptor is released either way
    return s.ok() ? c : s;
  }

 private:
  FaultInjectionFileSystem* const fs_;
  const std::shared_ptr<Node> node_;
  const std::string path_;
  std::unique_ptr<WritableFile> base_;
};

// Reads only; nothing to track for durability.
class FaultInjectionFileSystem::FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionFileSystem* fs, std::string path,
                        std::unique_ptr<RandomAccessFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}
  absl::Status Read(uint64_t offset, size_t n, char* scratch) const override {
    if (absl::Status s = fs_->CheckRead(path_, offset, n); !s.ok()) return s;
    return base_->Read(offset, n, scratch);
  }
  uint64_t size() const override { return base_->size(); }
  bool direct() const override { return base_->direct(); }
  // The base file's queue (io_uring on POSIX), each Submit counted as a
  // kPread: a failed one is not submitted, and completes with its error.
  std::unique_ptr<ReadQueue> NewReadQueue(size_t depth) const override {
    return std::make_unique<FaultReadQueue>(fs_, path_, base_->NewReadQueue(depth));
  }

 private:
  class FaultReadQueue final : public ReadQueue {
   public:
    FaultReadQueue(FaultInjectionFileSystem* fs, const std::string& path,
                   std::unique_ptr<ReadQueue> base)
        : fs_(fs), path_(path), base_(std::move(base)) {}
    size_t depth() const override { return base_->depth(); }
    size_t in_flight() const override { return failed_.size() + base_->in_flight(); }
    void Submit(uint64_t offset, size_t n, char* scratch, uint64_t tag) override {
      if (absl::Status s = fs_->CheckRead(path_, offset, n); !s.ok()) {
        failed_.push_back({tag, std::move(s)});
        return;
      }
      base_->Submit(offset, n, scratch, tag);
    }
    void Wait(std::vector<Completion>* out) override {
      if (failed_.empty()) return base_->Wait(out);
      for (Completion& c : failed_) out->push_back(std::move(c));
      failed_.clear();
    }

   private:
    FaultInjectionFileSystem* const fs_;
    const std::string& path_;
    const std::unique_ptr<ReadQueue> base_;
    std::vector<Completion> failed_;
  };

  FaultInjectionFileSystem* const fs_;
  const std::string path_;
  const std::unique_ptr<RandomAccessFile> base_;
};

class FaultInjectionFileSystem::FaultFileLock final : public FileLock {
 public:
  FaultFileLock(FaultInjectionFileSystem* fs, std::unique_ptr<FileLock> base)
      : fs_(fs), base_(std::move(base)) {
    fs_->open_handles_.fetch_add(1);
  }
  ~FaultFileLock() override {
    base_.reset();
    fs_->open_handles_.fetch_sub(1);
  }

 private:
  FaultInjectionFileSystem* const fs_;
  std::unique_ptr<FileLock> base_;
};

// ---- Fault specs ----

FaultInjectionFileSystem::FaultInjectionFileSystem(FileSystem* base) : base_(base) {}
FaultInjectionFileSystem::~FaultInjectionFileSystem() = default;

void FaultInjectionFileSystem::FailNth(FsOp op, uint64_t n, bool persistent,
                                       absl::StatusCode code) {
  MutexLock lock(&mu_);
  specs_.push_back(Spec{op, n, 0, persistent, code});
}

void FaultInjectionFileSystem::PowerOffAtNth(FsOp op, uint64_t n) {
  MutexLock lock(&mu_);
  Spec spec{op, n, 0, false, absl::StatusCode::kUnavailable};
  spec.power_off = true;
  specs_.push_back(spec);
}

void FaultInjectionFileSystem::TearNthWrite(uint64_t n, size_t keep_bytes) {
  MutexLock lock(&mu_);
  Spec spec{FsOp::kWrite, n, 0, false, absl::StatusCode::kInternal};
  spec.tear = true;
  spec.keep = keep_bytes;
  specs_.push_back(spec);
}

void FaultInjectionFileSystem::ClearFaults() {
  MutexLock lock(&mu_);
  specs_.clear();
  read_fault_.reset();
}

void FaultInjectionFileSystem::FailReadsWhere(ReadFaultFn fail) {
  MutexLock lock(&mu_);
  read_fault_ = fail ? std::make_shared<const ReadFaultFn>(std::move(fail)) : nullptr;
}

absl::Status FaultInjectionFileSystem::CheckRead(const std::string& path, uint64_t offset,
                                                 size_t n) {
  SHOAL_RETURN_IF_ERROR(Check(FsOp::kPread, path));
  std::shared_ptr<const ReadFaultFn> fail;
  {
    ReaderMutexLock lock(&mu_);
    fail = read_fault_;
  }
  if (fail == nullptr || !(*fail)(path, offset, n)) return absl::OkStatus();
  faults_injected_.fetch_add(1);
  return absl::InternalError(
      absl::StrCat("injected read fault: ", n, " bytes at offset ", offset, " of ", path));
}

uint64_t FaultInjectionFileSystem::op_count(FsOp op) const {
  ReaderMutexLock lock(&mu_);
  if (op != FsOp::kAny) return counts_[static_cast<size_t>(op)];
  uint64_t total = 0;
  for (uint64_t c : counts_) total += c;
  return total;
}

absl::Status FaultInjectionFileSystem::Check(FsOp op, const std::string& path,
                                             size_t* tear_keep) {
  MutexLock lock(&mu_);
  ++counts_[static_cast<size_t>(op)];
  if (powered_off_.load()) {
    faults_injected_.fetch_add(1);
    return absl::UnavailableError(absl::StrCat("power is off (simulated crash): ",
                                               FsOpName(op), " ", path));
  }
  absl::Status result;
  for (Spec& spec : specs_) {
    if (spec.op != op && spec.op != FsOp::kAny) continue;
    ++spec.seen;
    const bool fire = spec.seen == spec.n || (spec.persistent && spec.seen > spec.n);
    if (!fire || !result.ok()) continue;
    if (spec.power_off) {
      powered_off_.store(true);
      result = absl::UnavailableError(absl::StrCat(
          "power is off (simulated crash at ", FsOpName(op), " #", spec.seen, "): ", path));
    } else if (spec.tear) {
      if (tear_keep == nullptr) continue;
      *tear_keep = spec.keep;
      result = absl::InternalError(absl::StrCat("injected torn write (", spec.keep,
                                                " bytes kept) to ", path));
    } else {
      result = absl::Status(spec.code, absl::StrCat("injected fault: ", FsOpName(op),
                                                    " #", spec.seen, " of ", path));
    }
  }
  if (!result.ok()) faults_injected_.fetch_add(1);
  return result;
}

// ---- Tracking ----

std::shared_ptr<FaultInjectionFileSystem::Node> FaultInjectionFileSystem::TrackLocked(
    const std::string& path, bool* created) {
  *created = !base_->Exists(path);
  auto it = nodes_.find(path);
  if (it != nodes_.end()) return it->second;
  auto node = std::make_shared<Node>();
  node->path = path;
  if (!*created) {
    absl::StatusOr<std::string> content = base_->ReadFile(path);
    if (content.ok()) node->durable = std::move(content).value();
  }
  return node;
}

FaultInjectionFileSystem::Saved FaultInjectionFileSystem::SaveLocked(
    const std::string& path) {
  Saved saved;
  // Pre-order walk; ListDir succeeding is what makes an entry a directory.
  std::vector<std::string> pending = {""};
  while (!pending.empty()) {
    const std::string rel = pending.back();
    pending.pop_back();
    const std::string full = rel.empty() ? path : path + "/" + rel;
    absl::StatusOr<std::vector<std::string>> names = base_->ListDir(full);
    if (names.ok()) {
      saved.dirs.push_back(rel);
      for (const std::string& name : *names) {
        pending.push_back(rel.empty() ? name : rel + "/" + name);
      }
      continue;
    }
    auto it = nodes_.find(full);
    if (it != nodes_.end()) {
      saved.files[rel] = it->second->durable;
    } else {
      absl::StatusOr<std::string> content = base_->ReadFile(full);
      if (content.ok()) saved.files[rel] = std::move(content).value();
    }
  }
  std::sort(saved.dirs.begin(), saved.dirs.end());  // parents before children
  return saved;
}

void FaultInjectionFileSystem::ForgetUnderLocked(const std::string& path) {
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (IsUnder(it->first, path)) {
      it->second->path.clear();
      it = nodes_.erase(it);
    } else {
      ++it;
    }
  }
}

void FaultInjectionFileSystem::MoveUnderLocked(const std::string& from,
                                               const std::string& to) {
  std::vector<std::shared_ptr<Node>> moved;
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (IsUnder(it->first, from)) {
      moved.push_back(it->second);
      it = nodes_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& node : moved) {
    node->path = to + node->path.substr(from.size());
    nodes_[node->path] = node;
  }
}

absl::Status FaultInjectionFileSystem::SyncNode(const std::shared_ptr<Node>& node) {
  uint64_t ticket;
  std::string path;
  {
    MutexLock lock(&mu_);
    if (node->path.empty()) return absl::OkStatus();  // unlinked: nothing to keep
    ticket = ++node->sync_tickets;
    path = node->path;
  }
  // Read outside the lock: syncs of different files run in parallel, as
  // fdatasync does. The content read is at least what was stored before this
  // call, which is all fdatasync promises.
  absl::StatusOr<std::string> content = base_->ReadFile(path);
  if (!content.ok()) return content.status();
  MutexLock lock(&mu_);
  if (powered_off_.load()) {
    faults_injected_.fetch_add(1);
    return absl::UnavailableError(absl::StrCat("power is off (simulated crash): sync ", path));
  }
  if (ticket > node->committed_ticket) {
    node->durable = std::move(content).value();
    node->committed_ticket = ticket;
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::WriteWhole(const std::string& path,
                                                  const std::string& content) {
  absl::StatusOr<std::unique_ptr<WritableFile>> file = base_->NewWritableFile(path);
  if (!file.ok()) return file.status();
  absl::Status s = (*file)->Append(content);
  absl::Status c = (*file)->Close();
  return s.ok() ? c : s;
}

absl::Status FaultInjectionFileSystem::Restore(const std::string& path, const Saved& saved) {
  for (const std::string& rel : saved.dirs) {
    absl::Status s = base_->CreateDir(rel.empty() ? path : path + "/" + rel);
    if (!s.ok()) return s;
  }
  for (const auto& [rel, content] : saved.files) {
    absl::Status s = WriteWhole(rel.empty() ? path : path + "/" + rel, content);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---- Power loss ----

void FaultInjectionFileSystem::PowerOff() {
  MutexLock lock(&mu_);
  powered_off_.store(true);
}

absl::Status FaultInjectionFileSystem::DropUnsyncedData(const DropOptions& options) {
  if (open_handles_.load() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "DropUnsyncedData with ", open_handles_.load(), " handles open: close the DB first"));
  }
  MutexLock lock(&mu_);
  std::mt19937_64 rng(options.seed);
  // 1. Every tracked file back to its durable image (or a prefix of the
  //    change on top of it).
  for (const auto& [path, node] : nodes_) {
    absl::StatusOr<std::string> current = base_->ReadFile(path);
    if (!current.ok() || *current == node->durable) continue;
    std::string content = node->durable;
    if (options.keep_random_blocks) {
      const std::string& cur = *current;
      constexpr size_t kBlock = 4096;
      content.resize(rng() % 2 == 0 ? cur.size() : node->durable.size(), '\0');
      for (size_t b = 0; b < content.size(); b += kBlock) {
        if (rng() % 2 != 0) continue;  // this block did not reach the disk
        const size_t end = std::min(content.size(), b + kBlock);
        for (size_t i = b; i < end; ++i) content[i] = i < cur.size() ? cur[i] : '\0';
      }
    } else if (options.keep_random_prefix) {
      const std::string& cur = *current;
      const std::string& dur = node->durable;
      const size_t common = std::min(cur.size(), dur.size());
      size_t first_diff = static_cast<size_t>(
          std::mismatch(cur.begin(), cur.begin() + common, dur.begin()).first - cur.begin());
      const size_t keep = first_diff + rng() % (cur.size() - first_diff + 1);
      if (keep == cur.size()) {
        content = cur;
      } else {
        content = cur.substr(0, keep);
        if (keep < dur.size()) content.append(dur, keep, std::string::npos);
      }
    }
    absl::Status s = WriteWhole(path, content);
    if (!s.ok()) return s;
  }
  // 2. Directory operations never made durable, newest first.
  for (auto op = dir_ops_.rbegin(); op != dir_ops_.rend(); ++op) {
    absl::Status s;
    switch (op->kind) {
      case DirOp::kCreateFile:
        s = base_->RemoveFile(op->path);
        if (absl::IsNotFound(s)) s = absl::OkStatus();
        break;
      case DirOp::kCreateDir:
        s = base_->RemoveDirRecursive(op->path);
        break;
      case DirOp::kRename:
        s = base_->Rename(op->path, op->from);
        if (s.ok() && op->had_saved) s = Restore(op->path, op->saved);
        break;
      case DirOp::kRemove:
        s = Restore(op->path, op->saved);
        break;
    }
    if (!s.ok()) return s;
  }
  // 3. Power on: what is on disk now is durable.
  for (auto& [path, node] : nodes_) node->path.clear();
  nodes_.clear();
  dir_ops_.clear();
  powered_off_.store(false);
  return absl::OkStatus();
}

size_t FaultInjectionFileSystem::UnsyncedFileCount() {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [path, node] : nodes_) {
    absl::StatusOr<std::string> current = base_->ReadFile(path);
    if (current.ok() && *current != node->durable) ++n;
  }
  return n;
}

size_t FaultInjectionFileSystem::UnsyncedDirOpCount() const {
  ReaderMutexLock lock(&mu_);
  return dir_ops_.size();
}

// ---- FileSystem ----

absl::StatusOr<std::unique_ptr<MappedFile>> FaultInjectionFileSystem::OpenMapped(
    const std::string& path, size_t capacity, bool populate) {
  return OpenTracked(path, /*direct=*/false, [&](const std::string& p) {
    return base_->OpenMapped(p, capacity, populate);
  });
}

absl::StatusOr<std::unique_ptr<MappedFile>> FaultInjectionFileSystem::OpenDirect(
    const std::string& path, size_t capacity, size_t resume_offset) {
  return OpenTracked(path, /*direct=*/true, [&](const std::string& p) {
    return base_->OpenDirect(p, capacity, resume_offset);
  });
}

absl::StatusOr<std::unique_ptr<MappedFile>> FaultInjectionFileSystem::OpenTracked(
    const std::string& path, bool direct,
    const std::function<absl::StatusOr<std::unique_ptr<MappedFile>>(const std::string&)>& open) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kMmap, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  bool created;
  std::shared_ptr<Node> node = TrackLocked(p, &created);
  absl::StatusOr<std::unique_ptr<MappedFile>> file = open(p);
  if (!file.ok()) return file.status();
  nodes_[p] = node;
  if (created) dir_ops_.push_back(DirOp{DirOp::kCreateFile, {Parent(p)}, p});
  if (direct) direct_files_opened_.fetch_add(1);
  return std::unique_ptr<MappedFile>(
      new FaultMappedFile(this, std::move(node), p, std::move(file).value(), direct));
}

absl::StatusOr<std::unique_ptr<ReadOnlyMappedFile>> FaultInjectionFileSystem::OpenReadOnlyMapped(
    const std::string& path) {
  if (absl::Status s = Check(FsOp::kMmap, path); !s.ok()) return s;
  return base_->OpenReadOnlyMapped(path);
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>> FaultInjectionFileSystem::OpenRandomAccess(
    const std::string& path, bool direct) {
  if (absl::Status s = Check(FsOp::kMmap, path); !s.ok()) return s;
  SHOAL_ASSIGN_OR_RETURN(std::unique_ptr<RandomAccessFile> file,
                         base_->OpenRandomAccess(path, direct));
  return std::unique_ptr<RandomAccessFile>(
      new FaultRandomAccessFile(this, path, std::move(file)));
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::NewWritableFile(
    const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kOpen, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  bool created;
  std::shared_ptr<Node> node = TrackLocked(p, &created);
  absl::StatusOr<std::unique_ptr<WritableFile>> file = base_->NewWritableFile(p);
  if (!file.ok()) return file.status();
  nodes_[p] = node;
  if (created) dir_ops_.push_back(DirOp{DirOp::kCreateFile, {Parent(p)}, p});
  return std::unique_ptr<WritableFile>(
      new FaultWritableFile(this, std::move(node), p, std::move(file).value()));
}

absl::StatusOr<std::string> FaultInjectionFileSystem::ReadFile(const std::string& path) {
  if (absl::Status s = Check(FsOp::kRead, path); !s.ok()) return s;
  return base_->ReadFile(path);
}

absl::Status FaultInjectionFileSystem::Rename(const std::string& from, const std::string& to) {
  const std::string f = Norm(from), t = Norm(to);
  if (absl::Status s = Check(FsOp::kRename, f); !s.ok()) return s;
  MutexLock lock(&mu_);
  DirOp op{DirOp::kRename, {Parent(f)}, t, f};
  if (Parent(t) != Parent(f)) op.dirs.push_back(Parent(t));
  op.had_saved = base_->Exists(t);
  if (op.had_saved) op.saved = SaveLocked(t);
  absl::Status s = base_->Rename(f, t);
  if (!s.ok()) return s;
  ForgetUnderLocked(t);
  MoveUnderLocked(f, t);
  dir_ops_.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::LinkFile(const std::string& from,
                                                const std::string& to) {
  const std::string f = Norm(from), t = Norm(to);
  if (absl::Status s = Check(FsOp::kRename, f); !s.ok()) return s;
  MutexLock lock(&mu_);
  absl::Status s = base_->LinkFile(f, t);
  if (!s.ok()) return s;
  dir_ops_.push_back(DirOp{DirOp::kCreateFile, {Parent(t)}, t});
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::SyncFile(const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kSync, p); !s.ok()) return s;
  std::shared_ptr<Node> node;
  {
    MutexLock lock(&mu_);
    auto it = nodes_.find(p);
    if (it == nodes_.end()) return absl::OkStatus();
    node = it->second;
  }
  return SyncNode(node);
}

absl::Status FaultInjectionFileSystem::RemoveFile(const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kRemove, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  DirOp op{DirOp::kRemove, {Parent(p)}, p};
  op.had_saved = true;
  op.saved = SaveLocked(p);
  absl::Status s = base_->RemoveFile(p);
  if (!s.ok()) return s;
  ForgetUnderLocked(p);
  dir_ops_.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::RemoveDirRecursive(const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kRemove, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  if (!base_->Exists(p)) return base_->RemoveDirRecursive(p);
  DirOp op{DirOp::kRemove, {Parent(p)}, p};
  op.had_saved = true;
  op.saved = SaveLocked(p);
  absl::Status s = base_->RemoveDirRecursive(p);
  if (!s.ok()) return s;
  ForgetUnderLocked(p);
  dir_ops_.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::CreateDir(const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kMkdir, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  std::vector<std::string> missing;  // deepest first
  for (std::string d = p; d != "." && d != "/" && !base_->Exists(d); d = Parent(d)) {
    missing.push_back(d);
  }
  absl::Status s = base_->CreateDir(p);
  if (!s.ok()) return s;
  for (auto d = missing.rbegin(); d != missing.rend(); ++d) {
    dir_ops_.push_back(DirOp{DirOp::kCreateDir, {Parent(*d)}, *d});
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::SyncDir(const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kSync, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  absl::Status s = base_->SyncDir(p);
  if (!s.ok()) return s;
  for (DirOp& op : dir_ops_) std::erase(op.dirs, p);
  // A removal (or a rename away) made durable moots the older operations
  // still pending below the path it took away: there is nothing left there
  // for a power cut to undo them in (e.g. a file removed in a directory
  // never synced, then the whole directory removed, durably).
  for (size_t i = 0; i < dir_ops_.size(); ++i) {
    const DirOp& op = dir_ops_[i];
    if (!op.dirs.empty() || (op.kind != DirOp::kRemove && op.kind != DirOp::kRename)) continue;
    const std::string gone = op.kind == DirOp::kRemove ? op.path : op.from;
    for (size_t j = 0; j < i; ++j) {
      DirOp& older = dir_ops_[j];
      if (IsUnder(older.path, gone) && older.path != gone) older.dirs.clear();
    }
  }
  std::erase_if(dir_ops_, [](const DirOp& op) { return op.dirs.empty(); });
  return absl::OkStatus();
}

absl::Status FaultInjectionFileSystem::Truncate(const std::string& path, uint64_t length) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kTruncate, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  bool created;
  std::shared_ptr<Node> node = TrackLocked(p, &created);
  absl::Status s = base_->Truncate(p, length);
  if (!s.ok()) return s;
  nodes_[p] = node;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> FaultInjectionFileSystem::ListDir(
    const std::string& path) {
  if (absl::Status s = Check(FsOp::kRead, path); !s.ok()) return s;
  return base_->ListDir(path);
}

bool FaultInjectionFileSystem::Exists(const std::string& path) { return base_->Exists(path); }

absl::StatusOr<uint64_t> FaultInjectionFileSystem::FileSize(const std::string& path) {
  if (absl::Status s = Check(FsOp::kRead, path); !s.ok()) return s;
  return base_->FileSize(path);
}

absl::StatusOr<std::unique_ptr<FileLock>> FaultInjectionFileSystem::LockFile(
    const std::string& path) {
  const std::string p = Norm(path);
  if (absl::Status s = Check(FsOp::kLock, p); !s.ok()) return s;
  MutexLock lock(&mu_);
  const bool created = !base_->Exists(p);
  absl::StatusOr<std::unique_ptr<FileLock>> file_lock = base_->LockFile(p);
  if (!file_lock.ok()) return file_lock.status();
  if (created) dir_ops_.push_back(DirOp{DirOp::kCreateFile, {Parent(p)}, p});
  return std::unique_ptr<FileLock>(new FaultFileLock(this, std::move(file_lock).value()));
}

}  // namespace shoal::test
