#pragma once
// The elements unbarriered narrowing sites store under single rounding, judged where the
// interpreter computes them (specs/f16-narrowing-barrier.md §4 and §6).
//
// The device runs first; the reference run then hands its site evaluations (columns of what
// shadow records hold, interp::ShadowLanes), batch by batch from its worker threads, to a
// SiteJudge (interp::ShadowSink). For each evaluation that stores into an output buffer the judge
// compares the device's elements there with the rounding models column by column and, where they
// differ from the reference, builds the lane's record and checks the §4 bound; it keeps per
// element one byte of verdict bits and the bound ratio. Nothing per evaluation outlives its
// batch: the comparison loop of diff::run reads the bytes afterwards. The last evaluation that
// stores an element decides it, as the last store decides the element's value; two workgroups
// storing one element race on a GPU, and then either may.
//
// What a report shows for the first violations and unexplained elements (their bound and every
// model's value) is kept for the lowest indices only: at most Options::max_shown elements of each
// kind per buffer, lowest index first.

#include "elements.hpp"
#include "fast_bound.hpp"
#include "halfway/diff/bound.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/interp/shadow.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/support/zeroed_array.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace halfway::diff::detail {

// Per element verdict bits (SiteJudge::flags).
enum SiteFlag : uint8_t {
  kSiteStored = 1,  // the last record that stored here came from an unbarriered site
  kSiteRecord = 2,  // ... of the element's type: its models and bound apply
  kSiteSame = 4,    // the device's element equals the site's result (nothing more to judge)
  kSiteInside = 8,  // otherwise: the device's element is inside the §4 bound
  kSiteModels = 16, // kSiteModels << m: the device's element equals rounding model m
};

// Adds to `into` the model counts of elements [first, last) whose flags have kSiteRecord and
// kSiteSame: the elements at unbarriered sites where the device equals the site's result. Where
// that result is also the element's final value (diff::run decides it), they are ModelCounts'
// elements; diff::run takes back, with add_models(..., -1), those where it is not.
void count_same_models(const uint8_t* flags, uint64_t first, uint64_t last, ModelCounts& into);
// Adds (sign 1) or takes back (-1) one element with these flags to or from `into`'s elements,
// equal and first counts.
inline void add_models(uint8_t flags, int sign, ModelCounts& into) {
  const auto s = static_cast<uint64_t>(sign);
  into.elements += s;
  const unsigned models = flags / kSiteModels;
  for (size_t m = 0; m < interp::kRoundingModels; ++m)
    into.equal[m] += s * ((models >> m) & 1);
  if (models != 0)
    into.first[static_cast<size_t>(std::countr_zero(models))] += s;
}

// The bound and model values of an element a report shows.
struct SiteDetail {
  Bound bound;
  std::array<uint32_t, interp::kRoundingModels> models{};
};

class SiteJudge final : public interp::ShadowSink {
public:
  // `sites`: the kernel's narrowing sites (those that need a barrier are judged); `args` the
  // caller's arguments, `device` the same arguments after the device's launch (one per
  // parameter). With `single` false the judge ignores every record (the shadow was asked for
  // relaxed accumulation only).
  SiteJudge(const ir::Kernel& kernel, const std::vector<ir::NarrowingSite>& sites, bool single,
            std::span<const rt::Arg> args, std::span<const rt::Arg> device,
            const num::FloatControls& controls, bool exact_models, size_t max_shown);

  void take(std::span<const interp::ShadowLanes> evaluations) override;

  // Per element of the caller's buffer `b` (an output), its verdict bits; null when no element of
  // `b` can be stored by an unbarriered site of a float type.
  const uint8_t* flags(const rt::HostBuffer* b) const;
  // Per element of `b` whose flags have kSiteRecord but not kSiteSame (the device differed from
  // the site's result): |device - reference| / bound (see ModelCounts::max_bound_ratio), rounded
  // up to a float, NaN when there is none. Not written for other elements.
  const float* ratios(const rt::HostBuffer* b) const;
  // For the same elements: the bits the last site evaluation stored there. A later store that is
  // no site's may have replaced them; a record whose value is not the element's final value
  // bounds nothing. Where kSiteSame is set the device's element equals what the site stored, so
  // the element's final value is that one exactly when the device's equals it (diff::run).
  const uint32_t* stored(const rt::HostBuffer* b) const;
  // What to show for element `index` when it is among the first violations or unexplained
  // elements; null when it is not kept.
  const SiteDetail* violation(const rt::HostBuffer* b, uint64_t index) const;
  const SiteDetail* unexplained(const rt::HostBuffer* b, uint64_t index) const;
  // One note per unbarriered site whose evaluations did not store into an output buffer.
  std::vector<std::string> notes() const;

private:
  // The lowest indices offered, at most `cap`, each with its latest detail.
  class Shown {
  public:
    explicit Shown(size_t cap) : cap_(cap) {}
    // Whether offer(index, ...) may keep the element (a lower index than the kept ones, or room).
    bool wants(uint64_t index) const {
      return cap_ != 0 && index <= cutoff_.load(std::memory_order_relaxed);
    }
    void offer(uint64_t index, const SiteDetail& detail);
    const SiteDetail* find(uint64_t index) const;

