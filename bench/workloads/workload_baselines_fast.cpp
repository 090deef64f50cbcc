// Compiled with -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math: the
// fast-math variant of the matmul and GEMV loops, for the relaxed-accumulation cases.
#include "workload_baselines.hpp"

namespace halfway::bench::workloads::fast {

#include "workload_loops.inc"

} // namespace halfway::bench::workloads::fast
