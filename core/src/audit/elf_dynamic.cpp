#include "audit/elf_dynamic.hpp"

#include <cstdint>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace kreg::elf {
namespace {

// Only ever thrown and caught inside this file: one view of the file is unreadable.
class FormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// ELF constants (from <elf.h>, spelled out so the reader does not depend on the host's headers).
constexpr std::uint16_t kEtDyn = 3;
constexpr std::uint32_t kPtLoad = 1, kPtDynamic = 2;
constexpr std::uint32_t kShtNull = 0, kShtStrtab = 3, kShtDynamic = 6, kShtNobits = 8, kShtDynsym = 11;
constexpr std::uint32_t kShtGnuVersym = 0x6fffffff, kShtGnuVerneed = 0x6ffffffe;
constexpr std::uint16_t kPnXnum = 0xffff, kShnXindex = 0xffff;
constexpr std::int64_t kDtNull = 0, kDtNeeded = 1, kDtPltRelSz = 2, kDtHash = 4, kDtStrtab = 5, kDtSymtab = 6,
                       kDtRela = 7, kDtRelaSz = 8, kDtRelaEnt = 9, kDtStrSz = 10, kDtSymEnt = 11, kDtRpath = 15,
                       kDtRel = 17, kDtRelSz = 18, kDtRelEnt = 19, kDtPltRel = 20, kDtJmpRel = 23, kDtRunpath = 29,
                       kDtGnuHash = 0x6ffffef5, kDtVersym = 0x6ffffff0, kDtVerneed = 0x6ffffffe,
                       kDtVerneedNum = 0x6fffffff, kDtAuxiliary = 0x7ffffffd, kDtFilter = 0x7fffffff;
constexpr std::uint64_t kEhdrSize = 64, kPhdrSize = 56, kShdrSize = 64, kSymSize = 24, kDynSize = 16, kRelaSize = 24,
                        kRelSize = 16, kVerneedSize = 16, kVernauxSize = 16;
constexpr unsigned kStbGlobal = 1, kStbWeak = 2, kStbGnuUnique = 10, kStvDefault = 0;

std::string hex(std::uint64_t value) {
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
    return buffer;
}

// [offset, offset + size) lies within [0, limit), computed without overflow.
bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
    return offset <= limit && size <= limit - offset;
}

std::uint64_t checked_mul(std::uint64_t count, std::uint64_t size, const std::string& what) {
    if (size != 0 && count > std::numeric_limits<std::uint64_t>::max() / size)
        throw FormatError(what + " has an impossible size (" + std::to_string(count) + " entries)");
    return count * size;
}

// A file range that has been checked to lie inside the image.
struct Region {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
};

class Image {
public:
    explicit Image(std::string_view bytes) : bytes_(bytes) {}

    std::uint64_t size() const { return bytes_.size(); }

    Region region(std::uint64_t offset, std::uint64_t size, const std::string& what) const {
        if (!fits(offset, size, bytes_.size()))
            throw FormatError(what + " runs past the end of the file (offset " + hex(offset) + ", " +
                              std::to_string(size) + " bytes; the file has " + std::to_string(bytes_.size()) + ")");
        return {offset, size};
    }

    template <class T>
    T read(std::uint64_t offset) const {
        if (!fits(offset, sizeof(T), bytes_.size()))
            throw FormatError("a read at offset " + hex(offset) + " runs past the end of the file");
        T value = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i)
            value = static_cast<T>(value | (static_cast<T>(static_cast<unsigned char>(bytes_[offset + i])) << (8 * i)));
        return value;
    }
    std::uint8_t u8(std::uint64_t offset) const { return read<std::uint8_t>(offset); }
    std::uint16_t u16(std::uint64_t offset) const { return read<std::uint16_t>(offset); }
    std::uint32_t u32(std::uint64_t offset) const { return read<std::uint32_t>(offset); }
    std::uint64_t u64(std::uint64_t offset) const { return read<std::uint64_t>(offset); }

    // The NUL-terminated string at index inside the string table.
    std::string_view string(const Region& table, std::uint64_t index, const std::string& table_name) const {
        if (index >= table.size)
            throw FormatError("a name points outside " + table_name + " (index " + std::to_string(index) +
                              ", table size " + std::to_string(table.size) + ")");
        const std::uint64_t available = std::min(table.size - index, kMaxNameBytes + 1);
        const std::string_view rest = bytes_.substr(table.offset + index, available);
        const std::size_t end = rest.find('\0');
        if (end == std::string_view::npos)
            throw FormatError(available > kMaxNameBytes
                                  ? "a name in " + table_name + " is longer than " + std::to_string(kMaxNameBytes) +
                                        " bytes"
                                  : "a name in " + table_name + " runs past the end of the table (no NUL)");
        return rest.substr(0, end);
    }

