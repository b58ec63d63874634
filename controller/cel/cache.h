// A compiled-program cache shared by threads.
//
// Programs are keyed by expression text. Concurrent requests for the same text compile it exactly
// once: the first caller compiles while later callers wait on the same entry. Successful and
// failed compiles are both remembered (a failed compile is deterministic for a fixed Env).
// The cache is bounded: when it exceeds `capacity` entries the least recently used is evicted.
//
// Thread-safe. The Env must outlive the cache.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "controller/cel/program.h"

namespace draco::cel {

class ProgramCache {
 public:
  ProgramCache(const Env& env, size_t capacity, ParserOptions parser_options = ParserOptions())
      : env_(env), capacity_(capacity), parser_options_(parser_options) {}

  // Returns the compile result for `expr`, compiling it at most once per cache residency.
  // May block while another thread compiles the same expression.
  CompileResult Get(std::string_view expr);

  // Number of compilations performed (for tests and metrics).
  uint64_t compilations() const;
  size_t size() const;

 private:
  struct Entry {
    bool ready = false;
    CompileResult result;
    std::list<std::string>::iterator lru;
  };

  const Env& env_;
  const size_t capacity_;
  const ParserOptions parser_options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;  // guarded by mu_
  std::list<std::string> lru_;                                       // guarded by mu_
  uint64_t compilations_ = 0;                                        // guarded by mu_
};

}  // namespace draco::cel
