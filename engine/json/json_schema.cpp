#include "json/json_schema.hpp"

#include "error.hpp"
#include "json/parse.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ctxdb::json {

namespace {

enum TypeBit : unsigned {
  kString = 1,
  kInteger = 2,
  kNumber = 4,
  kBoolean = 8,
  kObject = 16,
  kArray = 32,
  kNull = 64,
};

unsigned type_bit(std::string_view name, std::string_view schema) {
  if (name == "string") return kString;
  if (name == "integer") return kInteger;
  if (name == "number") return kNumber;
  if (name == "boolean") return kBoolean;
  if (name == "object") return kObject;
  if (name == "array") return kArray;
  if (name == "null") return kNull;
  throw Error(Code::kInternal,
              "schema " + std::string(schema) + ": unknown type '" + std::string(name) + "'");
}

bool has_type(unsigned mask, simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
  case T::STRING: return mask & kString;
  case T::INT64: return mask & (kInteger | kNumber);
  // Past int64 (simdjson's UINT64): a number, but no integer ctxdb can
  // store or add; read as one, it would fail deep inside a projection.
  case T::UINT64: return mask & kNumber;
  case T::DOUBLE: return mask & kNumber;
  case T::BOOL: return mask & kBoolean;
  case T::OBJECT: return mask & kObject;
  case T::ARRAY: return mask & kArray;
  case T::NULL_VALUE: return mask & kNull;
  }
  return false;
}

std::string describe_types(unsigned mask) {
  static const std::pair<unsigned, const char *> kNames[] = {
      {kString, "a string"},   {kInteger, "an integer"}, {kNumber, "a number"},
      {kBoolean, "a boolean"}, {kObject, "an object"},   {kArray, "an array"},
      {kNull, "null"}};
  std::string s;
  for (auto [bit, name] : kNames) {
    if (!(mask & bit)) continue;
    if (!s.empty()) s += " or ";
    s += name;
  }
  return s;
}

// Where a value sits in the document, built on the stack as validation
// descends and spelled out ("payload.content[1].type") only for an error.
struct Path {
  const Path *parent = nullptr;
  std::string_view key; // empty for an array item
  size_t index = 0;

  Path child(std::string_view k) const { return Path{this, k, 0}; }
  Path item(size_t i) const { return Path{this, {}, i}; }

  std::string str() const {
    std::string s = parent ? parent->str() : std::string();
    if (!parent) return std::string(key);
    if (key.empty()) return s + "[" + std::to_string(index) + "]";
    return s.empty() ? std::string(key) : s + "." + std::string(key);
  }
};

// How a message names the value at `path` ("field 'payload.text'").
std::string field(const Path &path) {
  std::string s = path.str();
  return s.empty() ? "the input" : "field '" + s + "'";
}

struct Regex {
  pcre2_code *code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

} // namespace

struct Schema::Node {
  unsigned types = 0; // 0: any type
  std::vector<std::string> required;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> properties;
  bool additional = true;
  std::unique_ptr<Node> additional_schema; // what every other property must be
  std::unique_ptr<Node> items;
  std::vector<std::string> enum_values;
  std::optional<int64_t> min_length, max_length;
  std::optional<double> minimum, maximum;
  std::string pattern;
  std::unique_ptr<Regex> regex;

  void validate(simdjson::dom::element e, const Path &path) const;
  void validate_object(simdjson::dom::object o, const Path &path) const;
  void validate_string(std::string_view s, const Path &path) const;
  void validate_number(double v, const Path &path) const;
};

namespace {

double as_double(simdjson::dom::element e) {
  double d = 0;
  if (e.get(d)) return 0;
  return d;
}

// Keywords that describe a schema without constraining a value.
bool is_annotation(std::string_view key) {
  for (std::string_view k :
       {"description", "title", "$schema", "$id", "$comment", "examples", "default"})
    if (key == k) return true;
  return false;
}

std::unique_ptr<Schema::Node> compile(simdjson::dom::element s, std::string_view name) {
  auto bad = [&](const std::string &why) {
    return Error(Code::kInternal, "schema " + std::string(name) + ": " + why);
  };
  simdjson::dom::object obj;
  if (s.get(obj)) throw bad("a schema must be an object");
  auto node = std::make_unique<Schema::Node>();
  for (auto [key, value] : obj) {
    if (key == "type") {
      std::string_view t;
      simdjson::dom::array list;
      if (!value.get(t)) {
        node->types = type_bit(t, name);
      } else if (!value.get(list)) {
        for (auto item : list) {
          if (item.get(t)) throw bad("type lists hold strings");
          node->types |= type_bit(t, name);
        }
      } else {
        throw bad("type must be a string or a list");
      }
    } else if (key == "required") {
      simdjson::dom::array list = value.get_array();
      for (auto item : list) node->required.emplace_back(item.get_string().value());
    } else if (key == "properties") {
      simdjson::dom::object props = value.get_object();
      for (auto [pkey, pvalue] : props)
        node->properties.emplace_back(std::string(pkey), compile(pvalue, name));
    } else if (key == "additionalProperties") {
      if (value.is_object())
        node->additional_schema = compile(value, name);
      else
        node->additional = value.get_bool().value();
    } else if (key == "items") {
      node->items = compile(value, name);
    } else if (key == "enum") {
      simdjson::dom::array list = value.get_array();
      for (auto item : list) node->enum_values.emplace_back(item.get_string().value());
    } else if (key == "minLength") {
      node->min_length = value.get_int64().value();
    } else if (key == "maxLength") {
      node->max_length = value.get_int64().value();
    } else if (key == "minimum") {
      node->minimum = as_double(value);
    } else if (key == "maximum") {
      node->maximum = as_double(value);
    } else if (key == "pattern") {
      node->pattern = std::string(value.get_string().value());
      int err = 0;
      PCRE2_SIZE offset = 0;
      node->regex = std::make_unique<Regex>();
      node->regex->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(node->pattern.data()),
                                        node->pattern.size(), PCRE2_UTF, &err, &offset, nullptr);
      if (!node->regex->code) throw bad("bad pattern " + node->pattern);
      pcre2_jit_compile(node->regex->code, PCRE2_JIT_COMPLETE);
    } else if (!is_annotation(key)) {
      // A keyword this subset does not enforce would silently drop its
      // rule (an exclusiveMinimum would bound nothing), so it is refused.
      throw bad("unsupported keyword '" + std::string(key) + "'");
    }
  }
  return node;
}

} // namespace

