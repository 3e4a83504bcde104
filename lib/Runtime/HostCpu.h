//===- HostCpu.h - the extensions this CPU has ------------------*- C++ -*-===//
//
// Checks the x86 extensions a model was compiled for (kiln_model_info's
// cpu_features) against this CPU's, by CPUID and XGETBV.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HOSTCPU_H
#define KILN_RUNTIME_HOSTCPU_H

#include <string>

namespace kiln::runtime {

/// The names in `required` (comma separated, kiln::kCpuFeatures' names)
/// that this CPU lacks or its OS does not enable, comma separated; a name
/// the table does not know counts as lacking. Empty when all are there (or
/// `required` is null or empty).
std::string missingCpuFeatures(const char *required);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_HOSTCPU_H
