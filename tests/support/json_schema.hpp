// A validator for the subset of JSON Schema draft-07 that configs/schema/report.schema.json uses.
// Debian has no C++ JSON-schema validator among the packages kreg uses, and python3-jsonschema is not
// installed on the build machines, so the tests carry this one. It refuses a keyword it does not
// implement (so the schema cannot silently ask for a check nobody makes):
//   type (a name or a list; "integer" is a number with no fraction), enum, properties, required,
//   additionalProperties (false or a schema), propertyNames, items (one schema), minItems, maxItems,
//   minimum, oneOf, $ref ("#/definitions/NAME"), and the annotations $schema, $id, title, description,
//   definitions.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kreg::test {

class JsonSchema {
public:
    explicit JsonSchema(nlohmann::json schema) : root_(std::move(schema)) {}

    static JsonSchema load(const std::string& path) {
        std::ifstream in(path);
        if (!in) throw std::runtime_error("cannot open schema " + path);
        return JsonSchema(nlohmann::json::parse(in));
    }

    // Every violation, as "JSON path: what", in document order; empty when doc is valid.
    std::vector<std::string> validate(const nlohmann::json& doc) const {
        std::vector<std::string> errors;
        check(root_, doc, "", errors);
        return errors;
    }

private:
    nlohmann::json root_;

    static bool has_type(const std::string& type, const nlohmann::json& v) {
        if (type == "object") return v.is_object();
        if (type == "array") return v.is_array();
        if (type == "string") return v.is_string();
        if (type == "boolean") return v.is_boolean();
        if (type == "null") return v.is_null();
        if (type == "number") return v.is_number();
        if (type == "integer")
            return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
        throw std::runtime_error("schema: unknown type '" + type + "'");
    }

    const nlohmann::json& resolve(const std::string& ref) const {
        const std::string prefix = "#/definitions/";
        if (ref.rfind(prefix, 0) != 0) throw std::runtime_error("schema: unsupported $ref '" + ref + "'");
        return root_.at("definitions").at(ref.substr(prefix.size()));
    }

    void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
               std::vector<std::string>& errors) const {
        const std::string where = path.empty() ? "/" : path;
        for (const auto& [key, rule] : s.items()) {
            if (key == "$schema" || key == "$id" || key == "title" || key == "description" || key == "definitions")
                continue;
            if (key == "$ref") {
                check(resolve(rule.get<std::string>()), v, path, errors);
            } else if (key == "type") {
                bool ok = false;
                if (rule.is_string())
                    ok = has_type(rule.get<std::string>(), v);
                else
                    for (const auto& t : rule) ok = ok || has_type(t.get<std::string>(), v);
                if (!ok) errors.push_back(where + ": type must be " + rule.dump() + ", got " + v.type_name());
            } else if (key == "enum") {
                bool ok = false;
                for (const auto& option : rule) ok = ok || option == v;
                if (!ok) errors.push_back(where + ": " + v.dump() + " is not one of " + rule.dump());
            } else if (key == "required") {
                if (v.is_object())
                    for (const auto& name : rule)
                        if (!v.contains(name.get<std::string>()))
                            errors.push_back(where + ": missing required '" + name.get<std::string>() + "'");
            } else if (key == "properties") {
                if (v.is_object())
                    for (const auto& [name, sub] : rule.items())
                        if (v.contains(name)) check(sub, v[name], path + "/" + name, errors);
            } else if (key == "additionalProperties") {
                if (!v.is_object()) continue;
                const nlohmann::json props = s.value("properties", nlohmann::json::object());
                for (const auto& [name, value] : v.items()) {
                    if (props.contains(name)) continue;
                    if (rule.is_boolean()) {
                        if (!rule.get<bool>()) errors.push_back(path + "/" + name + ": unknown field");
                    } else {
                        check(rule, value, path + "/" + name, errors);
                    }
                }
            } else if (key == "propertyNames") {
                if (v.is_object())
                    for (const auto& [name, value] : v.items())
                        check(rule, nlohmann::json(name), path + "/" + name + " (name)", errors);
            } else if (key == "items") {
                if (v.is_array())
                    for (size_t i = 0; i < v.size(); ++i) check(rule, v[i], path + "/" + std::to_string(i), errors);
            } else if (key == "minItems") {
                if (v.is_array() && v.size() < rule.get<size_t>())
                    errors.push_back(where + ": fewer than " + rule.dump() + " items");
            } else if (key == "maxItems") {
                if (v.is_array() && v.size() > rule.get<size_t>())
                    errors.push_back(where + ": more than " + rule.dump() + " items");
            } else if (key == "minimum") {
                if (v.is_number() && v.get<double>() < rule.get<double>())
                    errors.push_back(where + ": " + v.dump() + " < " + rule.dump());
            } else if (key == "oneOf") {
                int matches = 0;
                for (const auto& option : rule) {
                    std::vector<std::string> sub;
                    check(option, v, path, sub);
                    matches += sub.empty() ? 1 : 0;
                }
                if (matches != 1)
                    errors.push_back(where + ": matches " + std::to_string(matches) +
                                     " of oneOf's schemas, not exactly 1");
            } else {
                throw std::runtime_error("schema keyword '" + key +
                                         "' is not implemented by tests/support/json_schema.hpp");
            }
        }
    }
};

}  // namespace kreg::test