private:
    std::string_view bytes_;
};

struct LoadSegment {
    std::uint64_t vaddr, offset, filesz, memsz;
};

// Maps run-time addresses to file offsets the way the loader's mmap does, file-backed bytes only.
class AddressMap {
public:
    explicit AddressMap(std::vector<LoadSegment> loads) : loads_(std::move(loads)) {}

    // The file offset of address and how many file-backed bytes follow it in its segment.
    Region at(std::uint64_t address, const std::string& what) const {
        for (const LoadSegment& s : loads_)
            if (address >= s.vaddr && address - s.vaddr < s.filesz)
                return {s.offset + (address - s.vaddr), s.filesz - (address - s.vaddr)};
        throw FormatError(what + " (address " + hex(address) +
                          ") is not inside the file contents of any loadable segment");
    }
    Region range(std::uint64_t address, std::uint64_t size, const std::string& what) const {
        const Region start = at(address, what);
        if (size > start.size)
            throw FormatError(what + " (address " + hex(address) + ", " + std::to_string(size) +
                              " bytes) runs past the end of its loadable segment");
        return {start.offset, size};
    }

private:
    std::vector<LoadSegment> loads_;
};

// Everything decode() needs, located by one of the two views.
struct Tables {
    std::vector<std::pair<std::int64_t, std::uint64_t>> dynamic;  // up to, not including, DT_NULL
    Region strtab;
    std::string strtab_name;
    Region symtab;
    std::uint64_t symbol_count = 0;
    std::string symtab_name;
    std::optional<Region> versym;
    std::optional<Region> verneed;  // the bytes the version-needs chain must stay inside
    std::uint64_t verneed_count = 0;
};

struct VersionName {
    std::string version, library;
};

std::unordered_map<std::uint16_t, VersionName> read_version_needs(const Image& image, const Tables& t) {
    std::unordered_map<std::uint16_t, VersionName> versions;
    if (!t.verneed || t.verneed_count == 0) return versions;
    if (t.verneed_count > kMaxVersionNeeds)
        throw FormatError("the version-needs table claims " + std::to_string(t.verneed_count) + " entries");
    const Region& r = *t.verneed;
    std::uint64_t offset = 0, total_aux = 0;
    // Both chains are linked by relative offsets, so a forged file could loop; the counts bound the walk.
    for (std::uint64_t i = 0; i < t.verneed_count; ++i) {
        if (!fits(offset, kVerneedSize, r.size)) throw FormatError("the version-needs chain runs past its table");
        const std::uint64_t at = r.offset + offset;
        const std::uint16_t aux_count = image.u16(at + 2);
        const std::string library(image.string(t.strtab, image.u32(at + 4), t.strtab_name));
        std::uint64_t aux = offset + image.u32(at + 8);
        for (std::uint16_t j = 0; j < aux_count; ++j) {
            if (++total_aux > kMaxVersionNeeds * 16) throw FormatError("the version-needs table is too large");
            if (!fits(aux, kVernauxSize, r.size)) throw FormatError("a version-needs entry runs past its table");
            const std::uint64_t aux_at = r.offset + aux;
            const std::uint16_t index = image.u16(aux_at + 6) & 0x7fff;
            versions[index] = {std::string(image.string(t.strtab, image.u32(aux_at + 8), t.strtab_name)), library};
            const std::uint32_t next = image.u32(aux_at + 12);
            if (next == 0) break;
            aux += next;
        }
        const std::uint32_t next = image.u32(at + 12);
        if (next == 0) break;
        offset += next;
    }
    return versions;
}

