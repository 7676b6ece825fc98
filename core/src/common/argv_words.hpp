// Words of a command line as a list of strings: the values of an option (--NAME VALUE and --NAME=VALUE),
// whether it occurs, and the list without it. For commands that pass most of their words on to another
// command line (runner submit, runner grade --slurm) and so cannot parse them all.
#pragma once

#include <string>
#include <vector>

namespace kreg {

// The value of every --NAME VALUE / --NAME=VALUE in args, in order.
std::vector<std::string> option_values(const std::vector<std::string>& args, const std::string& name);
// Whether --NAME or --NAME=... occurs in args.
bool has_option(const std::vector<std::string>& args, const std::string& name);
// args without every --NAME VALUE / --NAME=VALUE (or the flag --NAME when takes_value is false).
std::vector<std::string> without_option(const std::vector<std::string>& args, const std::string& name,
                                        bool takes_value);

}  // namespace kreg
