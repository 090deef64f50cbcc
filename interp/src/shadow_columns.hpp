#pragma once
// The shadow of one batch of workgroups, column by column (shadow.hpp ShadowLanes): every
// evaluation of a narrowing site appends one entry per active lane to each column, and a store
// whose value is the site's convert then fills that evaluation's destination. The columns are
// reused from batch to batch, so a worker allocates them once for the largest batch it sees.

#include "halfway/interp/shadow.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace halfway::interp {

class ShadowColumns {
public:
  // Where one evaluation's entries go: `count` slots from offset `at` in every column.
  struct Slots {
    uint32_t* lane;
    uint64_t* source_bits;
    std::array<uint32_t*, kRoundingModels> models;
    double *exact_hi, *exact_lo, *product_sum;
  };

  // Appends an evaluation of `site` by `count` lanes and returns its slots, valid until the next
  // append.
  Slots append(ir::ExprId site, bool single, size_t count) {
    const size_t at = size_;
    size_ += count;
    if (size_ > capacity_)
      grow(size_);
    evaluations_.push_back({site, at, count, single});
    Slots s{lane_.data() + at,     source_.data() + at,   {},
            exact_hi_.data() + at, exact_lo_.data() + at, product_sum_.data() + at};
    for (size_t m = 0; m < kRoundingModels; ++m)
      s.models[m] = models_[m].data() + at;
    return s;
  }

  size_t evaluations() const { return evaluations_.size(); }
  ir::ExprId site(size_t e) const { return evaluations_[e].site; }
  size_t count(size_t e) const { return evaluations_[e].count; }
  const uint32_t* lanes(size_t e) const { return lane_.data() + evaluations_[e].at; }
  // Marks evaluation e as a store's value into `memory` of `space`; returns its index column.
  uint64_t* store(size_t e, ir::Space space, uint32_t memory) {
    Evaluation& v = evaluations_[e];
    v.stored = true;
    v.space = space;
    v.memory = memory;
    return index_.data() + v.at;
  }

  // Every evaluation since the last clear(), in the order they were made.
  std::vector<ShadowLanes> views(uint64_t first_workgroup, uint32_t wg_lanes) const {
    std::vector<ShadowLanes> out(evaluations_.size());
    for (size_t e = 0; e < evaluations_.size(); ++e) {
      const Evaluation& v = evaluations_[e];
      ShadowLanes& l = out[e];
      l.site = v.site;
      l.count = v.count;
      l.first_workgroup = first_workgroup;
      l.wg_lanes = wg_lanes;
      l.lane = lane_.data() + v.at;
      l.source_bits = source_.data() + v.at;
      for (size_t m = 0; m < kRoundingModels; ++m)
        l.models[m] = models_[m].data() + v.at;
      l.single = v.single;
      l.exact_hi = exact_hi_.data() + v.at;
      l.exact_lo = exact_lo_.data() + v.at;
      l.product_sum = product_sum_.data() + v.at;
      l.stored = v.stored;
      l.space = v.space;
      l.memory = v.memory;
      l.index = index_.data() + v.at;
    }
    return out;
  }

  void clear() {
    evaluations_.clear();
    size_ = 0;
  }

private:
  struct Evaluation {
    ir::ExprId site = ir::kNone;
    size_t at = 0, count = 0;
    bool single = false;
    bool stored = false;
    ir::Space space = ir::Space::Buffer;
    uint32_t memory = 0;
  };

  // Geometric growth: a site in a loop appends many times per batch.
  void grow(size_t need) {
    capacity_ = std::max(need, 2 * capacity_);
    lane_.resize(capacity_);
    source_.resize(capacity_);
    for (auto& m : models_)
      m.resize(capacity_);
    exact_hi_.resize(capacity_);
    exact_lo_.resize(capacity_);
    product_sum_.resize(capacity_);
    index_.resize(capacity_);
  }

  std::vector<Evaluation> evaluations_;
  size_t size_ = 0, capacity_ = 0;
  std::vector<uint32_t> lane_;
  std::vector<uint64_t> source_;
  std::array<std::vector<uint32_t>, kRoundingModels> models_;
  std::vector<double> exact_hi_, exact_lo_, product_sum_;
  std::vector<uint64_t> index_;
};

} // namespace halfway::interp