DynamicView decode(const Image& image, const Tables& t) {
    DynamicView view;
    std::uint64_t name_bytes = 0;
    auto keep = [&](std::string_view name) {
        name_bytes += name.size();
        if (name_bytes > kMaxTotalNameBytes) throw FormatError("the dynamic tables hold too much name data");
        return std::string(name);
    };

    for (const auto& [tag, value] : t.dynamic) {
        const char* tag_name = tag == kDtNeeded      ? "DT_NEEDED"
                               : tag == kDtAuxiliary ? "DT_AUXILIARY"
                               : tag == kDtFilter    ? "DT_FILTER"
                                                     : nullptr;
        if (tag_name) view.needed.push_back({keep(image.string(t.strtab, value, t.strtab_name)), tag_name});
        if (tag == kDtRpath || tag == kDtRunpath)
            view.search_paths.push_back(std::string(tag == kDtRpath ? "DT_RPATH: " : "DT_RUNPATH: ") +
                                        keep(image.string(t.strtab, value, t.strtab_name)));
    }

    const auto versions = read_version_needs(image, t);
    view.symbol_count = t.symbol_count;
    for (std::uint64_t i = 1; i < t.symbol_count; ++i) {  // entry 0 is the null symbol
        const std::uint64_t at = t.symtab.offset + i * kSymSize;
        const std::uint8_t info = image.u8(at + 4);
        const unsigned bind = info >> 4;
        const unsigned visibility = image.u8(at + 5) & 0x3;
        const std::uint16_t section = image.u16(at + 6);
        if (bind != kStbGlobal && bind != kStbWeak && bind != kStbGnuUnique) continue;
        const std::string_view name = image.string(t.strtab, image.u32(at), t.strtab_name);
        if (name.empty()) continue;
        if (section == 0) {
            ImportedSymbol symbol;
            symbol.name = keep(name);
            symbol.weak = bind == kStbWeak;
            if (t.versym) {
                const std::uint16_t index = image.u16(t.versym->offset + i * 2) & 0x7fff;
                if (const auto found = versions.find(index); index >= 2 && found != versions.end()) {
                    symbol.version = found->second.version;
                    symbol.version_library = found->second.library;
                }
            }
            view.imports.push_back(std::move(symbol));
        } else if (visibility == kStvDefault) {
            view.interposable_exports.push_back(keep(name));
        }
    }
    return view;
}

// Reads dynamic entries from r until DT_NULL; what says where they came from.
std::vector<std::pair<std::int64_t, std::uint64_t>> read_dynamic_array(const Image& image, const Region& r,
                                                                       const std::string& what) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> entries;
    for (std::uint64_t offset = 0;; offset += kDynSize) {
        if (!fits(offset, kDynSize, r.size)) throw FormatError(what + " has no DT_NULL terminator");
        if (entries.size() >= kMaxDynamicEntries)
            throw FormatError(what + " has more than " + std::to_string(kMaxDynamicEntries) + " entries");
        const auto tag = static_cast<std::int64_t>(image.u64(r.offset + offset));
        if (tag == kDtNull) return entries;
        entries.emplace_back(tag, image.u64(r.offset + offset + 8));
    }
}

// ---- The loader's view: PT_DYNAMIC and the tables its entries point at ----------------------------------

// DT_GNU_HASH: symbols below symoffset are not hashed (imports among them); the last hashed symbol is the
// end of the chain that starts at the largest bucket.
std::uint64_t gnu_hash_symbol_count(const Image& image, const AddressMap& map, std::uint64_t address) {
    const Region header = map.range(address, 16, "DT_GNU_HASH");
    const std::uint32_t buckets = image.u32(header.offset), symoffset = image.u32(header.offset + 4);
    const std::uint32_t bloom_words = image.u32(header.offset + 8);
    if (buckets == 0 || buckets > kMaxDynamicSymbols || bloom_words > kMaxDynamicSymbols)
        throw FormatError("DT_GNU_HASH has an impossible size (" + std::to_string(buckets) + " buckets, " +
                          std::to_string(bloom_words) + " bloom words)");
    const Region all = map.at(address, "DT_GNU_HASH");
    const std::uint64_t buckets_at = 16 + std::uint64_t(bloom_words) * 8;
    const std::uint64_t chains_at = buckets_at + std::uint64_t(buckets) * 4;
    if (!fits(0, chains_at, all.size)) throw FormatError("DT_GNU_HASH runs past the end of its loadable segment");
    std::uint32_t last_bucket = 0;
    for (std::uint32_t b = 0; b < buckets; ++b)
        last_bucket = std::max(last_bucket, image.u32(all.offset + buckets_at + 4 * std::uint64_t(b)));
    if (last_bucket == 0) return symoffset;
    if (last_bucket < symoffset) throw FormatError("DT_GNU_HASH has a bucket below its first hashed symbol");
    for (std::uint64_t index = last_bucket; index < kMaxDynamicSymbols; ++index) {
        const std::uint64_t at = chains_at + (index - symoffset) * 4;
        if (!fits(at, 4, all.size)) throw FormatError("a DT_GNU_HASH chain runs past the end of its loadable segment");
        if (image.u32(all.offset + at) & 1) return index + 1;
    }
    throw FormatError("DT_GNU_HASH describes more than " + std::to_string(kMaxDynamicSymbols) + " symbols");
}