  private:
    size_t cap_;
    std::atomic<uint64_t> cutoff_{std::numeric_limits<uint64_t>::max()};
    std::mutex mutex_;
    std::map<uint64_t, SiteDetail> items_;
  };

  struct Output {
    ir::ScalarType type = ir::ScalarType::F32;
    num::Format format = num::Format::F32;
    // Same results under the controls; where compare.plain(), bit equality or two NaNs.
    ElementCompare compare;
    // f16, bf16 or f32 and plain: the bound of a fast site is decided inline (sites.cpp).
    bool fast = false;
    uint64_t size = 0;
    std::optional<ElementBits> device; // the device's result
    // Pages zeroed where the workers first write them, in parallel (huge pages where they may).
    support::ZeroedArray<uint8_t> flags;
    // Written with the flags' kSiteRecord bit when kSiteSame is not set, and only read there.
    support::ZeroedArray<float> ratio;
    // The value the element's last site evaluation stored (a float type of at most 32 bits).
    support::ZeroedArray<uint32_t> stored;
    std::unique_ptr<Shown> violations, unexplained;
  };

  // The elements one evaluation of `site` stored into `out`.
  void judge(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out);
  // The same for an output whose elements are Element (uint8_t, uint16_t or uint32_t).
  template <class Element>
  void judge_as(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out);
  // Lanes whose device element differs from the site's result, waiting to be judged four at a
  // time (sites.cpp).
  struct Pending {
    static constexpr size_t kCapacity = 64;
    size_t count = 0;
    std::array<uint32_t, kCapacity> k, ref, device;
    std::array<uint64_t, kCapacity> index;
    std::array<uint8_t, kCapacity> flags;
    std::array<double, kCapacity> hi, lo, error;
  };
  template <num::Format T>
  void judge_pending(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out,
                     Pending& p);
  // A lane whose device element differs from the site's result, decided by `verdict` (the
  // fast one, or the generic bound when there is none): the flags it ends with, its ratio and
  // stored value written.
  uint8_t settle(const interp::ShadowLanes& e, size_t k, const ir::NarrowingSite& site, Output& out,
                 uint64_t i, uint32_t ref, uint32_t d, uint8_t flags,
                 const std::optional<FastVerdict>& verdict);
  // One lane whose device element differs from the site's result (sites.cpp).
  uint8_t judge_differing(const interp::ShadowLanes& e, size_t k, const ir::NarrowingSite& site,
                          Output& out, uint64_t i, uint32_t ref, uint32_t d, uint8_t flags,
                          bool fast);
  // Lane k of `e`, stored into element e.index[k] of `out`, differs from the reference `ref`: the
  // generic bound decides it unless `decided` (the fast verdict set flags and ratio already), and
  // the report keeps it when it is among the lowest indices shown.
  void bound_and_offer(const interp::ShadowLanes& e, size_t k, const ir::NarrowingSite& site,
                       Output& out, uint64_t ref, uint64_t d, bool explained, uint8_t& flags,
                       float& ratio, bool decided);
  const Output* output(const rt::HostBuffer* b) const;

  const ir::Kernel& kernel_;
  num::FloatControls controls_;
  bool exact_models_;
  // Indexed by expression id: the site whose convert it is, when that site needs a barrier.
  std::vector<const ir::NarrowingSite*> barrier_;
  // Indexed by expression id: the site is an f32 producer narrowed to nearest (fast_verdict).
  std::vector<uint8_t> fast_site_;
  // Indexed by expression id: the site's E.
  std::vector<SkippedError> error_;
  // Per parameter: its output (null for scalars, read-only and non-float buffers), whether it is
  // a buffer at all, and the caller's buffer it is bound to.
  std::vector<Output*> by_param_;
  std::vector<bool> is_buffer_;
  std::map<const rt::HostBuffer*, std::unique_ptr<Output>> outputs_;
  // Per expression id: evaluations of the site that did not store into an output buffer.
  std::unique_ptr<std::atomic<uint64_t>[]> nowhere_;
};

} // namespace halfway::diff::detail
