// A small, defensive reader of the dynamic-linking facts of an ELF64 little-endian shared object:
// the libraries it needs, the symbols it imports and the symbols it offers for interposition.
//
// It reads bytes only; nothing is mapped or executed. The input is attacker-controlled (a student's
// plugin), so every offset and size is checked against the image before it is used, every count has a
// hard cap, and nothing recurses on file data. Inconsistencies become `problems` (plain sentences), never
// crashes or undefined behaviour.
//
// Two views of the same facts are read, because they can be forged independently:
//   - `segments`: what the dynamic loader uses. PT_DYNAMIC's address, translated through the PT_LOAD
//     segments, gives the dynamic array; DT_STRTAB, DT_SYMTAB, DT_VERSYM and DT_VERNEED give the tables.
//     The symbol count comes from DT_GNU_HASH / DT_HASH and from every symbol index a relocation
//     (DT_RELA, DT_REL, DT_JMPREL) refers to, since relocations are what make the loader bind a name.
//   - `sections`: what the section headers say (.dynamic, .dynsym and its string table, .gnu.version,
//     .gnu.version_r). Section headers may be stripped; then only the segment view exists.
// The caller (so_audit) compares the two: a disagreement is itself a finding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kreg::elf {

// Hard caps on what the reader accepts; a legitimate plugin is orders of magnitude below each.
inline constexpr std::uint64_t kMaxProgramHeaders = 4096;
inline constexpr std::uint64_t kMaxLoadSegments = 64;
inline constexpr std::uint64_t kMaxSections = 65536;
inline constexpr std::uint64_t kMaxDynamicEntries = 65536;
inline constexpr std::uint64_t kMaxDynamicSymbols = 1u << 18;  // honest plugins: hundreds
inline constexpr std::uint64_t kMaxRelocations = 1u << 24;
inline constexpr std::uint64_t kMaxNameBytes = 1u << 16;        // one symbol or library name
inline constexpr std::uint64_t kMaxTotalNameBytes = 64u << 20;  // all names kept from one view
inline constexpr std::uint64_t kMaxVersionNeeds = 4096;         // DT_VERNEEDNUM, and aux entries per file
inline constexpr std::uint64_t kPageSize = 4096;                // x86-64 mapping granularity

// A library the loader will load on behalf of the object: DT_NEEDED, and also the filter tags
// DT_AUXILIARY and DT_FILTER, which glibc loads too.
struct NeededLibrary {
    std::string name;
    std::string tag;  // "DT_NEEDED", "DT_AUXILIARY" or "DT_FILTER"
};

// An undefined global or weak dynamic symbol: the loader looks it up in other objects.
struct ImportedSymbol {
    std::string name;
    std::string version;          // "GLIBC_2.2.5"; empty when unversioned
    std::string version_library;  // the file the version belongs to ("libc.so.6"); empty when unversioned
    bool weak = false;
};

struct DynamicView {
    std::vector<NeededLibrary> needed;              // in dynamic-array order
    std::vector<std::string> search_paths;          // "DT_RUNPATH: /usr/local/cuda/lib64", likewise DT_RPATH
    std::vector<ImportedSymbol> imports;            // in symbol-table order
    std::vector<std::string> interposable_exports;  // defined global/weak symbols of default visibility
    std::uint64_t symbol_count = 0;                 // entries of the symbol table that were read
};

struct ElfDynamicReport {
    // Each an audit failure: "section header table runs past the end of the file (...)".
    std::vector<std::string> problems;
    bool header_ok = false;               // the ELF header itself was acceptable
    std::optional<DynamicView> segments;  // the loader's view; absent if it could not be read
    std::optional<DynamicView> sections;  // the section headers' view; absent if stripped or unreadable
    bool has_section_headers = false;     // e_shnum (or the extended count) was non-zero
};

// Reads image (the whole file). Never throws for bad input (std::bad_alloc aside).
ElfDynamicReport read_elf_dynamic(std::string_view image);

}  // namespace kreg::elf