// The largest symbol index any relocation refers to (0 if none).
std::uint64_t largest_relocated_symbol(const Image& image, const AddressMap& map,
                                       const std::unordered_map<std::int64_t, std::uint64_t>& d) {
    struct Table {
        std::int64_t address_tag, size_tag;
        std::uint64_t entry_size;
        const char* name;
    };
    const bool plt_is_rela = !d.count(kDtPltRel) || d.at(kDtPltRel) == std::uint64_t(kDtRela);
    const Table tables[] = {{kDtRela, kDtRelaSz, kRelaSize, "DT_RELA"},
                            {kDtRel, kDtRelSz, kRelSize, "DT_REL"},
                            {kDtJmpRel, kDtPltRelSz, plt_is_rela ? kRelaSize : kRelSize, "DT_JMPREL"}};
    std::uint64_t largest = 0, seen = 0;
    for (const Table& table : tables) {
        if (!d.count(table.address_tag)) continue;
        const std::uint64_t bytes = d.count(table.size_tag) ? d.at(table.size_tag) : 0;
        const Region r = map.range(d.at(table.address_tag), bytes, table.name);
        for (std::uint64_t at = 0; fits(at, table.entry_size, r.size); at += table.entry_size) {
            if (++seen > kMaxRelocations)
                throw FormatError("more than " + std::to_string(kMaxRelocations) + " relocations");
            largest = std::max(largest, image.u64(r.offset + at + 8) >> 32);
        }
    }
    return largest;
}

DynamicView read_segment_view(const Image& image, const AddressMap& map, std::uint64_t dynamic_address,
                              std::vector<std::string>& problems) {
    Tables t;
    // The loader reads the dynamic array at its address until DT_NULL, whatever p_filesz says.
    t.dynamic = read_dynamic_array(image, map.at(dynamic_address, "PT_DYNAMIC"), "the dynamic segment");

    std::unordered_map<std::int64_t, std::uint64_t> d;  // the loader keeps the last of a repeated tag
    for (const auto& [tag, value] : t.dynamic) {
        if (tag != kDtNeeded && tag != kDtRpath && tag != kDtRunpath && tag != kDtAuxiliary && tag != kDtFilter &&
            d.count(tag) && d[tag] != value)
            problems.push_back("dynamic tag " + hex(std::uint64_t(tag)) + " appears twice with different values");
        d[tag] = value;
    }
    auto need = [&](std::int64_t tag, const char* name) {
        if (!d.count(tag)) throw FormatError(std::string("the dynamic segment has no ") + name);
        return d.at(tag);
    };
    if (d.count(kDtSymEnt) && d.at(kDtSymEnt) != kSymSize)
        throw FormatError("DT_SYMENT is " + std::to_string(d.at(kDtSymEnt)) + ", not " + std::to_string(kSymSize));
    if (d.count(kDtRelaEnt) && d.at(kDtRelaEnt) != kRelaSize) throw FormatError("DT_RELAENT is not 24");
    if (d.count(kDtRelEnt) && d.at(kDtRelEnt) != kRelSize) throw FormatError("DT_RELENT is not 16");

    t.strtab_name = "DT_STRTAB";
    t.strtab = map.range(need(kDtStrtab, "DT_STRTAB"), need(kDtStrSz, "DT_STRSZ"), "DT_STRTAB");
    t.symtab_name = "DT_SYMTAB";
    const std::uint64_t symtab = need(kDtSymtab, "DT_SYMTAB");

    std::uint64_t count = 0;
    bool counted = false;
    if (d.count(kDtGnuHash))
        count = std::max(count, gnu_hash_symbol_count(image, map, d.at(kDtGnuHash))), counted = true;
    if (d.count(kDtHash)) {
        const Region hash = map.range(d.at(kDtHash), 8, "DT_HASH");
        count = std::max<std::uint64_t>(count, image.u32(hash.offset + 4));
        counted = true;
    }
    // A relocation may name a symbol past what the hash tables cover; the loader binds it all the same.
    const std::uint64_t relocated = largest_relocated_symbol(image, map, d);
    if (relocated > 0) count = std::max(count, relocated + 1);
    if (!counted) problems.push_back("the dynamic segment has neither DT_GNU_HASH nor DT_HASH");
    if (count > kMaxDynamicSymbols)
        throw FormatError("the dynamic symbol table claims " + std::to_string(count) + " symbols (the limit is " +
                          std::to_string(kMaxDynamicSymbols) + ")");
    t.symbol_count = count;
    t.symtab = map.range(symtab, checked_mul(count, kSymSize, "DT_SYMTAB"), "DT_SYMTAB");
    if (d.count(kDtVersym)) t.versym = map.range(d.at(kDtVersym), count * 2, "DT_VERSYM");
    if (d.count(kDtVerneed)) {
        t.verneed = map.at(d.at(kDtVerneed), "DT_VERNEED");
        t.verneed_count = need(kDtVerneedNum, "DT_VERNEEDNUM");
    }
    return decode(image, t);
}

