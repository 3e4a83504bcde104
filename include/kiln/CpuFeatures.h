//===- CpuFeatures.h - x86 extensions a model may need ----------*- C++ -*-===//
//
// The x86 instruction-set extensions generated code may use, by LLVM's
// feature names, with where CPUID reports each and the register state the
// operating system must save for it (XCR0). kiln-compile records the ones
// its target enables in model.so; the runtime checks them when it loads the
// model, so that a model compiled for another CPU (an AVX-512 build on an
// AVX2 machine) fails to load with a message rather than dying of SIGILL in
// its first kernel. Plain data: the runtime includes it without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CPUFEATURES_H
#define KILN_CPUFEATURES_H

#include <cstdint>

namespace kiln {

enum class CpuidRegister { Eax, Ebx, Ecx, Edx };

struct CpuFeature {
  /// LLVM's name ("avx512f"): the target feature and what model.so lists.
  const char *name;
  uint32_t leaf, subleaf;
  CpuidRegister reg;
  uint32_t bit;
  /// XCR0 bits the OS must have enabled (0: none beyond SSE).
  uint64_t osState;
};

/// XCR0: SSE and AVX (ymm) state; plus AVX-512's opmask and upper zmm
/// state; APX's extended general registers.
inline constexpr uint64_t kAvxState = 0x6;
inline constexpr uint64_t kAvx512State = 0xe6;
inline constexpr uint64_t kApxState = uint64_t(1) << 19;

/// Every extension LLVM's x86 instruction selection may use without
/// intrinsics, from SSE3 on (x86-64's SSE2 is a given), AMD's included
/// (SSE4A's EXTRQ / INSERTQ in shuffles on every Zen). AMX and AVX10.2 are
/// left out: kiln emits neither. A row added is an ABI change
/// (KILN_ABI_VERSION): an older runtime counts a name it does not know as
/// missing.
inline constexpr CpuFeature kCpuFeatures[] = {
    {"sse3", 1, 0, CpuidRegister::Ecx, 0, 0},
    {"ssse3", 1, 0, CpuidRegister::Ecx, 9, 0},
    {"sse4.1", 1, 0, CpuidRegister::Ecx, 19, 0},
    {"sse4.2", 1, 0, CpuidRegister::Ecx, 20, 0},
    {"popcnt", 1, 0, CpuidRegister::Ecx, 23, 0},
    {"movbe", 1, 0, CpuidRegister::Ecx, 22, 0},
    {"lzcnt", 0x80000001, 0, CpuidRegister::Ecx, 5, 0},
    {"sse4a", 0x80000001, 0, CpuidRegister::Ecx, 6, 0},
    {"tbm", 0x80000001, 0, CpuidRegister::Ecx, 21, 0},
    {"bmi", 7, 0, CpuidRegister::Ebx, 3, 0},
    {"bmi2", 7, 0, CpuidRegister::Ebx, 8, 0},
    {"avx", 1, 0, CpuidRegister::Ecx, 28, kAvxState},
    {"f16c", 1, 0, CpuidRegister::Ecx, 29, kAvxState},
    {"fma", 1, 0, CpuidRegister::Ecx, 12, kAvxState},
    {"fma4", 0x80000001, 0, CpuidRegister::Ecx, 16, kAvxState},
    {"xop", 0x80000001, 0, CpuidRegister::Ecx, 11, kAvxState},
    {"avx2", 7, 0, CpuidRegister::Ebx, 5, kAvxState},
    {"gfni", 7, 0, CpuidRegister::Ecx, 8, 0},
    {"vaes", 7, 0, CpuidRegister::Ecx, 9, kAvxState},
    {"vpclmulqdq", 7, 0, CpuidRegister::Ecx, 10, kAvxState},
    {"avxvnni", 7, 1, CpuidRegister::Eax, 4, kAvxState},
    {"avxifma", 7, 1, CpuidRegister::Eax, 23, kAvxState},
    {"avxvnniint8", 7, 1, CpuidRegister::Edx, 4, kAvxState},
    {"avxneconvert", 7, 1, CpuidRegister::Edx, 5, kAvxState},
    {"avx512f", 7, 0, CpuidRegister::Ebx, 16, kAvx512State},
    {"avx512dq", 7, 0, CpuidRegister::Ebx, 17, kAvx512State},
    {"avx512ifma", 7, 0, CpuidRegister::Ebx, 21, kAvx512State},
    {"avx512cd", 7, 0, CpuidRegister::Ebx, 28, kAvx512State},
    {"avx512bw", 7, 0, CpuidRegister::Ebx, 30, kAvx512State},
    {"avx512vl", 7, 0, CpuidRegister::Ebx, 31, kAvx512State},
    {"avx512vbmi", 7, 0, CpuidRegister::Ecx, 1, kAvx512State},
    {"avx512vbmi2", 7, 0, CpuidRegister::Ecx, 6, kAvx512State},
    {"avx512vnni", 7, 0, CpuidRegister::Ecx, 11, kAvx512State},
    {"avx512bitalg", 7, 0, CpuidRegister::Ecx, 12, kAvx512State},
    {"avx512vpopcntdq", 7, 0, CpuidRegister::Ecx, 14, kAvx512State},
    {"avx512fp16", 7, 0, CpuidRegister::Edx, 23, kAvx512State},
    {"avx512bf16", 7, 1, CpuidRegister::Eax, 5, kAvx512State},
    {"egpr", 7, 1, CpuidRegister::Edx, 21, kApxState},
};

} // namespace kiln

#endif // KILN_CPUFEATURES_H