void Schema::Node::validate(simdjson::dom::element e, const Path &path) const {
  if (types && !has_type(types, e))
    throw Error(Code::kInvalidArg, field(path) + " must be " + describe_types(types) + ", not " +
                                       (e.is_null() ? "null" : type_name(e)));
  simdjson::dom::object o;
  simdjson::dom::array a;
  std::string_view s;
  if (!e.get(o)) {
    validate_object(o, path);
  } else if (!e.get(a)) {
    if (!items) return;
    size_t i = 0;
    for (auto item : a) items->validate(item, path.item(i++));
  } else if (!e.get(s)) {
    validate_string(s, path);
  } else if (e.is_number()) {
    validate_number(as_double(e), path);
  }
}

void Schema::Node::validate_object(simdjson::dom::object o, const Path &path) const {
  for (const auto &name : required) {
    if (o.at_key(name).error())
      throw Error(Code::kInvalidArg, "missing required field '" + path.child(name).str() + "'");
  }
  for (auto [key, value] : o) {
    const Node *child = nullptr;
    for (const auto &[pname, pnode] : properties)
      if (pname == key) child = pnode.get();
    if (child) {
      child->validate(value, path.child(key));
    } else if (additional_schema) {
      additional_schema->validate(value, path.child(key));
    } else if (!additional) {
      std::string allowed;
      for (const auto &p : properties) allowed += (allowed.empty() ? "" : ", ") + p.first;
      throw Error(Code::kInvalidArg,
                  "unknown field '" + path.child(key).str() + "' (allowed: " + allowed + ")");
    }
  }
}

void Schema::Node::validate_string(std::string_view s, const Path &path) const {
  if (!enum_values.empty() &&
      std::find(enum_values.begin(), enum_values.end(), s) == enum_values.end()) {
    std::string allowed; // built only for the error: this runs for every value checked
    for (const auto &v : enum_values) allowed += (allowed.empty() ? "" : ", ") + v;
    throw Error(Code::kInvalidArg, field(path) + " must be one of " + allowed + " (got \"" +
                                       std::string(s.substr(0, 64)) + "\")");
  }
  if (min_length || max_length) {
    // Lengths count code points, as JSON Schema does.
    int64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    if (min_length && n < *min_length)
      throw Error(Code::kInvalidArg, field(path) + " must be at least " +
                                         std::to_string(*min_length) + " characters long");
    if (max_length && n > *max_length)
      throw Error(Code::kInvalidArg, field(path) + " must be at most " +
                                         std::to_string(*max_length) + " characters long");
  }
  if (regex) {
    // Schemas are shared between threads; the match data is per thread.
    // One pair of offsets is all a yes/no match needs.
    struct MatchData {
      pcre2_match_data *md = pcre2_match_data_create(1, nullptr);
      ~MatchData() { pcre2_match_data_free(md); }
    };
    thread_local MatchData match;
    if (!match.md) throw std::bad_alloc();
    int rc = pcre2_match(regex->code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0,
                         match.md, nullptr);
    if (rc < 0)
      throw Error(Code::kInvalidArg,
                  field(path) + " has an invalid " + "format (must match " + pattern + ")");
  }
}

void Schema::Node::validate_number(double v, const Path &path) const {
  auto show = [](double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (minimum && v < *minimum)
    throw Error(Code::kInvalidArg, field(path) + " must be >= " + show(*minimum));
  if (maximum && v > *maximum)
    throw Error(Code::kInvalidArg, field(path) + " must be <= " + show(*maximum));
}

Schema Schema::parse(std::string_view schema_json, std::string_view name) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(schema_json.data(), schema_json.size()).get(doc))
    throw Error(Code::kInternal, "schema " + std::string(name) + " is not valid JSON");
  Schema s;
  try {
    s.root_ = compile(doc, name);
  } catch (const simdjson::simdjson_error &e) {
    throw Error(Code::kInternal, "schema " + std::string(name) + " is malformed: " + e.what());
  }
  return s;
}

void Schema::validate(simdjson::dom::element value, std::string_view root) const {
  root_->validate(value, Path{nullptr, root, 0});
}

} // namespace ctxdb::json