// ---- The section headers' view: .dynamic, .dynsym, .dynstr, .gnu.version, .gnu.version_r ---------------

// How a section is named in messages; its type, since this reader never trusts section names.
std::string section_kind(std::uint32_t type) {
    switch (type) {
        case kShtDynsym:
            return ".dynsym";
        case kShtDynamic:
            return ".dynamic";
        case kShtStrtab:
            return "a string table";
        case kShtGnuVersym:
            return ".gnu.version";
        case kShtGnuVerneed:
            return ".gnu.version_r";
        default:
            return "type " + hex(type);
    }
}

struct Section {
    std::uint32_t type, link, info;
    std::uint64_t offset, size, entsize;
};

std::optional<DynamicView> read_section_view(const Image& image, const std::vector<Section>& sections,
                                             std::vector<std::string>& problems) {
    auto only = [&](std::uint32_t type, const char* name) -> const Section* {
        const Section* found = nullptr;
        for (const Section& s : sections) {
            if (s.type != type) continue;
            if (found) throw FormatError(std::string("more than one ") + name + " section");
            found = &s;
        }
        return found;
    };
    const Section* dynsym = only(kShtDynsym, ".dynsym");
    const Section* dynamic = only(kShtDynamic, ".dynamic");
    if (!dynsym && !dynamic) return std::nullopt;
    if (!dynsym) throw FormatError("there is a .dynamic section but no .dynsym section");
    if (!dynamic) throw FormatError("there is a .dynsym section but no .dynamic section");

    auto string_table = [&](const Section& of, const char* name) {
        if (of.link >= sections.size() || sections[of.link].type != kShtStrtab)
            throw FormatError(std::string(name) + " does not link to a string table");
        return sections[of.link];
    };
    const Section strtab = string_table(*dynsym, ".dynsym");
    if (dynamic->link != dynsym->link) throw FormatError(".dynamic and .dynsym use different string tables");

    Tables t;
    t.strtab_name = ".dynstr";
    t.strtab = {strtab.offset, strtab.size};
    t.symtab_name = ".dynsym";
    if (dynsym->entsize != kSymSize)
        throw FormatError(".dynsym has entries of " + std::to_string(dynsym->entsize) + " bytes, not 24");
    t.symbol_count = dynsym->size / kSymSize;
    if (t.symbol_count > kMaxDynamicSymbols)
        throw FormatError(".dynsym claims " + std::to_string(t.symbol_count) + " symbols (the limit is " +
                          std::to_string(kMaxDynamicSymbols) + ")");
    t.symtab = {dynsym->offset, dynsym->size};
    t.dynamic = read_dynamic_array(image, {dynamic->offset, dynamic->size}, "the .dynamic section");
    if (const Section* versym = only(kShtGnuVersym, ".gnu.version")) {
        if (versym->size < t.symbol_count * 2) throw FormatError(".gnu.version is shorter than .dynsym");
        t.versym = Region{versym->offset, versym->size};
    }
    if (const Section* verneed = only(kShtGnuVerneed, ".gnu.version_r")) {
        if (verneed->link != dynsym->link)
            problems.push_back(".gnu.version_r uses a different string table than .dynsym");
        t.verneed = Region{verneed->offset, verneed->size};
        t.verneed_count = verneed->info;
    }
    return decode(image, t);
}

// The ELF header's fields the tables are found by; read_section_headers may replace the counts with their
// extended values.
struct HeaderFields {
    std::uint64_t phoff = 0, shoff = 0;
    std::uint16_t phentsize = 0, shentsize = 0;
    std::uint64_t phnum = 0, shnum = 0, shstrndx = 0;
};

// The section headers, read first: extended numbering keeps counts in section 0.
std::vector<Section> read_section_headers(const Image& image, HeaderFields& h, bool& has_section_headers) {
    std::vector<Section> sections;
    if (h.shoff != 0 || h.shnum != 0) {
        if (h.shoff == 0)
            throw FormatError("e_shnum is " + std::to_string(h.shnum) + " but there is no section header table");
        if (h.shentsize != kShdrSize)
            throw FormatError("section headers are " + std::to_string(h.shentsize) + " bytes, not 64");
        image.region(h.shoff, kShdrSize, "the section header table");
        if (h.shnum == 0) h.shnum = image.u64(h.shoff + 32);  // extended count in section 0's sh_size
        if (h.shstrndx == kShnXindex) h.shstrndx = image.u32(h.shoff + 40);
        if (h.phnum == kPnXnum) h.phnum = image.u32(h.shoff + 44);  // extended program header count
        if (h.shnum > kMaxSections)
            throw FormatError("the file claims " + std::to_string(h.shnum) + " sections (the limit is " +
                              std::to_string(kMaxSections) + ")");
        image.region(h.shoff, h.shnum * kShdrSize, "the section header table");
        if (h.shstrndx >= h.shnum && h.shstrndx != 0)
            throw FormatError("the section name table index " + std::to_string(h.shstrndx) + " is not a section");
        has_section_headers = h.shnum > 0;
        for (std::uint64_t i = 0; i < h.shnum; ++i) {
            const std::uint64_t at = h.shoff + i * kShdrSize;
            const Section s{image.u32(at + 4),  image.u32(at + 40), image.u32(at + 44),
                            image.u64(at + 24), image.u64(at + 32), image.u64(at + 56)};
            if (i > 0 && s.type != kShtNull && s.type != kShtNobits)
                image.region(s.offset, s.size, "section " + std::to_string(i) + " (" + section_kind(s.type) + ")");
            sections.push_back(s);
        }
    }
    return sections;
}

// Segments that share a page must map the same file bytes to it, or the loader's later mapping replaces
// bytes this reader would have taken from the earlier one.
void check_shared_pages(const std::vector<LoadSegment>& loads) {
    for (std::size_t i = 0; i < loads.size(); ++i)
        for (std::size_t j = i + 1; j < loads.size(); ++j) {
            const LoadSegment &a = loads[i], &b = loads[j];
            auto first_page = [](const LoadSegment& s) { return s.vaddr / kPageSize; };
            auto end_page = [](const LoadSegment& s) {  // vaddr + memsz cannot overflow (checked above)
                const std::uint64_t end = s.vaddr + s.memsz;
                return end / kPageSize + (end % kPageSize != 0);
            };
            const std::uint64_t a_begin = first_page(a), a_end = end_page(a);
            const std::uint64_t b_begin = first_page(b), b_end = end_page(b);
            const bool share = a_begin < b_end && b_begin < a_end;
            if (share && a.vaddr - a.offset != b.vaddr - b.offset)
                throw FormatError("loadable segments " + std::to_string(i) + " and " + std::to_string(j) +
                                  " share a page but map different file bytes to it");
        }
}

// The program headers and the loader's view of the dynamic section.
DynamicView read_loader_view(const Image& image, const HeaderFields& h, std::vector<std::string>& problems) {
    if (h.phnum == 0) throw FormatError("there are no program headers: the object cannot be loaded");
    if (h.phentsize != kPhdrSize)
        throw FormatError("program headers are " + std::to_string(h.phentsize) + " bytes, not 56");
    if (h.phnum > kMaxProgramHeaders)
        throw FormatError("the file claims " + std::to_string(h.phnum) + " program headers");
    image.region(h.phoff, h.phnum * kPhdrSize, "the program header table");
    std::vector<LoadSegment> loads;
    std::optional<std::uint64_t> dynamic_address;
    for (std::uint64_t i = 0; i < h.phnum; ++i) {
        const std::uint64_t at = h.phoff + i * kPhdrSize;
        const std::uint32_t p_type = image.u32(at);
        const LoadSegment s{image.u64(at + 16), image.u64(at + 8), image.u64(at + 32), image.u64(at + 40)};
        if (p_type == kPtLoad) {
            image.region(s.offset, s.filesz, "loadable segment " + std::to_string(loads.size()));
            if (s.filesz > s.memsz) throw FormatError("a loadable segment has more file bytes than memory bytes");
            if (!fits(s.vaddr, s.memsz, std::numeric_limits<std::uint64_t>::max()))
                throw FormatError("a loadable segment wraps around the address space");
            if (loads.size() >= kMaxLoadSegments)
                throw FormatError("more than " + std::to_string(kMaxLoadSegments) + " loadable segments");
            loads.push_back(s);
        } else if (p_type == kPtDynamic) {
            if (dynamic_address) throw FormatError("more than one PT_DYNAMIC program header");
            dynamic_address = s.vaddr;
            image.region(s.offset, s.filesz, "the PT_DYNAMIC segment");
        }
    }
    check_shared_pages(loads);
    if (!dynamic_address)
        throw FormatError("there is no PT_DYNAMIC program header: the object cannot be loaded dynamically");
    const AddressMap map(std::move(loads));
    return read_segment_view(image, map, *dynamic_address, problems);
}

}  // namespace

ElfDynamicReport read_elf_dynamic(std::string_view bytes) {
    ElfDynamicReport report;
    const Image image(bytes);
    auto fail = [&](std::string problem) {
        report.problems.push_back(std::move(problem));
        return report;
    };

    // ---- ELF header ----
    if (bytes.empty()) return fail("the file is empty");
    if (bytes.size() < 4 || bytes.substr(0, 4) != std::string_view("\x7f"
                                                                   "ELF",
                                                                   4))
        return fail("not an ELF file (no \\x7fELF magic at the start)");
    if (bytes.size() < 16) return fail("the ELF identification runs past the end of the file");
    const unsigned elf_class = image.u8(4), data = image.u8(5), version = image.u8(6);
    if (elf_class == 1) return fail("32-bit ELF (ELFCLASS32): a kreg plugin must be a 64-bit shared object");
    if (elf_class != 2) return fail("unknown ELF class " + std::to_string(elf_class));
    if (data == 2) return fail("big-endian ELF (ELFDATA2MSB): a kreg plugin must be little-endian");
    if (data != 1) return fail("unknown ELF data encoding " + std::to_string(data));
    if (version != 1) return fail("unknown ELF version " + std::to_string(version));
    if (bytes.size() < kEhdrSize) return fail("the ELF header runs past the end of the file");
    const std::uint16_t type = image.u16(16);
    if (type != kEtDyn) return fail("not a shared object (e_type " + std::to_string(type) + ", expected ET_DYN = 3)");
    HeaderFields h;
    h.phoff = image.u64(32);
    h.shoff = image.u64(40);
    h.phentsize = image.u16(54);
    h.shentsize = image.u16(58);
    h.phnum = image.u16(56);
    h.shnum = image.u16(60);
    h.shstrndx = image.u16(62);
    report.header_ok = true;

    // ---- Section headers (read first: extended numbering keeps counts in section 0) ----
    std::vector<Section> sections;
    bool sections_ok = true;
    try {
        sections = read_section_headers(image, h, report.has_section_headers);
    } catch (const FormatError& e) {
        report.problems.push_back(e.what());
        sections_ok = false;
        sections.clear();
    }

    // ---- Program headers and the loader's view ----
    try {
        report.segments = read_loader_view(image, h, report.problems);
    } catch (const FormatError& e) {
        report.problems.push_back(e.what());
    }

    // ---- The section headers' view ----
    if (sections_ok && !sections.empty()) {
        try {
            report.sections = read_section_view(image, sections, report.problems);
        } catch (const FormatError& e) {
            report.problems.push_back(e.what());
        }
    }
    return report;
}

}  // namespace kreg::elf
